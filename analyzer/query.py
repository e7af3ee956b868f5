"""Small, columnar-first helpers for rules: filter in Arrow, then hand a rule
the handful of rows it needs as dicts."""

from __future__ import annotations

import ast
import datetime as dt
import json
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from .findings import Evidence, ts_key
from .ingest.templates import PROGRESS_KINDS as PROGRESS_KINDS  # rules read it from here
from .tables import JobTables, datetimes

Row = dict[str, Any]


def _rows(table: pa.Table) -> list[Row]:
    names = table.column_names
    if "ts" in names and table.num_rows > 8:
        # Times converted apart (tables.datetimes: pyarrow's own conversion of
        # zone-aware times is most of a row's cost), each put back in its place.
        i = names.index("ts")
        ts = datetimes(table["ts"])
        rows: list[Row] = table.set_column(i, "ts", pa.nulls(table.num_rows)).to_pylist()
        for r, t in zip(rows, ts, strict=True):
            r["ts"] = t
            r["fields"] = dict(r["fields"] or ())
        return rows
    rows = table.to_pylist()
    for r in rows:
        r["fields"] = dict(r["fields"] or ())
    return rows


# Up to this many events, the index of recognised events is built whole.
WHOLE_INDEX_ROWS = 20_000
_ALL_BUILT = "\0all"


def _kinds_index(tables: JobTables, kinds: Iterable[str | None]) -> dict[str | None, list[Row]]:
    """The recognised events of ``kinds`` as rows, by kind. Each kind is
    turned into rows once per set of tables, when a rule first asks for it
    (rules ask for a few kinds, many times; most kinds are never asked for)."""
    ev = tables.events
    memo = tables.memo.get("by_kind")
    if not (isinstance(memo, tuple) and memo[0] is ev):  # a table replaced (clock alignment) is indexed anew
        memo = (ev, {})
        tables.memo["by_kind"] = memo
    built: dict[str | None, list[Row]] = memo[1]
    if not built and ev.num_rows <= WHOLE_INDEX_ROWS:
        # A small job: every recognised event at once costs less than a filter a kind.
        for r in _rows(ev.filter(pc.is_valid(ev["kind"]))):
            built.setdefault(r["kind"], []).append(r)
        built[_ALL_BUILT] = []
    missing = [k for k in kinds if k not in built and _ALL_BUILT not in built]
    if missing:
        for k in missing:
            built[k] = []
        for r in _rows(ev.filter(pc.is_in(pc.cast(ev["kind"], pa.string()), pa.array(missing, pa.string())))):
            built[r["kind"]].append(r)
    return built


def _of_worker(tables: JobTables, kind: str, worker: str) -> list[Row]:
    """The rows of one kind and one worker (indexed once per kind)."""
    per: dict[str, Any] = tables.memo.setdefault("by_kind_worker", {})  # type: ignore[assignment]
    ev = tables.events
    if per.get("events") is not ev:
        per.clear()
        per["events"] = ev
    by_worker: dict[str, list[Row]] | None = per.get(kind)
    if by_worker is None:
        by_worker = per[kind] = {}
        for r in _kinds_index(tables, [kind]).get(kind, ()):
            by_worker.setdefault(r["worker"], []).append(r)
    return by_worker.get(worker, [])


def records(tables: JobTables, kinds: Iterable[str], worker: str | None = None) -> list[Row]:
    """Events of the given kinds (optionally of one worker), in time order.
    The rows are the caller's own (copies): changing one changes no other."""
    wanted = list(dict.fromkeys(kinds))
    if worker is None:
        index = _kinds_index(tables, wanted)
        rows = [r for k in wanted for r in index.get(k, ())]
    else:
        rows = [r for k in wanted for r in _of_worker(tables, k, worker)]
    return sorted(({**r, "fields": dict(r["fields"])} for r in rows), key=time_key)


def records_matching(tables: JobTables, kinds: Iterable[str], pattern: str) -> list[Row]:
    """Events of these kinds whose text matches ``pattern`` (RE2 syntax), in
    time order: filtered in Arrow, so only the matching ones become rows."""
    ev = tables.events
    mask = pc.and_(
        pc.is_in(pc.cast(ev["kind"], pa.string()), pa.array(list(dict.fromkeys(kinds)), pa.string())),
        pc.match_substring_regex(pc.cast(ev["text"], pa.string()), pattern),
    )
    return sorted(_rows(ev.filter(pc.fill_null(mask, False))), key=time_key)


def records_where(tables: JobTables, kinds: Iterable[str], mask: Any) -> list[Row]:
    """Events of these kinds where ``mask`` (a boolean column over the events
    table; null is false) holds, in time order: filtered in Arrow, so only
    those become rows."""
    ev = tables.events
    of_kind = pc.is_in(pc.cast(ev["kind"], pa.string()), pa.array(list(dict.fromkeys(kinds)), pa.string()))
    return sorted(_rows(ev.filter(pc.fill_null(pc.and_(of_kind, mask), False))), key=time_key)


def has_records(tables: JobTables, kinds: Iterable[str], worker: str | None = None) -> bool:
    """Whether there is any event of these kinds (of one worker): no copies made."""
    ev = tables.events
    mask = pc.is_in(pc.cast(ev["kind"], pa.string()), pa.array(list(dict.fromkeys(kinds)), pa.string()))
    if worker is not None:
        mask = pc.and_(mask, pc.equal(pc.cast(ev["worker"], pa.string()), worker))
    return bool(pc.any(mask).as_py())


def event_row(tables: JobTables, i: int) -> Row:
    """Row ``i`` of the events table."""
    return _rows(tables.events.slice(i, 1))[0]


def tracebacks_with(tables: JobTables, tf_kinds: Iterable[str]) -> list[Row]:
    """Python tracebacks whose exception carries one of these TF templates."""
    wanted = set(tf_kinds)
    return [r for r in records(tables, ["py.traceback"]) if r["fields"].get("tf_kind") in wanted]


def error_records(tables: JobTables, worker: str | None = None) -> list[Row]:
    """Records printed at error or fatal level that are not known to be harmless."""
    ev = tables.events
    mask = pc.and_(
        pc.is_in(pc.cast(ev["severity"], pa.string()), pa.array(["error", "fatal"])),
        pc.invert(ev["benign"]),
    )
    if worker is not None:
        mask = pc.and_(mask, pc.equal(pc.cast(ev["worker"], pa.string()), worker))
    return sorted(_rows(ev.filter(mask)), key=time_key)


def last_records(tables: JobTables, worker: str, n: int) -> list[Row]:
    """A worker's last ``n`` records, in file order: its last words."""
    ev = tables.events
    mine = ev.filter(pc.equal(pc.cast(ev["worker"], pa.string()), worker))
    start = max(0, mine.num_rows - n)
    return _rows(mine.slice(start))


def workers(tables: JobTables) -> dict[str, Row]:
    """The workers table as rows, by worker (converted once per table; the
    caller gets its own copies)."""
    memo = tables.memo.get("workers")
    if not (isinstance(memo, tuple) and memo[0] is tables.workers):
        memo = (tables.workers, {r["worker"]: r for r in tables.workers.to_pylist()})
        tables.memo["workers"] = memo
    return {w: dict(r) for w, r in memo[1].items()}


def time_key(row: Row) -> tuple[tuple[bool, dt.datetime], str, int]:
    return (ts_key(row["ts"]), row["source"], row["line"])


def evidence(row: Row, role: str = "") -> Evidence:
    return Evidence(row["worker"], row["source"], row["line"], row["end_line"], row["ts"], row["text"], role)


def env_evidence(row: Row, text: str, role: str = "") -> Evidence:
    """A fact of the env table as evidence (line 0: the fact spans the file)."""
    line = row["line"] or 0
    return Evidence(row["worker"], row["source"], line, line, None, text, role)


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return f"{n:.2f} PiB"


_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50}


def parse_bytes(text: str | None) -> int | None:
    """``23.54GiB`` / ``4.00 TiB`` / ``320.0KiB`` → bytes."""
    if not text:
        return None
    t = text.strip().replace(" ", "")
    for unit in sorted(_UNITS, key=len, reverse=True):
        if t.endswith(unit):
            try:
                return int(float(t[: -len(unit)]) * _UNITS[unit])
            except ValueError:
                return None
    return int(t) if t.isdigit() else None


def env_rows(tables: JobTables, kinds: Iterable[str] = (), worker: str | None = None) -> list[Row]:
    """Rows of the env table (of these kinds; of one worker), in table order."""
    env = tables.env
    if env is None or env.num_rows == 0:
        return []
    rows: list[Row] = env.to_pylist()
    wanted = set(kinds)
    return [
        r for r in rows if (not wanted or r["kind"] in wanted) and (worker is None or r["worker"] == worker)
    ]


def cluster_views(tables: JobTables) -> dict[str, tuple[dict[str, list[str]], Evidence]]:
    """Each worker's own view of the cluster, from its TF_CONFIG (a dump in its
    log, a TF_CONFIG file or env dump beside it) or MWMS's ``cluster_spec`` INFO
    line: worker -> ({job: [addresses]}, where it was read)."""
    views: dict[str, tuple[dict[str, list[str]], Evidence]] = {}
    for r in env_rows(tables, ["tf_config"]):
        key = str(r["key"])
        if not key.startswith("TF_CONFIG.cluster.") or str(r["worker"]).startswith("?"):
            continue
        try:
            addresses = [str(a) for a in json.loads(r["value"])]
        except (ValueError, TypeError):
            continue
        spec, ev = views.get(r["worker"], ({}, None))
        spec.setdefault(key.rsplit(".", 1)[1], addresses)
        ev = ev or env_evidence(r, f"TF_CONFIG {key}={r['value']}", "its TF_CONFIG")
        views[r["worker"]] = (spec, ev)
    for row in records(tables, ["mwms.cluster_spec"]):
        if row["worker"] in views:
            continue
        try:
            raw = ast.literal_eval(row["fields"].get("cluster_spec", ""))
            spec = {str(k): [str(a) for a in v] for k, v in raw.items()}
        except (ValueError, SyntaxError, AttributeError, TypeError):
            continue
        views[row["worker"]] = (spec, evidence(row, "its cluster spec"))
    return views


def rpc_rows(tables: JobTables) -> list[Row]:
    """The rpc table as rows (empty when there is none)."""
    if tables.rpc is None:
        return []
    rows: list[Row] = tables.rpc.to_pylist()
    return rows


# TensorFlow's DataType enum (types.proto), as collective errors print it.
TF_DTYPES = {1: "float32", 2: "float64", 3: "int32", 9: "int64", 10: "bool", 14: "bfloat16", 19: "float16"}
_FLOATS = {1, 2, 14, 19}


@dataclass
class CollectiveMismatch:
    instance: str
    odd: list[str]  # the member(s) whose tensor differs from the others'
    what: str
    reports: list[Row]
    confidence: float
    looks_like_data_end: bool  # an int64 member among float ones: the input pipeline's end-of-data reduce


def collective_mismatches(tables: JobTables) -> CollectiveMismatch | None:
    """The first collective whose members disagree on shape or type, and who disagrees.

    TF names, in each report, the member that arrived with parameters
    different from the first one registered: for a shape, the device named
    with its shape; for a type, the reporter brought the ``got`` type and
    the first registrant the ``expected`` one."""
    reports = records(tables, ["collective.shape_mismatch", "collective.type_mismatch"])
    reports += tracebacks_with(tables, ["collective.shape_mismatch", "collective.type_mismatch"])
    reports = sorted(reports, key=time_key)
    if not reports:
        return None
    first = reports[0]
    instance = first["fields"].get("instance", "?")
    same = [
        r
        for r in reports
        if r["fields"].get("instance", "?") == instance
        and (r["fields"].get("tf_kind") or r["kind"]) == (first["fields"].get("tf_kind") or first["kind"])
    ]
    members = [w for w, r in workers(tables).items() if r["has_log"] and not w.startswith("?")]
    if (first["fields"].get("tf_kind") or first["kind"]) == "collective.shape_mismatch":
        named = {r["fields"].get("task") for r in same if r["fields"].get("task")}
        f = first["fields"]
        if not f.get("shape") and not f.get("other_shape"):
            got, want = f.get("got_shape"), f.get("expected_shape")
            what = f"output shape [{got}] where [{want}] was expected" if got else "shapes that differ"
            return CollectiveMismatch(instance, sorted({first["worker"]}), what, same, 0.5, False)
        if len(named) == 1:
            odd, conf = sorted(named), 0.8
            what = f"shape [{f.get('shape')}] where the others had [{f.get('other_shape')}]"
        else:
            rest = [w for w in members if w not in named]
            odd, conf = (rest, 0.7) if len(rest) == 1 else (sorted(named), 0.5)
            what = f"shape [{f.get('other_shape')}] where the others had [{f.get('shape')}]"
        return CollectiveMismatch(instance, odd, what, same, conf, False)
    f = first["fields"]
    expected, got = int(f.get("expected_dtype", "0")), int(f.get("dtype", "0"))
    by_site = _odd_by_code_site(tables)
    if by_site:
        odd, conf = by_site, 0.8
    else:
        # Without code sites: the members that did not report brought the
        # expected type, when they are the few (TF resolves on the group
        # leader, so sometimes only the leader reports: then we cannot tell).
        reporters = {r["worker"] for r in same}
        silent = [w for w in members if w not in reporters]
        odd, conf = (silent, 0.6) if silent and len(silent) < len(members) / 2 else (sorted(reporters), 0.4)
    a, b = TF_DTYPES.get(expected, str(expected)), TF_DTYPES.get(got, str(got))
    what = f"data types {a} and {b} in one all-reduce"
    # The input pipeline's end-of-data all-reduce is int64; gradients are float.
    data_end = 9 in (expected, got) and bool({expected, got} & _FLOATS) and conf >= 0.6
    return CollectiveMismatch(instance, odd, what, same, conf, data_end)


def _odd_by_code_site(tables: JobTables) -> list[str]:
    """The members whose failing collective was created at another code site
    than the others' (``Detected at node ... defined at``): they were running
    a different collective. Empty when the sites do not single anyone out."""
    sites: dict[str, str] = {}
    for r in records(tables, ["py.traceback"]):
        site = r["fields"].get("node_site")
        if site and r["fields"].get("tf_kind", "").startswith("collective."):
            sites.setdefault(r["worker"], site)
    if len(sites) < 3 or len(set(sites.values())) != 2:
        return []
    by_site: dict[str, list[str]] = {}
    for w, site in sites.items():
        by_site.setdefault(site, []).append(w)
    few = min(by_site.values(), key=len)
    return sorted(few) if len(few) < len(sites) - len(few) else []


def trace_rows(tables: JobTables, kinds: Iterable[str]) -> list[Row]:
    """Profiler events of these ``args.kind`` values (step, collective, iterator ...)."""
    te = tables.trace_events
    if te is None or te.num_rows == 0:
        return []
    wanted = set(kinds)
    rows = []
    for r in te.to_pylist():
        r["args"] = dict(r["args"] or ())
        if r["args"].get("kind") in wanted:
            rows.append(r)
    return rows


# What a message's variable parts look like: masked so that one message
# printed with different numbers, tasks, addresses or paths counts as one.
# The same patterns in Python's re (ASCII classes) and in RE2 (pyarrow), so a
# message masked one by one and a column masked at once read the same.
_MASK_PATTERNS = (
    (r"/job:\w+/replica:\d+/task:\d+(?:/device:\w+:\d+)?", "<task>"),
    (r"\b(?:ipv[46]:)?\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?", "<addr>"),
    (r"(?:/[\w.@+-]+){2,}/?", "<path>"),
    (r"(?i)\b0x[0-9a-f]+\b", "<hex>"),
    (r"\d+(?:\.\d+)?", "<n>"),
)
_MASKS = tuple((re.compile(p, re.ASCII), mask) for p, mask in _MASK_PATTERNS)


def mask_message(text: str) -> str:
    """A record's first line with its variable parts masked: one message printed
    with different numbers, tasks, addresses or paths is one template."""
    first = _first_line(text)
    for pattern, mask in _MASKS:
        first = pattern.sub(mask, first)
    return first[:240]


def _first_line(text: str) -> str:
    stripped = text.strip()
    return stripped.split("\n", 1)[0].rstrip("\r") if stripped else ""


def mask_column(texts: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """``mask_message`` of every text of a column at once (RE2 in Arrow)."""
    first = pc.replace_substring_regex(
        pc.utf8_trim_whitespace(pc.cast(texts, pa.string())), r"[\r]?\n(?s:.*)", ""
    )
    for pattern, mask in _MASK_PATTERNS:
        first = pc.replace_substring_regex(first, pattern, mask)
    return pc.utf8_slice_codeunits(first, 0, 240)


def first_reports(tables: JobTables, kinds: Iterable[str]) -> dict[str, Row]:
    """Each worker's earliest record of these templates, counting Python
    tracebacks that end in one of them: worker -> row, earliest worker first."""
    kinds = list(kinds)
    rows = sorted(records(tables, kinds) + tracebacks_with(tables, kinds), key=time_key)
    out: dict[str, Row] = {}
    for row in rows:
        out.setdefault(row["worker"], row)
    return out


def loop_ended_before_stall(tables: JobTables) -> tuple[Row, Row, list[str]] | None:
    """(a worker's end of its training loop, the collective stall after it,
    the ranks the stall names as missing) when a worker's training loop ended
    (an Estimator's "Loss for final step") before a collective stalled for
    ranks that never submitted (Horovod's "subset of ranks ... waiting for
    remainder of ranks"): the ranks that left were not there to reduce, which
    is uneven input, not members disagreeing on tensors. None otherwise."""
    stalls = [
        r
        for r in records(tables, ["collective.rank_mismatch"])
        if "subset of ranks" in r["text"] or "missing ranks" in r["text"]
    ]
    ended = records(tables, ["train.loop_ended"])
    if not stalls or not ended:
        return None
    stall = stalls[0]

    def before(a: Row, b: Row) -> bool:
        if a["source"] == b["source"]:
            return bool(a["line"] < b["line"])
        return a["ts"] is not None and b["ts"] is not None and a["ts"] <= b["ts"]

    first = next((r for r in ended if before(r, stall)), None)
    if first is None:
        return None
    named = pc.extract_regex(
        pc.cast(tables.events["text"], pa.string()), r"missing ranks: (?P<ranks>[\d, ]+)"
    )
    ranks: dict[str, None] = {}
    for found in named.drop_null().to_pylist():
        for rank in found["ranks"].replace(",", " ").split():
            ranks.setdefault(rank, None)
    return first, stall, list(ranks)


def last_seen(tables: JobTables, worker: str, ts_kind: str) -> dt.datetime | None:
    """A worker's last time read the same way as ``ts_kind`` (absl epoch, python
    logging ...). Comparing like with like: a script's naive local-time logging
    next to TF's UTC epoch would otherwise make a dead worker look alive."""
    ev = tables.events
    mask = pc.and_(
        pc.equal(pc.cast(ev["worker"], pa.string()), worker),
        pc.equal(pc.cast(ev["ts_kind"], pa.string()), ts_kind),
    )
    value = pc.max(ev.filter(mask)["ts"]).as_py()
    return value if isinstance(value, dt.datetime) else None


def ts_kind_at(tables: JobTables, source: str, line: int) -> str | None:
    """How the time of the record at ``source:line`` was read."""
    ev = tables.events
    mask = pc.and_(pc.equal(pc.cast(ev["source"], pa.string()), source), pc.equal(ev["line"], line))
    kinds = pc.cast(ev.filter(mask)["ts_kind"], pa.string()).to_pylist()
    return kinds[0] if kinds else None


def progress_after(tables: JobTables, row: Row) -> bool:
    """Whether the worker of ``row`` made training progress after it (a
    later step, loss or epoch line in the same file, or later in time)."""
    ev = tables.events
    mine = ev.filter(
        pc.and_(
            pc.equal(pc.cast(ev["worker"], pa.string()), row["worker"]),
            pc.is_in(pc.cast(ev["kind"], pa.string()), pa.array(list(PROGRESS_KINDS), pa.string())),
        )
    )
    for r in mine.select(["source", "line", "ts"]).to_pylist():
        if r["source"] == row["source"]:
            if r["line"] > row["end_line"]:
                return True
        elif r["ts"] is not None and row["ts"] is not None and r["ts"] > row["ts"]:
            return True
    return False


@dataclass(frozen=True)
class _ProgressColumns:
    """Every progress record of the job as plain columns (events-table order):
    what ``finished_at`` and ``last_progress`` read, without turning tens of
    thousands of kept progress records into row dicts."""

    idx: list[int]
    worker: list[str]
    source: list[str]
    line: list[int]
    kind: list[str]
    ts: list[dt.datetime | None]
    epoch: list[str | None]
    epochs: list[str | None]
    step: list[str | None]
    steps: list[str | None]


def _progress_columns(tables: JobTables) -> _ProgressColumns:
    memo = tables.memo.get("progress_columns")
    if isinstance(memo, tuple) and memo[0] is tables.events:
        return memo[1]  # type: ignore[no-any-return]
    ev = tables.events
    mask = pc.fill_null(pc.is_in(pc.cast(ev["kind"], pa.string()), pa.array(list(PROGRESS_KINDS))), False)
    idx = pc.indices_nonzero(mask)
    prog = ev.take(idx)

    def field(key: str) -> list[str | None]:
        if prog.num_rows == 0:
            return []
        return pc.map_lookup(prog["fields"], key, "first").to_pylist()  # type: ignore[no-any-return]

    cols = _ProgressColumns(
        idx=idx.to_pylist(),
        worker=pc.cast(prog["worker"], pa.string()).to_pylist(),
        source=pc.cast(prog["source"], pa.string()).to_pylist(),
        line=prog["line"].to_pylist(),
        kind=pc.cast(prog["kind"], pa.string()).to_pylist(),
        ts=datetimes(prog["ts"]),
        epoch=field("epoch"),
        epochs=field("epochs"),
        step=field("step"),
        steps=field("steps"),
    )
    tables.memo["progress_columns"] = (ev, cols)
    return cols


def finished_at(tables: JobTables) -> dict[str, dt.datetime | None]:
    """Workers that completed their training -> when (their last timed
    progress; None when their progress lines carry no time).

    Completed: the worker's *last* progress says so (training that starts
    again after a completion did not complete): the end line of its last Keras
    epoch (``Epoch N/N``), a script's line that reaches its stated total
    (``epoch 10/10``; ``step 500/500`` with no epoch or in the last epoch);
    or its Keras input ran out and it then ended cleanly; or it exited 0
    after any progress. What such a worker or its peers print about each
    other afterwards (a leader that exited first, connections refused,
    heartbeats lost) is shutdown noise, exit codes recorded or not."""
    memo = tables.memo.get("finished_at")
    if isinstance(memo, tuple) and memo[0] is tables.events:  # the engine and several rules ask
        return memo[1]  # type: ignore[no-any-return]
    wk = workers(tables)
    cols = _progress_columns(tables)
    mine: dict[str, list[int]] = {}
    for j, w in enumerate(cols.worker):
        mine.setdefault(w, []).append(j)
    out: dict[str, dt.datetime | None] = {}
    for w, row in wk.items():
        js = mine.get(w)
        if not js:
            continue
        js.sort(key=lambda j: (cols.source[j], cols.line[j]))
        # The file with the most progress lines tells how training went (the
        # first of them by name when two have as many).
        counts = Counter(cols.source[j] for j in js)
        main = max(counts, key=lambda src: counts[src])
        js = [j for j in js if cols.source[j] == main]
        done = row["exit_code"] == 0 or _completes(cols, js)
        # Keras stops a worker whose input ended, and it exits cleanly: it
        # finished early, it did not die (DA002 says why it was early).
        ended = records(tables, ["keras.input_exhausted"], w)
        done = done or bool(ended and not error_records_after(tables, ended[0]))
        if done:
            timed = [t for j in js if (t := cols.ts[j]) is not None]
            out[w] = max(timed) if timed else None
    tables.memo["finished_at"] = (tables.events, out)
    return out


def _completes(cols: _ProgressColumns, js: list[int]) -> bool:
    """Whether the last progress lines (``js``: one file's, in file order) say
    training completed."""
    last = js[-1]
    kind = cols.kind[last]
    last_epoch = bool(cols.epochs[last]) and cols.epoch[last] == cols.epochs[last]
    if kind == "keras.epoch_end":
        epochs = [j for j in js if cols.kind[j] == "keras.epoch"]
        return (
            bool(epochs)
            and bool(cols.epochs[epochs[-1]])
            and cols.epoch[epochs[-1]] == cols.epochs[epochs[-1]]
        )
    if kind == "train.epoch":
        return last_epoch
    if kind == "train.step":
        all_steps = bool(cols.steps[last]) and cols.step[last] == cols.steps[last]
        steps = [j for j in js if cols.kind[j] == "train.step"]
        return (all_steps and (last_epoch or not cols.epoch[last])) or (
            last_epoch and not cols.steps[last] and _last_epoch_complete([cols.epoch[j] or "" for j in steps])
        )
    return False


def _last_epoch_complete(epochs: list[str]) -> bool:
    """Without a step total, the last epoch is complete when it printed as many
    steps as the epoch before it (``epochs``: each step line's epoch)."""
    counts = list(Counter(epochs).values())
    return len(counts) >= 2 and counts[-1] >= counts[-2]


def error_records_after(tables: JobTables, row: Row) -> list[Row]:
    """The worker's own errors after ``row`` (in file order), other than reports about peers."""
    return [
        r
        for r in error_records(tables, row["worker"])
        if r["source"] == row["source"] and r["line"] > row["end_line"] and r["kind"] not in _PEER_REPORTS
    ]


# What a worker says about a peer, not about itself.
_PEER_REPORTS = ("coord.unhealthy_tasks", "collective.aborted", "peer.lost", "mwms.peer_down")


# SIGTERMs this close together on several workers came from one hand: a job
# runner's timeout, a person cancelling the job, a whole-job eviction.
TOGETHER = dt.timedelta(seconds=15)


def terminated_together(tables: JobTables) -> set[str]:
    """Workers that were told to stop (SIGTERM) at the same moment as most of
    the others: the whole job was stopped, not one worker taken away."""
    first: dict[str, dt.datetime] = {}
    for r in records(tables, ["tf.sigterm_caught"]):
        if r["ts"] is not None:
            first.setdefault(r["worker"], r["ts"])
    live = [w for w, r in workers(tables).items() if r["has_log"]]
    if len(first) < 2 or len(first) * 2 < len(live):
        return set()
    times = sorted(first.values())
    if times[-1] - times[0] > TOGETHER:
        return set()
    return set(first)


def last_progress(tables: JobTables) -> dict[str, Row]:
    """Each worker's last record of training progress (a step, a loss, an
    epoch), last in time order (untimed ones after the timed)."""
    cols = _progress_columns(tables)
    best: dict[str, int] = {}
    for j, w in enumerate(cols.worker):
        k = best.get(w)
        if k is None or _progress_key(cols, j) > _progress_key(cols, k):
            best[w] = j
    return {w: event_row(tables, cols.idx[j]) for w, j in best.items()}


def _progress_key(cols: _ProgressColumns, j: int) -> tuple[tuple[bool, dt.datetime], str, int]:
    return (ts_key(cols.ts[j]), cols.source[j], cols.line[j])

"""Row access for rules: filter a job's tables in Arrow, then hand a rule the
handful of rows it needs as dicts, and turn a row into evidence.

``Rows`` reads one job's tables, which never change once aligned (stages
return new tables), so what it turns into rows it keeps: each kind of
record once, when a rule first asks for it (rules ask for a few kinds, many
times; most kinds are never asked for).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .findings import Evidence, ts_key
from .tables import JobTables, datetimes

Row = dict[str, Any]
T = TypeVar("T")

# Up to this many events, every recognised event is turned into rows at once
# (less work than one filter a kind).
WHOLE_INDEX_ROWS = 20_000


def to_rows(table: pa.Table) -> list[Row]:
    """A table's rows as dicts (``fields`` as a dict). Built column by column:
    a dictionary column's values are converted once, not once a row, and
    times apart (tables.datetimes: pyarrow's own conversion of zone-aware
    times is most of a row's cost)."""
    names = table.column_names
    cols: list[list[Any]] = []
    for name in names:
        col = table[name]
        if name == "ts" and table.num_rows > 8:
            cols.append(datetimes(col))
        elif name == "fields":
            cols.append([dict(m or ()) for m in col.to_pylist()])
        elif pa.types.is_dictionary(col.type):
            cols.append(_decoded(col))
        else:
            cols.append(col.to_pylist())
    return [dict(zip(names, values, strict=True)) for values in zip(*cols, strict=True)]


def _decoded(col: pa.ChunkedArray | pa.Array) -> list[Any]:
    """A dictionary-encoded column as Python values, chunk by chunk (each
    chunk may carry its own dictionary)."""
    out: list[Any] = []
    for chunk in col.chunks if isinstance(col, pa.ChunkedArray) else [col]:
        values = chunk.dictionary.to_pylist()
        codes = chunk.indices
        if codes.null_count:
            out.extend(None if i is None else values[i] for i in codes.to_pylist())
        else:
            out.extend(values[i] for i in codes.to_numpy(zero_copy_only=False).tolist())
    return out


def time_key(row: Row) -> tuple[tuple[bool, dt.datetime], str, int]:
    return (ts_key(row["ts"]), row["source"], row["line"])


def worker_named(row: Row, workers: Iterable[str] | Mapping[str, Mapping[str, Any]]) -> str:
    """The worker a row is about: its own, or, for a line of a launcher or a
    platform record (a log of no worker: ``?launcher``), the one worker of
    ``workers`` its text names by pod or task name (``seqrec-train-worker-1
    0/1 OOMKilled``, ``process worker:2 exited``); else its own."""
    own = str(row["worker"])
    if not own.startswith("?"):
        return own
    from .inputs import key_hint, name_hint

    known = set(workers)
    # Names the job's own workers were known by whose number is not their
    # task's (dynos worker.1..3 are tasks 0..2): a platform's line naming
    # ``worker.2`` is about the worker whose lines were tagged so.
    alias: dict[str, str] = {}
    if isinstance(workers, Mapping):
        for w, info in workers.items():
            for name in [*(info.get("keys") or ()), *(info.get("sources") or ())]:
                hint = key_hint(name) or name_hint(name)
                if hint is not None and hint != w:
                    alias[hint] = w if alias.get(hint, w) == w else ""
    named = {
        alias.get(h, h)
        for token in str(row["text"]).replace(",", " ").split()
        if (h := name_hint(token.strip("()[]'\":")) or "")
    } & known
    return named.pop() if len(named) == 1 else own


_RUNTIME_ORIGIN = re.compile(r"\.(?:cc|h|cpp):\d")


def from_runtime(row: Row) -> bool:
    """Whether TensorFlow's C++ runtime printed the record (its origin a
    ``file.cc:line``), not the script."""
    return bool(_RUNTIME_ORIGIN.search(row["origin"] or ""))


def evidence(row: Row, role: str = "") -> Evidence:
    return Evidence(row["worker"], row["source"], row["line"], row["end_line"], row["ts"], row["text"], role)


def env_evidence(row: Row, text: str, role: str = "") -> Evidence:
    """A fact of the env table as evidence (line 0: the fact spans the file)."""
    line = row["line"] or 0
    return Evidence(row["worker"], row["source"], line, line, None, text, role)


def _of_kinds(ev: pa.Table, kinds: Iterable[str]) -> Any:
    return pc.is_in(pc.cast(ev["kind"], pa.string()), pa.array(list(dict.fromkeys(kinds)), pa.string()))


class Rows:
    """The rows of one job's tables that rules ask for."""

    def __init__(self, tables: JobTables) -> None:
        self.tables = tables
        self._by_kind: dict[str | None, list[Row]] = {}
        self._whole = False
        self._by_kind_worker: dict[str, dict[str, list[Row]]] = {}
        self._made: dict[str, Any] = {}
        self._at: dict[str, Any] | None = None

    def once(self, key: str, make: Callable[[], T]) -> T:
        """What ``make`` builds from these tables, built once for the job
        (the tables never change): a reading several rules share."""
        if key not in self._made:
            self._made[key] = make()
        return cast(T, self._made[key])

    # --- events of known kinds --------------------------------------------------

    def _index(self, kinds: Iterable[str]) -> dict[str | None, list[Row]]:
        ev = self.tables.events
        built = self._by_kind
        if not built and not self._whole and ev.num_rows <= WHOLE_INDEX_ROWS:
            for r in to_rows(ev.filter(pc.is_valid(ev["kind"]))):
                built.setdefault(r["kind"], []).append(r)
            self._whole = True
        missing = [k for k in kinds if k not in built and not self._whole]
        if missing:
            for k in missing:
                built[k] = []
            for r in to_rows(ev.filter(_of_kinds(ev, missing))):
                built[r["kind"]].append(r)
        return built

    def _of_worker(self, kind: str, worker: str) -> list[Row]:
        by_worker = self._by_kind_worker.get(kind)
        if by_worker is None:
            by_worker = self._by_kind_worker[kind] = {}
            for r in self._index([kind]).get(kind, ()):
                by_worker.setdefault(r["worker"], []).append(r)
        return by_worker.get(worker, [])

    def of(self, kinds: Iterable[str], worker: str | None = None) -> list[Row]:
        """Events of the given kinds (optionally of one worker), in time order.
        The rows are the caller's own (copies): changing one changes no other."""
        wanted = list(dict.fromkeys(kinds))
        if worker is None:
            index = self._index(wanted)
            rows = [r for k in wanted for r in index.get(k, ())]
        else:
            rows = [r for k in wanted for r in self._of_worker(k, worker)]
        return sorted(({**r, "fields": dict(r["fields"])} for r in rows), key=time_key)

    def shared(self, kinds: Iterable[str]) -> list[Row]:
        """Events of the given kinds, in no set order, as the rows themselves
        (shared with every other caller: to read, never to change). For a pass
        over many rows that keeps none of them."""
        wanted = list(dict.fromkeys(kinds))
        index = self._index(wanted)
        return [r for k in wanted for r in index.get(k, ())]

    def plain(
        self,
        worker: str,
        source: str,
        after: int | None = None,
        before: int | None = None,
        most: int | None = None,
    ) -> list[Row] | None:
        """A worker's own plain lines in one file, in file order (only those
        after or before a line, when given): its script's prints and info
        logging (no template's but who it is, no warning or error, nothing
        TensorFlow's runtime printed). None when there are more than ``most``
        records there to look at (the caller wants a few, not a stream)."""
        ev = self.tables.events
        mask = pc.and_(
            pc.equal(pc.cast(ev["worker"], pa.string()), worker),
            pc.equal(pc.cast(ev["source"], pa.string()), source),
        )
        if after is not None:
            mask = pc.and_(mask, pc.greater(ev["line"], after))
        if before is not None:
            mask = pc.and_(mask, pc.less(ev["line"], before))
        kept = ev.filter(mask)
        if most is not None and kept.num_rows > most:
            return None
        rows = to_rows(kept)
        return sorted(
            (
                r
                for r in rows
                if r["kind"] in (None, "script.whoami")
                and r["severity"] in (None, "debug", "info")
                and not r["benign"]
                and not from_runtime(r)
            ),
            key=lambda r: r["line"],
        )

    def matching(self, kinds: Iterable[str] | None, pattern: str) -> list[Row]:
        """Events of these kinds (None: of any kind) whose text matches ``pattern``
        (RE2 syntax), in time order: filtered in Arrow, so only the matching
        ones become rows."""
        ev = self.tables.events
        mask = pc.match_substring_regex(pc.cast(ev["text"], pa.string()), pattern)
        if kinds is not None:
            mask = pc.and_(_of_kinds(ev, kinds), mask)
        return sorted(to_rows(ev.filter(pc.fill_null(mask, False))), key=time_key)

    def where(self, kinds: Iterable[str], mask: Any) -> list[Row]:
        """Events of these kinds where ``mask`` (a boolean column over the events
        table; null is false) holds, in time order."""
        ev = self.tables.events
        return sorted(
            to_rows(ev.filter(pc.fill_null(pc.and_(_of_kinds(ev, kinds), mask), False))), key=time_key
        )

    def has(self, kinds: Iterable[str], worker: str | None = None) -> bool:
        """Whether there is any event of these kinds (of one worker): no copies made."""
        ev = self.tables.events
        mask = _of_kinds(ev, kinds)
        if worker is not None:
            mask = pc.and_(mask, pc.equal(pc.cast(ev["worker"], pa.string()), worker))
        return bool(pc.any(mask).as_py())

    def at(self, i: int) -> Row:
        """Row ``i`` of the events table."""
        return to_rows(self.tables.events.slice(i, 1))[0]

    def tracebacks_with(self, tf_kinds: Iterable[str]) -> list[Row]:
        """Python tracebacks whose exception carries one of these TF templates."""
        wanted = set(tf_kinds)
        return [r for r in self.of(["py.traceback"]) if r["fields"].get("tf_kind") in wanted]

    def first_reports(self, kinds: Iterable[str]) -> dict[str, Row]:
        """Each worker's earliest record of these templates, counting Python
        tracebacks that end in one of them: worker -> row, earliest worker first."""
        kinds = list(kinds)
        rows = sorted(self.of(kinds) + self.tracebacks_with(kinds), key=time_key)
        out: dict[str, Row] = {}
        for row in rows:
            out.setdefault(row["worker"], row)
        return out

    # --- any event ------------------------------------------------------------------

    def errors(self, worker: str | None = None) -> list[Row]:
        """Records printed at error or fatal level that are not known to be harmless."""
        ev = self.tables.events
        mask = pc.and_(
            pc.is_in(pc.cast(ev["severity"], pa.string()), pa.array(["error", "fatal"])),
            pc.invert(ev["benign"]),
        )
        if worker is not None:
            mask = pc.and_(mask, pc.equal(pc.cast(ev["worker"], pa.string()), worker))
        return sorted(to_rows(ev.filter(mask)), key=time_key)

    def _positions(self, worker: str) -> Any:
        """Where a worker's records are in the events table (positions, in
        table order): grouped once for every worker, not filtered per call."""
        if self._at is None:
            ev = self.tables.events
            coded = pc.dictionary_encode(pc.cast(ev["worker"], pa.string())).combine_chunks()
            codes = coded.indices.to_numpy(zero_copy_only=False)
            order = np.argsort(codes, kind="stable")
            cuts = np.flatnonzero(np.diff(codes[order])) + 1
            names = coded.dictionary.to_pylist()
            self._at = {names[codes[group[0]]]: group for group in np.split(order, cuts) if len(group)}
        return self._at.get(worker, [])

    def last(self, worker: str, n: int) -> list[Row]:
        """A worker's last ``n`` records, in file order: its last words."""
        mine = self._positions(worker)
        if n <= 0 or not len(mine):
            return []
        return to_rows(self.tables.events.take(mine[-n:]))

    def last_seen(self, worker: str, ts_kind: str) -> dt.datetime | None:
        """A worker's last time read the same way as ``ts_kind`` (absl epoch, python
        logging ...). Comparing like with like: a script's naive local-time logging
        next to TF's UTC epoch would otherwise make a dead worker look alive."""
        ev = self.tables.events
        mask = pc.and_(
            pc.equal(pc.cast(ev["worker"], pa.string()), worker),
            pc.equal(pc.cast(ev["ts_kind"], pa.string()), ts_kind),
        )
        value = pc.max(ev.filter(mask)["ts"]).as_py()
        return value if isinstance(value, dt.datetime) else None

    def ts_kind_at(self, source: str, line: int) -> str | None:
        """How the time of the record at ``source:line`` was read."""
        ev = self.tables.events
        mask = pc.and_(pc.equal(pc.cast(ev["source"], pa.string()), source), pc.equal(ev["line"], line))
        kinds = pc.cast(ev.filter(mask)["ts_kind"], pa.string()).to_pylist()
        return kinds[0] if kinds else None

    # --- the other tables ---------------------------------------------------------

    def env(self, kinds: Iterable[str] = (), worker: str | None = None) -> list[Row]:
        """Rows of the env table (of these kinds; of one worker), in table order."""
        env = self.tables.env
        if env is None or env.num_rows == 0:
            return []
        wanted = set(kinds)
        return [
            r
            for r in env.to_pylist()
            if (not wanted or r["kind"] in wanted) and (worker is None or r["worker"] == worker)
        ]

    def rpc(self) -> list[Row]:
        """The rpc table as rows (empty when there is none)."""
        if self.tables.rpc is None:
            return []
        rows: list[Row] = self.tables.rpc.to_pylist()
        return rows

    def trace(self, kinds: Iterable[str]) -> list[Row]:
        """Profiler events of these ``args.kind`` values (step, collective, iterator ...)."""
        te = self.tables.trace_events
        if te is None or te.num_rows == 0:
            return []
        wanted = set(kinds)
        rows = []
        for r in te.to_pylist():
            r["args"] = dict(r["args"] or ())
            if r["args"].get("kind") in wanted:
                rows.append(r)
        return rows

"""Re-packaging recorded evidence in other real layouts, for layout
invariance (``scripts/metamorphic.py``, ``tests/test_layout_invariance.py``).

Each transform is one a real platform applies to the same processes'
output; see ``scripts/metamorphic.py`` for the list. The ones that need
each line's worker and time take them from the tool's own reading of the
original layout (``Layout``), so they run where every log file was given to
one worker.
"""

from __future__ import annotations

import bisect
import datetime as dt
import gzip
import json
import re
import shutil
import tarfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from mwms_doctor.ingest.source import plain_name

Verdict = tuple[str, str, tuple[str, ...]]


def verdict(logs: Path) -> Verdict:
    from mwms_doctor.engine import run_rules
    from mwms_doctor.errors import UserError
    from mwms_doctor.facts import establish
    from mwms_doctor.pipeline import load_tables

    try:
        tables, _ = load_tables(logs)
    except UserError as exc:
        return ("refused", exc.message[:60], ())
    v = run_rules(establish(tables)).verdict
    return (v.status, v.cls, tuple(sorted(v.root_workers)))


def _files(logs: Path) -> list[Path]:
    return sorted(p for p in logs.rglob("*") if p.is_file())


# ---- transforms on files alone ---------------------------------------------


def t_gzip(logs: Path, out: Path, _: object) -> bool:
    for p in _files(logs):
        dest = out / p.relative_to(logs)
        dest.parent.mkdir(parents=True, exist_ok=True)
        if p.suffix in (".gz", ".bz2", ".zst", ".xz", ".zip", ".tar", ".tgz"):
            shutil.copy(p, dest)
        else:
            with gzip.open(dest.with_name(dest.name + ".gz"), "wb") as f:
                f.write(p.read_bytes())
    return True


def t_crlf(logs: Path, out: Path, _: object) -> bool:
    for p in _files(logs):
        dest = out / p.relative_to(logs)
        dest.parent.mkdir(parents=True, exist_ok=True)
        data = p.read_bytes()
        if b"\0" in data[:4096] or p.suffix in (".gz", ".pb", ".zip", ".tgz", ".tar"):
            dest.write_bytes(data)
        else:
            dest.write_bytes(data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
    return True


def t_nested(logs: Path, out: Path, _: object) -> bool:
    shutil.copytree(logs, out / "job-1234" / "attempt-0")
    return True


def t_targz(logs: Path, out: Path, _: object) -> bool:
    out.mkdir(parents=True, exist_ok=True)
    with tarfile.open(out / "job-1234-logs.tar.gz", "w:gz") as tar:
        tar.add(logs, arcname="job-1234-logs")
    return True


def t_zip(logs: Path, out: Path, _: object) -> bool:
    out.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(out / "job-1234-logs.zip", "w", zipfile.ZIP_DEFLATED) as z:
        for p in _files(logs):
            z.write(p, "job-1234-logs/" + str(p.relative_to(logs)))
    return True


def _texts(logs: Path, out: Path, change: Callable[[str], bytes]) -> bool:
    """Every plain text file a console wrote rewritten by ``change``; the rest
    copied (JSON documents and black boxes are written by programs, not consoles)."""
    for p in _files(logs):
        dest = out / p.relative_to(logs)
        dest.parent.mkdir(parents=True, exist_ok=True)
        data = p.read_bytes()
        if (
            b"\0" in data[:4096]
            or data[:2] == b"\x1f\x8b"
            or p.suffix in (".pb", ".zip", ".tgz", ".tar", ".zst", ".bz2", ".json", ".jsonl", ".xml")
        ):
            dest.write_bytes(data)
        else:
            dest.write_bytes(change(data.decode("utf-8", "replace")))
    return True


def t_utf16(logs: Path, out: Path, _: object) -> bool:
    """Windows PowerShell's ``>``: UTF-16 with a byte-order mark, CRLF."""
    return _texts(logs, out, lambda s: s.replace("\r\n", "\n").replace("\n", "\r\n").encode("utf-16"))


_LEVEL_WORD = re.compile(r"\b(INFO|WARNING|WARN|ERROR|CRITICAL|Traceback)\b")
_ABSL = re.compile(r"^([IWEF])(\d{4} )", re.M)


def t_ansi(logs: Path, out: Path, _: object) -> bool:
    """A terminal's or CI console's colours: level words and absl's letter
    in escape sequences, a reset at each line's end."""

    def paint(s: str) -> bytes:
        s = _LEVEL_WORD.sub("\x1b[1;33m\\1\x1b[0m", s)
        s = _ABSL.sub("\x1b[32m\\1\x1b[0m\\2", s)
        return s.replace("\n", "\x1b[0m\n").encode()

    return _texts(logs, out, paint)


def t_no_exits(logs: Path, out: Path, _: object) -> bool:
    """The logs alone: a user who copied the workers' logs and not the
    runner's exit records (``*.exit``, ``exit_code``)."""
    from mwms_doctor.ingest.exit_status import is_exit_record

    files = _files(logs)
    if not any(is_exit_record(p.name) for p in files):
        return False
    for p in files:
        if not is_exit_record(p.name):
            dest = out / p.relative_to(logs)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(p, dest)
    return True


# ---- transforms that need each line's worker and time ----------------------


# A line a collector already stamped or tagged (kubectl --timestamps/--prefix, CRI, JSON
# lines or a JSON array of records: a CI system's step log).
_WRAPPED = re.compile(
    r"^(?:\[[A-Za-z][^\]]*\] |\d{4}-\d\d-\d\dT\S+ |\[?\{|[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d )"
)


class Layout:
    """Which worker each log file is, and each line's time, as the tool read them."""

    def __init__(self, logs: Path) -> None:
        from mwms_doctor.pipeline import load_tables

        tables, _ = load_tables(logs)
        self.ok = True
        self.owner: dict[str, str] = {}
        # Every task, with a log or not, chief first: a launcher's rank is its place here.
        self.workers = sorted(
            (w for w in tables.workers.column("worker").to_pylist() if not w.startswith("?")),
            key=lambda w: (not w.startswith("chief"), w.split(":")[0], int(w.split(":")[1] or 0)),
        )
        for w, srcs in zip(
            tables.workers.column("worker").to_pylist(),
            tables.workers.column("sources").to_pylist(),
            strict=True,
        ):
            for s in srcs or []:
                if s in self.owner or ":" in s or not (logs / s).is_file():
                    self.ok = False  # one file, two workers; or an archive member
                self.owner[s] = w
        # The times as each host's clock told them (a collector on the node
        # stamps with the node's clock, skewed alike), not as aligned.
        offset = {
            w: dt.timedelta(seconds=o or 0.0)
            for w, o in zip(
                tables.workers.column("worker").to_pylist(),
                tables.workers.column("clock_offset_s").to_pylist(),
                strict=True,
            )
        }
        ev = tables.events.select(["worker", "source", "line", "end_line", "ts"]).to_pylist()
        self.times: dict[str, list[tuple[int, dt.datetime]]] = {}
        # A record's continuation lines (a gRPC error's "Additional GRPC error
        # information", a traceback) go where its first line goes.
        self.follows: dict[str, set[int]] = {}
        for e in ev:
            if e["line"] is not None and e["end_line"] is not None and e["end_line"] > e["line"]:
                self.follows.setdefault(e["source"], set()).update(range(e["line"] + 1, e["end_line"] + 1))
            if e["ts"] is not None and e["line"] is not None:
                raw = e["ts"] - offset.get(e["worker"], dt.timedelta(0))
                self.times.setdefault(e["source"], []).append((e["line"], raw))
        for s in self.times:
            self.times[s].sort()
        if not self.owner or any(s not in self.times for s in self.owner):
            self.ok = False  # a file without one time: nothing to interleave by
        if self.ok and any(self._wrapped(logs, s) for s in self.owner):
            self.ok = False  # already behind a collector's stamp or tag: no second one

    def _wrapped(self, logs: Path, source: str) -> bool:
        rows = [line for _, line in self.lines(logs, source)[:200] if line.strip()]
        return sum(bool(_WRAPPED.match(line)) for line in rows) * 2 > len(rows)

    def lines(self, logs: Path, source: str) -> list[tuple[dt.datetime, str]]:
        """The file's lines, each with its time or the last one before it."""
        from mwms_doctor.ingest.source import detect

        with detect(logs / source).open() as fh:
            text = fh.read().decode("utf-8", "replace")
        rows = text.split("\n")
        if rows and rows[-1] == "":
            rows.pop()
        stamps = self.times[source]
        keys = [n for n, _ in stamps]
        out = []
        for i, line in enumerate(rows, start=1):
            k = bisect.bisect_right(keys, i) - 1
            ts = stamps[max(k, 0)][1]
            out.append((ts, line.rstrip("\r")))
        return out


def _stem(src: str) -> str:
    """A log's name without its log suffix (``screenlog.0`` keeps its number)."""
    name = plain_name(src)
    for suffix in (".log", ".txt", ".out"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _tag(worker: str, style: str, rank: int) -> str:
    kind, _, idx = worker.partition(":")
    name = f"{kind}-{idx}"
    if style == "pipe":
        return f"{name:<10}| "
    if style == "bracket":
        return f"[{name}] "
    if style == "srun":
        return f"{rank}: "
    if style == "kubectl-prefix":
        return f"[pod/train-{name}/tensorflow] "
    return f"[1,{rank}]<stdout>:"


def _rest(logs: Path, out: Path, lay: Layout) -> None:
    """Files that are no worker's log keep their place."""
    for p in _files(logs):
        rel = str(p.relative_to(logs))
        if rel not in lay.owner:
            dest = out / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(p, dest)


def _combine(style: str) -> Callable[[Path, Path, Layout], bool]:
    def run(logs: Path, out: Path, lay: Layout) -> bool:
        _rest(logs, out, lay)
        if any(w not in lay.workers for w in lay.owner.values()):
            return False  # a worker no name is known for: no tag to give it
        if style in ("mpi", "srun") and any(w.startswith("chief") for w in lay.workers):
            return False  # a launcher's rank says nothing of which task is the chief
        rank = {w: i for i, w in enumerate(lay.workers)}
        merged: list[tuple[dt.datetime, int, int, str]] = []
        for src, w in sorted(lay.owner.items()):
            for i, (ts, line) in enumerate(lay.lines(logs, src)):
                merged.append((ts, rank[w], i, _tag(w, style, rank[w]) + line))
        merged.sort(key=lambda r: (r[0], r[1], r[2]))
        out.mkdir(parents=True, exist_ok=True)
        (out / "job.log").write_text("\n".join(r[3] for r in merged) + "\n")
        return True

    return run


def _runtime_record(line: str) -> bool:
    s = line.lstrip()
    # absl's and TF's C++ records, Python logging's default format (it writes to stderr).
    return (
        len(s) > 6
        and s[0] in "IWEF"
        and s[1:5].isdigit()
        or s.startswith(("Traceback", "INFO:", "WARNING:", "ERROR:", "CRITICAL:", "DEBUG:"))
        # A logging line's date ("2026-11-24 ..."), not Keras' "20/20 - 4s" on stdout.
        or re.match(r"20\d\d-\d\d-\d\d", s) is not None
    )


def _streams(rows: list[tuple[dt.datetime, str]], follows: set[int]) -> list[str]:
    """Each line's stream: the runtime's records and a traceback, whole, on
    stderr (as Python and TensorFlow write them); the rest on stdout."""
    out: list[str] = []
    in_tb = False
    for i, (_, line) in enumerate(rows, start=1):
        if i in follows and out:
            out.append(out[-1])
            if in_tb and not line.startswith((" ", "\t")):
                in_tb = False  # the exception's own line, read with its record, ends the traceback
            continue
        if line.startswith("Traceback"):
            in_tb = True
        elif in_tb and not line.startswith((" ", "\t")):
            # The exception's own line ends the traceback.
            out.append("stderr")
            in_tb = False
            continue
        out.append("stderr" if in_tb or _runtime_record(line) else "stdout")
    return out


def t_kubectl_ts(logs: Path, out: Path, lay: Layout) -> bool:
    _rest(logs, out, lay)
    for src in lay.owner:
        dest = out / plain_name(src)
        dest.parent.mkdir(parents=True, exist_ok=True)
        rows = [f"{ts.strftime('%Y-%m-%dT%H:%M:%S.%f')}000Z {line}" for ts, line in lay.lines(logs, src)]
        dest.write_text("\n".join(rows) + "\n")
    return True


def t_docker_json(logs: Path, out: Path, lay: Layout) -> bool:
    _rest(logs, out, lay)
    for src in lay.owner:
        dest = out / (_stem(src) + ".json.log")
        dest.parent.mkdir(parents=True, exist_ok=True)
        lines = lay.lines(logs, src)
        rows = [
            json.dumps(
                {"log": line + "\n", "stream": stream, "time": ts.strftime("%Y-%m-%dT%H:%M:%S.%f") + "000Z"}
            )
            for (ts, line), stream in zip(lines, _streams(lines, lay.follows.get(src, set())), strict=True)
        ]
        dest.write_text("\n".join(rows) + "\n")
    return True


def t_split(logs: Path, out: Path, lay: Layout) -> bool:
    _rest(logs, out, lay)
    for src in lay.owner:
        base = out / _stem(src)
        base.parent.mkdir(parents=True, exist_ok=True)
        err, std = [], []
        lines = lay.lines(logs, src)
        for (_, line), stream in zip(lines, _streams(lines, lay.follows.get(src, set())), strict=True):
            (err if stream == "stderr" else std).append(line)
        base.with_name(base.name + ".out").write_text("\n".join(std) + "\n")
        base.with_name(base.name + ".err").write_text("\n".join(err) + "\n")
    return True


def t_cri(logs: Path, out: Path, lay: Layout) -> bool:
    """The kubelet's own files: /var/log/pods/<ns>_<pod>_<uid>/<container>/0.log,
    each line ``<time> <stream> F <line>`` (the CRI format)."""
    _rest(logs, out, lay)
    if any(w not in lay.workers for w in lay.owner.values()):
        return False
    by_worker: dict[str, list[tuple[dt.datetime, int, str, str]]] = {}
    for src, w in sorted(lay.owner.items()):
        lines = lay.lines(logs, src)
        streams = _streams(lines, lay.follows.get(src, set()))
        rows = by_worker.setdefault(w, [])
        rows += [
            (ts, len(rows) + i, s, line) for i, ((ts, line), s) in enumerate(zip(lines, streams, strict=True))
        ]
    for n, (w, rows) in enumerate(sorted(by_worker.items())):
        kind, _, idx = w.partition(":")
        pod = out / f"default_train-{kind}-{idx}_5f1c2d{n:02d}-9a7e-4b1c-8e2f-0c3d4e5f6a7b" / "tensorflow"
        pod.mkdir(parents=True, exist_ok=True)
        # A worker's rotated parts were one container's output: one file, in time order.
        rows.sort(key=lambda r: (r[0], r[1]))
        text = [f"{ts.strftime('%Y-%m-%dT%H:%M:%S.%f')}000Z {s} F {line}" for ts, _, s, line in rows]
        (pod / "0.log").write_text("\n".join(text) + "\n")
    return True


def t_folders(logs: Path, out: Path, lay: Layout) -> bool:
    """A folder per worker named for its task, its log inside under one
    name for all (``worker-1/output.log``; rotated parts keep their number),
    and its exit record beside it as ``exit_code``."""
    if any(w not in lay.workers for w in lay.owner.values()):
        return False
    moved: set[str] = set()
    for src, w in lay.owner.items():
        kind, _, idx = w.partition(":")
        folder = out / f"{kind}-{idx}"
        folder.mkdir(parents=True, exist_ok=True)
        name = Path(src).name
        part = re.search(r"(\.\d+)?(\.(?:gz|bz2|xz|zst))?$", name)
        suffix = (part[1] or "") + (part[2] or "") if part else ""
        dest = folder / f"output.log{suffix}"
        if dest.exists():
            dest = folder / name  # a second stream of the same worker (train.out, train.err) keeps its name
        shutil.copy(logs / src, dest)
        stem = _stem(src)
        for ext in (".exit", ".exitcode"):
            if (logs / (stem + ext)).is_file() and stem + ext not in moved:
                shutil.copy(logs / (stem + ext), folder / "exit_code")
                moved.add(stem + ext)
    for p in _files(logs):
        rel = str(p.relative_to(logs))
        if rel not in lay.owner and rel not in moved:
            dest = out / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(p, dest)
    return True


def _merged(logs: Path, lay: Layout) -> list[tuple[dt.datetime, str, str, str]] | None:
    """Every worker's lines in time order: (time, worker, stream, line); None
    where a log's worker has no name to give it."""
    if any(w not in lay.workers for w in lay.owner.values()):
        return None
    rank = {w: i for i, w in enumerate(lay.workers)}
    rows: list[tuple[dt.datetime, int, int, str, str, str]] = []
    for src, w in sorted(lay.owner.items()):
        lines = lay.lines(logs, src)
        streams = _streams(lines, lay.follows.get(src, set()))
        rows += [
            (ts, rank[w], i, w, s, line) for i, ((ts, line), s) in enumerate(zip(lines, streams, strict=True))
        ]
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    return [(ts, w, s, line) for ts, _, _, w, s, line in rows]


def _pod(worker: str) -> str:
    kind, _, idx = worker.partition(":")
    return f"ranker-{kind}-{idx}"


def t_fluentbit(logs: Path, out: Path, lay: Layout) -> bool:
    """A log shipper's export: Fluent Bit's kubernetes filter, every pod's
    lines in one JSON-lines file, each record with its epoch time, the line
    under ``log`` and the pod under ``kubernetes.pod_name``."""
    _rest(logs, out, lay)
    rows = _merged(logs, lay)
    if rows is None:
        return False
    out.mkdir(parents=True, exist_ok=True)
    recs = [
        json.dumps(
            {
                "date": round(ts.replace(tzinfo=dt.timezone.utc).timestamp(), 6),
                "log": line,
                "stream": s,
                "kubernetes": {"pod_name": _pod(w), "namespace_name": "ml", "container_name": "trainer"},
            }
        )
        for ts, w, s, line in rows
    ]
    (out / "fluent-bit-export.jsonl").write_text("\n".join(recs) + "\n")
    return True


def t_kibana_csv(logs: Path, out: Path, lay: Layout) -> bool:
    """Kibana Discover's CSV export: quoted ``@timestamp``, pod and message
    columns, newest first (Discover's default sort)."""
    import csv
    import io

    _rest(logs, out, lay)
    rows = _merged(logs, lay)
    if rows is None:
        return False
    buf = io.StringIO()
    wr = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\n")
    wr.writerow(["@timestamp", "kubernetes.pod.name", "message"])
    for ts, w, _, line in reversed(rows):
        wr.writerow([ts.strftime("%b %d, %Y @ %H:%M:%S.") + f"{ts.microsecond // 1000:03d}", _pod(w), line])
    out.mkdir(parents=True, exist_ok=True)
    (out / "discover-export.csv").write_text(buf.getvalue())
    return True


def t_dshbak(logs: Path, out: Path, lay: Layout) -> bool:
    """``pdsh ... | dshbak`` (or ``clush -b``): one file, each worker's output
    as a block under a banner naming its host."""
    _rest(logs, out, lay)
    if any(w not in lay.workers for w in lay.owner.values()):
        return False
    blocks: dict[str, list[str]] = {}
    # A worker's files (a restarted container's previous run and its last)
    # in the order they were written: by their first times.
    files = sorted(lay.owner.items(), key=lambda kv: (lay.times[kv[0]][0][1], kv[0]))
    for src, w in files:
        blocks.setdefault(w, []).extend(line for _, line in lay.lines(logs, src))
    text: list[str] = []
    for w in lay.workers:
        if w in blocks:
            host = _pod(w).replace("ranker-", "gpu-")
            text += ["----------------", host, "----------------", *blocks[w]]
    out.mkdir(parents=True, exist_ok=True)
    (out / "pdsh-dshbak.txt").write_text("\n".join(text) + "\n")
    return True


def _syslog_prefix(ts: dt.datetime, host: str, pid: int) -> str:
    return f"{ts.strftime('%b')} {ts.day:2d} {ts.strftime('%H:%M:%S')} {host} python3[{pid}]: "


def t_syslog(logs: Path, out: Path, lay: Layout) -> bool:
    """rsyslog's files, one per host (the worker's stdout through journald):
    every line behind ``Nov 27 22:11:07 <host> python3[<pid>]: `` (no year,
    seconds only), each file keeping its name."""
    _rest(logs, out, lay)
    for n, src in enumerate(sorted(lay.owner)):
        dest = out / plain_name(src)
        dest.parent.mkdir(parents=True, exist_ok=True)
        host = _pod(lay.owner[src]).replace("ranker-", "node-")
        rows = [_syslog_prefix(ts, host, 4100 + n) + line for ts, line in lay.lines(logs, src)]
        dest.write_text("\n".join(rows) + "\n")
    return True


def t_journal(logs: Path, out: Path, lay: Layout) -> bool:
    """One syslog server's file for the whole job (``/var/log/messages`` on
    the collector): every host's lines in time order, each behind its host."""
    _rest(logs, out, lay)
    rows = _merged(logs, lay)
    if rows is None:
        return False
    pids = {w: 4100 + i for i, w in enumerate(lay.workers)}
    text = [
        _syslog_prefix(ts, _pod(w).replace("ranker-", "node-"), pids[w]) + line for ts, w, _, line in rows
    ]
    out.mkdir(parents=True, exist_ok=True)
    (out / "messages").write_text("\n".join(text) + "\n")
    return True


TRANSFORMS: dict[str, tuple[Callable[..., bool], bool]] = {
    "gzip": (t_gzip, False),
    "crlf": (t_crlf, False),
    "nested": (t_nested, False),
    "targz": (t_targz, False),
    "zip": (t_zip, False),
    "utf16": (t_utf16, False),
    "ansi": (t_ansi, False),
    "no-exits": (t_no_exits, False),
    "kubectl-ts": (t_kubectl_ts, True),
    "docker-json": (t_docker_json, True),
    "split": (t_split, True),
    "combine-pipe": (_combine("pipe"), True),
    "combine-bracket": (_combine("bracket"), True),
    "combine-mpi": (_combine("mpi"), True),
    "combine-srun": (_combine("srun"), True),
    "combine-kubectl-prefix": (_combine("kubectl-prefix"), True),
    "cri": (t_cri, True),
    "folders": (t_folders, True),
    "fluentbit": (t_fluentbit, True),
    "kibana-csv": (t_kibana_csv, True),
    "dshbak": (t_dshbak, True),
    "syslog": (t_syslog, True),
    "syslog-combined": (t_journal, True),
}

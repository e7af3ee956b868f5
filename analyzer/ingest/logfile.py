"""Read one worker log file of any size: scan it, then parse what matters.

Pass 1 (``scan``) finds every line that matches a signature. Pass 2 reads
only *windows* of the file and parses them in full:

* the head (identity, versions, the cluster coming up) and the tail (a
  worker's last words), always;
* each signature line, with the record it belongs to; an alarm (a warning,
  an error, a traceback) also with the records just before and after it, so
  the report can show it in context.

Windows that overlap are merged; a small file is one window, parsed whole.
Lines between windows are counted, never stored: memory does not grow with
the file. The wrapper a log collector put around each line (``wrappers``) is
peeled off here, and a file that interleaves several workers is split into
one ParsedLog per worker it names.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..inputs import name_hint
from .lines import parse_header
from .probes import stated_time, tells_probes
from .scan import LineMatch, Part, Scan, count_lines, merge, scan_file, scan_range, split_points
from .source import DEFAULT_LIMITS, ReadLimits, Source
from .source import detect as detect_source
from .templates import classify
from .worker_log import Line, ParsedLog, starts_record
from .wrappers import Unwrapped, detect, is_keyed, join_partials, unwrap

_PLAIN_LOG = re.compile(
    r"^(?:Traceback \(most recent call last\)|Epoch \d+/\d+|WARNING: All log messages before absl)", re.M
)


def sniff_log(head: str) -> bool:
    """Whether a file's first bytes are a worker's log: TensorFlow or Python
    log lines, bare or inside a log collector's wrapper, or (a worker's stdout
    may hold only what its script printed while TF's own lines went to
    stderr) a line of a known template."""
    lines = head.split("\n")[:2000]
    chain = detect(lines)
    if chain:
        lines = [unwrap(line, chain).text for line in lines]
    if _PLAIN_LOG.search("\n".join(lines)):
        return True
    if any(parse_header(line, 2000) is not None for line in lines):
        return True
    return any(classify(line)[0] is not None for line in lines[:200] if line.strip())


@dataclass(frozen=True)
class Limits:
    head: int = 128 << 10  # bytes always parsed at the start of a file
    tail: int = 64 << 10  # ... and at its end
    alarm_before: int = 4 << 10  # context kept before a warning or an error
    alarm_after: int = 16 << 10  # a traceback or an allocator dump follows its first line
    hit_after: int = 2 << 10  # a recognised line's own continuation lines
    # At most this many signature lines are parsed per file; beyond it the
    # first and the last halves are kept (the first errors hold the root
    # cause, the last ones a worker's last words; an error printed every step
    # must not turn a 50 MB log into a million records). The rest are counted.
    max_hits: int = 400
    # Epoch lines and the like: the first and last this many per file. The
    # last ones say how far the worker got; the ones between say nothing new.
    max_frequent: int = 200


@dataclass
class _Window:
    start: int
    end: int
    anchor: int  # a byte offset inside the window whose line number is known
    anchor_line: int
    hit_lines: set[int]


def read_log(
    path: Path,
    source: str,
    year_hint: int,
    not_after: dt.datetime | None,
    limits: Limits = Limits(),
    read_limits: ReadLimits = DEFAULT_LIMITS,
) -> list[ParsedLog]:
    """Every worker log in one file: usually one, several for a combined file.
    Compressed and UTF-16 files are read as the text they hold."""
    src = detect_source(path, read_limits)
    scan = scan_log(src, limits)
    logs = parse_scanned(scan, source, year_hint, not_after, limits)
    if scan.damage:
        for lg in logs:
            lg.notes.append(scan.damage)
    return logs


def scan_log(src: Path | Source, limits: Limits = Limits(), size: int | None = None) -> Scan:
    """Pass 1. A plain file that fits in its head and tail windows is parsed
    whole, so it is not scanned, only its lines counted."""
    src = src if isinstance(src, Source) else Source(src)
    if src.plain:
        size = src.path.stat().st_size if size is None else size
        if size <= limits.head + limits.tail:
            n_lines, n_newlines = count_lines(src.path, size)
            return Scan(src.path, size, n_lines, n_newlines)
    return scan_file(src, (limits.max_hits, limits.max_frequent), size)


def _windows(scan: Scan, hits: list[LineMatch], limits: Limits) -> list[_Window]:
    wins: list[_Window] = []
    if scan.size == 0:
        return wins
    wins.append(_Window(0, min(scan.size, limits.head), 0, 1, set()))
    for h in hits:
        before = limits.alarm_before if h.alarm else 0
        after = limits.alarm_after if h.alarm else limits.hit_after
        wins.append(
            _Window(max(0, h.start - before), min(scan.size, h.end + after), h.start, h.line, {h.line})
        )
    tail_start = max(0, scan.size - limits.tail)
    wins.append(_Window(tail_start, scan.size, scan.size, scan.n_newlines + 1, set()))
    wins.sort(key=lambda w: w.start)
    merged = [wins[0]]
    for w in wins[1:]:
        cur = merged[-1]
        if w.start <= cur.end:
            if w.end > cur.end:
                cur.end = w.end
            cur.hit_lines |= w.hit_lines
        else:
            merged.append(w)
    return merged


def parse_scanned(
    scan: Scan, source: str, year_hint: int, not_after: dt.datetime | None, limits: Limits = Limits()
) -> list[ParsedLog]:
    """Pass 2: parse the windows around what the scan kept."""
    dropped, dropped_frequent = scan.dropped, scan.dropped_frequent
    wins = _windows(scan, scan.hits, limits)
    logs: dict[str | None, ParsedLog] = {}
    chain: tuple[str, ...] | None = None
    keyless = False
    probes = False
    parsed = 0
    with scan.open() as fh:
        for w in wins:
            lines = _read_lines(fh, w, scan.size)
            if not lines:
                continue
            parsed += sum(len(t) + 1 for _, t in lines)
            texts = [(no, _decode(raw)) for no, raw in lines]
            if w.start == 0 and texts and texts[0][1].startswith("\ufeff"):
                texts[0] = (texts[0][0], texts[0][1][1:])  # a UTF-8 byte-order mark
            if w.start == 0:
                probes = tells_probes("\n".join(t for _, t in texts[:400]))
            if chain is None:
                chain = detect([t for _, t in texts])
                # syslog names a host on every line: a collector's file of several
                # hosts is one log per host; one host's file is its one log, named
                # by its file (its kernel's lines with it).
                keyless = (
                    "syslog" in chain and len({unwrap(t, chain).key for _, t in texts[:2000]} - {None}) < 2
                )
            cut_after = texts[-1][0] if w.end < scan.size else None
            _add_window(logs, texts, chain, w, year_hint, not_after, cut_after, keyless)
    if chain and "foreman" in chain:
        logs = _without_instance_numbers(logs)
    if not logs:
        logs[None] = ParsedLog(source)
    out = []
    for key, lg in logs.items():
        lg.source, lg.key = source, key
        lg.n_lines, lg.n_bytes, lg.n_bytes_parsed = scan.n_lines, scan.size, min(parsed, scan.size)
        lg.wrappers = chain or ()
        # In a file whose lines name their worker, unnamed lines are the launcher's
        # own; in a file where none does (a script's own JSON logger, read by
        # the wrapper that reads viewers' JSON exports) they are its worker's.
        named = any(k is not None for k in logs)
        lg.launcher = (key is None and named and is_keyed(lg.wrappers)) or (key is None and _status_table(lg))
        if dropped:
            lg.notes.append(
                f"{dropped} warning/error lines in the middle of the file were only counted, not parsed "
                f"(the first and last {limits.max_hits // 2} were)"
            )
        lg.n_frequent_skipped = dropped_frequent
        _sort_by_line(lg)
        if probes and key is None:
            # A connectivity check's capture: an observer's, no worker's.
            lg.launcher = True
            _date_checks(lg)
        out.append(lg)
    return out


def _date_checks(lg: ParsedLog) -> None:
    """A probe capture's untimed lines ran at or after the time the capture
    last stated above them (its header comment, ``date``'s output): that
    time, its bound unknown."""
    stated = None
    for i, text in enumerate(lg.text):
        if (said := stated_time(text.split("\n", 1)[0])) is not None:
            stated = said
        if lg.ts[i] is None and stated is not None:
            lg.ts[i], lg.ts_kind[i], lg.ts_bound[i] = stated, "inferred", None


# A scheduler's or workflow engine's table of the job's tasks, one per line
# (argo get, kubectl get pods, a launcher's summary): the platform's words
# about the workers, not a worker's own log.
_STATUS_WORD = re.compile(
    r"\b(?:Failed|Pending|Running|Succeeded|Completed|Error|OOMKilled|Terminated|CrashLoopBackOff|Evicted"
    r"|exit(?:ed)? (?:with )?(?:code|status))\b"
)
STATUS_TABLE_LINES = 200


def _status_table(lg: ParsedLog) -> bool:
    """Whether a small file is a table of task states: most of its lines name
    a different worker first (a pod or task name) and a state, none is a log
    record with a header of its own."""
    if not 2 <= len(lg) <= STATUS_TABLE_LINES or any(o for o in lg.origin):
        return False
    named: set[str] = set()
    rows = 0
    for text in lg.text:
        for line in text.splitlines():
            first = line.split(None, 1)[0] if line.strip() else ""
            if (who := name_hint(first)) is not None and _STATUS_WORD.search(line):
                named.add(who)
                rows += 1
    return len(named) >= 2 and rows * 2 >= len(lg)


def _decode(raw: bytes) -> str:
    """A line's text: UTF-8, else Latin-1 (every byte is a character there,
    so a log written in a legacy encoding stays readable)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _read_lines(fh, w: _Window, size: int) -> list[tuple[int, bytes]]:  # type: ignore[no-untyped-def]
    """The whole lines of a window, numbered."""
    lead = 1 if w.start > 0 else 0
    fh.seek(w.start - lead)
    data = fh.read(w.end - w.start + lead)
    begin = 0
    if lead:
        begin = 1 if data[:1] == b"\n" else data.find(b"\n") + 1
        if begin == 0:  # no line starts in this window
            return []
    stop = len(data)
    if w.end < size:
        stop = data.rfind(b"\n") + 1
        if stop <= begin:
            return []
    body = data[begin:stop]
    start_off = w.start - lead + begin
    # The line number of the window's first line, counted back from the anchor.
    anchor_rel = w.anchor - start_off
    if anchor_rel <= len(body):
        first = w.anchor_line - body.count(b"\n", 0, max(anchor_rel, 0))
    else:  # the anchor is EOF past a trailing partial cut; count from the end
        first = w.anchor_line - body.count(b"\n") - data.count(b"\n", stop)
    raw = body.split(b"\n")
    if raw and raw[-1] == b"":
        raw.pop()
    return [(first + i, r) for i, r in enumerate(raw)]


def _without_instance_numbers(logs: dict[str | None, ParsedLog]) -> dict[str | None, ParsedLog]:
    """A Procfile runner's tags without their instance number ("worker0.1" ->
    "worker0") where the names still differ without it; kept where they do
    not (honcho's worker.1, worker.2, worker.3 of three lines named alike)."""
    bases = {k: re.sub(r"\.\d+$", "", k) if k else k for k in logs}
    if len(set(bases.values())) < len(bases):
        return logs
    return {bases[k]: lg for k, lg in logs.items()}


def _add_window(
    logs: dict[str | None, ParsedLog],
    texts: list[tuple[int, str]],
    chain: tuple[str, ...],
    w: _Window,
    year_hint: int,
    not_after: dt.datetime | None,
    cut_after: int | None,
    keyless: bool = False,
) -> None:
    """``keyless``: the wrapper's names of a writer are one for the whole file (left out)."""
    groups: dict[tuple[str | None, str | None], list[Line]] = defaultdict(list)
    items = (
        ((no, unwrap(t, chain, year_hint)) for no, t in texts)
        if chain
        else ((no, _bare(t)) for no, t in texts)
    )
    for no, u in join_partials(items):
        groups[(None if keyless else u.key, u.stream)].append(Line(no, u.text, u.ts))
    for (key, _stream), lines in groups.items():
        lines.sort(key=lambda ln: ln.no)
        if w.start > 0:
            lines = _trim_to_record_start(lines, w.hit_lines, year_hint)
        if not lines:
            continue
        lg = logs.get(key)
        if lg is None:
            lg = logs[key] = ParsedLog("", key)
        lg.add_segment(lines, year_hint, not_after, cut_after, w.hit_lines, cut_before=w.start > 0)


def _bare(text: str) -> Unwrapped:
    return Unwrapped(None, None, None, text)


def _trim_to_record_start(lines: list[Line], hit_lines: set[int], year_hint: int) -> list[Line]:
    """Drop the tail of a record cut by the window's start: lines before the
    first line that starts a record (or the first signature line)."""
    for i, ln in enumerate(lines):
        if ln.no in hit_lines or starts_record(ln.text, year_hint):
            return lines[i:]
    return []


def _sort_by_line(lg: ParsedLog) -> None:
    order = sorted(range(len(lg.line)), key=lg.line.__getitem__)
    if order == list(range(len(order))):
        return
    for name in (
        "line",
        "end_line",
        "ts",
        "ts_kind",
        "ts_bound",
        "severity",
        "origin",
        "tid",
        "kind",
        "text",
        "fields",
        "benign",
    ):
        col = getattr(lg, name)
        setattr(lg, name, [col[i] for i in order])


# -- many files at once ----------------------------------------------------------


@dataclass(frozen=True)
class LogTask:
    path: Path
    source: str
    year_hint: int
    not_after: dt.datetime | None


# Progress: (bytes read, bytes in all, files read, files in all). Called in
# the parent process only.
Progress = Callable[[int, int, int, int], None]

# Below this many bytes in all, one process reads everything (a pool costs
# more to start than it saves).
POOL_MIN_BYTES = 48 << 20
# A plain file bigger than this is scanned in ranges, in parallel.
RANGE_BYTES = 64 << 20


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def read_logs(
    tasks: list[LogTask],
    processes: int | None = None,
    progress: Progress | None = None,
    limits: Limits = Limits(),
    read_limits: ReadLimits = DEFAULT_LIMITS,
) -> list[list[ParsedLog] | OSError]:
    """Each task's logs (or the OSError that stopped it), in the order given.

    Big jobs are read by a pool of processes, one per core by default: the
    scan of each file (in ranges for a big one), then the parse of what the
    scan kept. Results are the same as reading the files one by one."""
    sizes: list[int] = []
    for t in tasks:
        try:
            sizes.append(t.path.stat().st_size)
        except OSError:
            sizes.append(0)
    total = sum(sizes)
    processes = cores() if processes is None else max(1, processes)
    done = 0
    if processes == 1 or total < POOL_MIN_BYTES or len(tasks) == 0:
        out: list[list[ParsedLog] | OSError] = []
        for t, size in zip(tasks, sizes, strict=True):
            out.append(_read_one(t, limits, read_limits))
            done += size
            if progress:
                progress(done, total, len(out), len(tasks))
        return out
    return _read_pooled(tasks, sizes, processes, progress, limits, read_limits)


def _read_one(t: LogTask, limits: Limits, read_limits: ReadLimits) -> list[ParsedLog] | OSError:
    try:
        return read_log(t.path, t.source, t.year_hint, t.not_after, limits, read_limits)
    except OSError as exc:
        return exc


def _parse_task(scan: Scan, t: LogTask, limits: Limits) -> list[ParsedLog] | OSError:
    try:
        return parse_scanned(scan, t.source, t.year_hint, t.not_after, limits)
    except OSError as exc:
        return exc


def _range_task(path: Path, start: int, stop: int, keep: tuple[int, int]) -> Part | OSError:
    try:
        return scan_range(path, start, stop, keep)
    except OSError as exc:
        return exc


def _read_pooled(
    tasks: list[LogTask],
    sizes: list[int],
    processes: int,
    progress: Progress | None,
    limits: Limits,
    read_limits: ReadLimits,
) -> list[list[ParsedLog] | OSError]:
    import concurrent.futures as cf
    import multiprocessing as mp

    from . import scan as scan_mod
    from .templates import classify

    # Build the matchers before the pool forks, so every process has them.
    scan_mod.engine()
    classify("")
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
    keep = (limits.max_hits, limits.max_frequent)
    results: list[list[ParsedLog] | OSError | None] = [None] * len(tasks)
    total, done = sum(sizes), 0
    parts: dict[int, list[Part | None]] = {}
    with cf.ProcessPoolExecutor(max_workers=processes, mp_context=ctx) as pool:
        pending: dict[cf.Future[Any], tuple[str, int, int, int]] = {}
        for i in sorted(range(len(tasks)), key=lambda k: -sizes[k]):
            t, size = tasks[i], sizes[i]
            try:
                plain = size <= RANGE_BYTES or detect_source(t.path, read_limits).plain
            except OSError as exc:
                results[i] = exc
                continue
            if not plain or size <= RANGE_BYTES:
                pending[pool.submit(_read_one, t, limits, read_limits)] = ("whole", i, 0, size)
                continue
            ranges = split_points(t.path, size, -(-size // RANGE_BYTES))
            parts[i] = [None] * len(ranges)
            for k, (a, b) in enumerate(ranges):
                pending[pool.submit(_range_task, t.path, a, b, keep)] = ("range", i, k, b - a)
        while pending:
            finished, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for fut in finished:
                what, i, k, nbytes = pending.pop(fut)
                value = fut.result()
                if what == "range":
                    if isinstance(value, OSError):
                        results[i] = value
                        parts.pop(i, None)
                    elif i in parts:
                        parts[i][k] = value
                        if all(p is not None for p in parts[i]):
                            got = [p for p in parts.pop(i) if p is not None]
                            merged = merge(tasks[i].path, sizes[i], got, keep)
                            pending[pool.submit(_parse_task, merged, tasks[i], limits)] = ("parse", i, 0, 0)
                    done += nbytes
                else:
                    results[i] = value
                    done += nbytes
                if progress:
                    progress(done, total, sum(r is not None for r in results), len(tasks))
    return [r if r is not None else OSError(f"{tasks[i].path}: not read") for i, r in enumerate(results)]

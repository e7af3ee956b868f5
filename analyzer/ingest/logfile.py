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
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from .scan import Hit, Scan, plain_copy, scan_file
from .worker_log import Line, ParsedLog, starts_record
from .wrappers import Unwrapped, detect, is_keyed, join_partials, unwrap


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
    path: Path, source: str, year_hint: int, not_after: dt.datetime | None, limits: Limits = Limits()
) -> list[ParsedLog]:
    """Every worker log in one file: usually one, several for a combined file."""
    with plain_copy(path) as (plain, damage):
        scan = scan_file(plain)
        logs = _parse(scan, source, year_hint, not_after, limits)
    if damage:
        for lg in logs:
            lg.notes.append(damage)
    return logs


def _thin(hits: list[Hit], limits: Limits) -> tuple[list[Hit], int, int]:
    """The hits to parse, how many alarms/others and how many frequent ones were left out."""
    frequent = [h for h in hits if h.frequent]
    other = [h for h in hits if not h.frequent] if frequent else hits
    kept_f, dropped_f = _ends(frequent, limits.max_frequent)
    kept_o, dropped_o = _ends(other, limits.max_hits)
    if not dropped_f and not dropped_o:
        return hits, 0, 0
    return sorted(kept_f + kept_o, key=lambda h: h.start), dropped_o, dropped_f


def _ends(hits: list[Hit], limit: int) -> tuple[list[Hit], int]:
    if len(hits) <= limit:
        return hits, 0
    half = limit // 2
    return hits[:half] + hits[-half:], len(hits) - 2 * half


def _windows(scan: Scan, hits: list[Hit], limits: Limits) -> list[_Window]:
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


def _parse(
    scan: Scan, source: str, year_hint: int, not_after: dt.datetime | None, limits: Limits
) -> list[ParsedLog]:
    hits, dropped, dropped_frequent = _thin(scan.hits, limits)
    wins = _windows(scan, hits, limits)
    logs: dict[str | None, ParsedLog] = {}
    chain: tuple[str, ...] | None = None
    parsed = 0
    with open(scan.path, "rb") as fh:
        for w in wins:
            lines = _read_lines(fh, w, scan.size)
            if not lines:
                continue
            parsed += sum(len(t) + 1 for _, t in lines)
            texts = [(no, raw.decode("utf-8", "replace")) for no, raw in lines]
            if chain is None:
                chain = detect([t for _, t in texts])
            cut_after = texts[-1][0] if w.end < scan.size else None
            _add_window(logs, texts, chain, w, year_hint, not_after, cut_after)
    if not logs:
        logs[None] = ParsedLog(source)
    out = []
    for key, lg in logs.items():
        lg.source, lg.key = source, key
        lg.n_lines, lg.n_bytes, lg.n_bytes_parsed = scan.n_lines, scan.size, min(parsed, scan.size)
        lg.wrappers = chain or ()
        # In a file whose lines name their worker, unnamed lines are the launcher's own.
        lg.launcher = key is None and is_keyed(lg.wrappers)
        if dropped:
            lg.notes.append(
                f"{dropped} warning/error lines in the middle of the file were only counted, not parsed "
                f"(the first and last {limits.max_hits // 2} were)"
            )
        lg.n_frequent_skipped = dropped_frequent
        _sort_by_line(lg)
        out.append(lg)
    return out


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


def _add_window(
    logs: dict[str | None, ParsedLog],
    texts: list[tuple[int, str]],
    chain: tuple[str, ...],
    w: _Window,
    year_hint: int,
    not_after: dt.datetime | None,
    cut_after: int | None,
) -> None:
    groups: dict[tuple[str | None, str | None], list[Line]] = defaultdict(list)
    items = ((no, unwrap(t, chain)) for no, t in texts) if chain else ((no, _bare(t)) for no, t in texts)
    for no, u in join_partials(items):
        groups[(u.key, u.stream)].append(Line(no, u.text, u.ts))
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

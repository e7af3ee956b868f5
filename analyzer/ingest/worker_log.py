"""Worker log → records: one row per log *record*, not per line.

A record is what a person reads as one message: a C++ log line with the
unheadered lines TF prints after it (``Example stragglers:`` task lists, gRPC
error details, ``Stats:`` blocks), a burst of lines from one thread and one
source file that TF printed as a unit (a BFC allocator dump), or a Python
traceback with its exception message. Plain prints (Keras progress, user
``print``) are records of their own.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ..tables import SEVERITIES
from . import emitted
from .lines import Header, parse_header
from .templates import (
    BARE_EXCEPTION,
    PROGRESS_LINE,
    STANDALONE,
    TEMPLATE_SEVERITY,
    TRACEBACK_KIND,
    classify,
    classify_many,
)
from .wrappers import app_json_line, strip_ansi

# Header lines from the same thread and source file this close together are one
# unit (TF prints an allocator dump as ~40 lines within a millisecond).
FOLD_WINDOW = dt.timedelta(milliseconds=5)
# A record never swallows more lines than this: a log that stops printing
# headers (a binary dump, a runaway print) must not become one giant record.
MAX_RECORD_LINES = 400
_SECOND = dt.timedelta(seconds=1)
_DAY = dt.timedelta(days=1)

_RANK = {sev: i for i, sev in enumerate(SEVERITIES)}

# A line without a header that still names an error: a typed exception or TF
# status (``UnavailableError``, ``Unavailable:``, ``RESOURCE_EXHAUSTED:``), or
# ERROR/FATAL in capitals. Only lines with no printed severity are judged so.
_ERRORISH = re.compile(
    r"\b[A-Z][a-z]\w*(?:Error|Exception)\b(?! rate)"
    r"|\b(?:Unavailable|Internal|Aborted|Unknown|ResourceExhausted|InvalidArgument|NotFound"
    r"|FailedPrecondition|DeadlineExceeded|DataLoss|Cancelled):\s"
    r"|\b(?:UNAVAILABLE|DEADLINE_EXCEEDED|RESOURCE_EXHAUSTED|INTERNAL|ABORTED|UNKNOWN|FAILED_PRECONDITION"
    r"|INVALID_ARGUMENT|NOT_FOUND|DATA_LOSS):\s"
    r"|\b(?:ERROR|FATAL|CRITICAL)\b|^\s*\w*Traceback \(most recent call last\)"
)

# IPython / Jupyter print a traceback's head as "ValueError    Traceback (most recent call last)".
_IPYTHON_TRACEBACK = re.compile(r"^\w+\s{2,}Traceback \(most recent call last\)")

_CHAIN = ("During handling of the above exception", "The above exception was the direct cause")


@dataclass(slots=True)
class Line:
    """One physical line of a log, with its wrapper (if any) already peeled off."""

    no: int  # 1-based line number in the file
    text: str
    wrap_ts: dt.datetime | None = None  # when a container runtime / collector stamped it


@dataclass
class Record:
    line: int
    end_line: int
    ts: dt.datetime | None
    ts_kind: str
    severity: str | None
    origin: str | None
    tid: int | None
    style: str  # cpp | python | traceback | plain
    parts: list[str] = field(default_factory=list)
    wrap_ts: dt.datetime | None = None

    @property
    def text(self) -> str:
        return "\n".join(self.parts).rstrip()


def _clean(raw: str) -> str:
    line = raw.rstrip("\n")
    if "\x1b" in line:  # a coloured logger's (loguru, colorlog, rich) terminal escapes
        line = strip_ansi(line)
    line = line.rstrip("\r")
    if "\r" in line:  # a progress bar redrawn in place: keep what was shown last
        line = next((seg for seg in reversed(line.split("\r")) if seg.strip()), "")
    if "\b" in line:
        line = re.sub(r"[^\n]?\x08", "", line)
    return line


def _pieces(line: str) -> list[str]:
    """A cleaned line as the records it holds: a print that came after a
    progress bar's last redraw, on its line (the bar ends in no newline), is
    a line of its own after the bar's."""
    if (glued := _AFTER_BAR.match(line)) is not None:
        return [line[: glued.end()], line[glued.end() :]]
    return [line]


# A Keras bar's redraw with a logging record's header glued after it
# ("3/8 [====>....] - ETA: 0s - loss: 12.3[2026-11-28 03:14:30,179] train:INFO: ...").
_AFTER_BAR = re.compile(
    r"^\s*\d+/\d+ \[[=>.]*\][^\n\[]*?(?=\[?\d{4}-\d\d-\d\d[ T]\d\d:\d\d|[IWEF]\d{4} \d\d:\d\d:\d\d"
    r"|(?:INFO|WARNING|ERROR|CRITICAL|DEBUG)[:\s])"
)


# Two clocks in one file (a wrapper's stamp before each line, and the
# process's own in its records' headers) that differ by this much, steadily,
# are two clocks: the wrapper's (a host or collector whose clock is off).
_CLOCKS_APART = dt.timedelta(seconds=1)
_CLOCKS_STEADY = dt.timedelta(seconds=0.5)


def _wrapper_offset(records: list[Record]) -> dt.timedelta:
    """How far the wrapper's stamps run ahead of the process's own clock, on
    the records that carry both (its median), where that is a steady offset
    of a second or more; else zero. A line with only the wrapper's stamp is
    then put on the process's clock, like the rest of its records."""
    gaps = sorted(r.wrap_ts - r.ts for r in records if r.ts is not None and r.wrap_ts is not None)
    if len(gaps) < 5:
        return dt.timedelta(0)
    mid = gaps[len(gaps) // 2]
    inner = gaps[len(gaps) // 10 : len(gaps) - len(gaps) // 10]
    if abs(mid) < _CLOCKS_APART or inner[-1] - inner[0] > _CLOCKS_STEADY:
        return dt.timedelta(0)
    return mid


def _same_unit(cur: Record, h: Header) -> bool:
    # (absl's Python logging shares the header's form, but each of its records
    # is a logging call of its own: "epoch finished" and the next print are two)
    return (
        cur.style == "cpp"
        and cur.origin is not None
        and ".py:" not in cur.origin
        and h.style == "cpp"
        and cur.tid is not None
        and cur.tid == h.tid
        and cur.origin is not None
        and cur.origin.rsplit(":", 1)[0] == h.origin.rsplit(":", 1)[0]
        and cur.ts is not None
        and h.ts is not None
        and abs(h.ts - cur.ts) <= FOLD_WINDOW
        and classify(h.msg)[0] in _FOLDABLE
    )


# Lines that belong to the record before them when printed as one unit: an
# allocator dump's own lines are recognised (to find a dump seen in part), yet
# they are the dump of the failure printed just before.
_FOLDABLE = (None, "oom.bfc_dump")


def numbered(lines: Iterable[str]) -> Iterator[Line]:
    return (Line(no, text) for no, text in enumerate(lines, start=1))


def fold_records(lines: Iterable[Line], year_hint: int) -> Iterator[Record]:
    """Group consecutive lines of one log into records, in file order."""
    cur: Record | None = None
    for ln, line in ((x, piece) for x in lines for piece in _pieces(_clean(x.text))):
        lineno = ln.no
        h = parse_header(line, year_hint) if line else None
        if h is not None:
            if cur is not None and _same_unit(cur, h) and len(cur.parts) < MAX_RECORD_LINES:
                cur.parts.append(h.msg)
                cur.end_line = lineno
                continue
            if cur is not None:
                yield cur
            cur = Record(
                lineno, lineno, h.ts, h.ts_kind, h.severity, h.origin, h.tid, h.style, [h.msg], ln.wrap_ts
            )
            continue
        if not line.strip():
            if cur is not None and cur.style in ("cpp", "traceback"):
                cur.parts.append("")  # blank lines inside a TF error message or traceback
            continue
        if line.startswith("Traceback (most recent call last)") or _IPYTHON_TRACEBACK.match(line):
            if cur is not None and cur.style == "traceback" and _chained(cur):
                cur.parts.append(line)
                cur.end_line = lineno
                continue
            if cur is not None:
                yield cur
            cur = Record(lineno, lineno, None, "none", "error", None, None, "traceback", [line], ln.wrap_ts)
            continue
        if BARE_EXCEPTION.match(line) and not (cur is not None and cur.style == "traceback"):
            # An exception without its traceback: an error record of its own.
            if cur is not None:
                yield cur
            cur = Record(lineno, lineno, None, "none", "error", None, None, "traceback", [line], ln.wrap_ts)
            continue
        continues = (
            cur is not None
            and len(cur.parts) < MAX_RECORD_LINES
            and not STANDALONE.match(line)
            and not (cur.style == "cpp" and PROGRESS_LINE.search(line))
            and (cur.style in ("cpp", "traceback") or (cur.style == "python" and line[:1].isspace()))
        )
        if continues:
            assert cur is not None
            cur.parts.append(line)
            cur.end_line = lineno
            continue
        if cur is not None:
            yield cur
        cur = Record(lineno, lineno, None, "none", None, None, None, "plain", [line], ln.wrap_ts)
    if cur is not None:
        yield cur


def starts_record(text: str, year_hint: int) -> bool:
    """Whether a line can only be the first line of a record (a header, a
    traceback, a standalone print), never the continuation of one."""
    line = _clean(text)
    return (
        parse_header(line, year_hint) is not None
        or line.startswith("Traceback (most recent call last)")
        or STANDALONE.match(line) is not None
    )


def _chained(rec: Record) -> bool:
    for part in reversed(rec.parts):
        if part.strip():
            return part.startswith(_CHAIN)
    return False


@dataclass
class ParsedLog:
    """One worker log's records as columns, before the worker is known.

    A file that interleaves several workers (a docker-compose dump) gives one
    ParsedLog per worker it names (``key``); ``id`` tells them apart."""

    source: str
    key: str | None = None
    line: list[int] = field(default_factory=list)
    end_line: list[int] = field(default_factory=list)
    ts: list[dt.datetime | None] = field(default_factory=list)
    ts_kind: list[str] = field(default_factory=list)
    ts_bound: list[float | None] = field(default_factory=list)
    severity: list[str | None] = field(default_factory=list)
    origin: list[str | None] = field(default_factory=list)
    tid: list[int | None] = field(default_factory=list)
    kind: list[str | None] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    fields: list[list[tuple[str, str]] | None] = field(default_factory=list)
    benign: list[bool] = field(default_factory=list)
    n_lines: int = 0  # lines in the file (all of them, parsed or not)
    n_bytes: int = 0
    n_bytes_parsed: int = 0  # bytes that were parsed in full (the rest was only scanned)
    wrappers: tuple[str, ...] = ()
    launcher: bool = False  # the lines of a combined file that no worker's prefix names
    n_frequent_skipped: int = 0  # epoch lines and the like in the middle of a long log, counted only
    notes: list[str] = field(default_factory=list)  # what went wrong reading it

    @property
    def id(self) -> str:
        return self.source if self.key is None else f"{self.source}#{self.key}"

    def __len__(self) -> int:
        return len(self.line)

    def first(self, kind: str) -> int | None:
        """Index of the first record of ``kind``."""
        try:
            return self.kind.index(kind)
        except ValueError:
            return None

    def field_of(self, i: int, key: str) -> str | None:
        return dict(self.fields[i] or ()).get(key)

    def add_segment(
        self,
        lines: Iterable[Line],
        year_hint: int,
        not_after: dt.datetime | None,
        cut_after: int | None = None,
        keep: frozenset[int] | set[int] = frozenset(),
        cut_before: bool = False,
    ) -> None:
        """Fold and append one run of consecutive lines. Lines without a time
        take the collector's stamp, else the previous timed record's time.

        ``cut_after``: the run was cut after this line, so a record ending
        there may be missing its continuation lines; it is dropped unless it
        holds a line of ``keep`` (a signature line is never dropped);
        ``cut_before``: the same at the run's start."""
        last_ts: dt.datetime | None = None
        records = list(fold_records((_app_json(ln) for ln in lines), year_hint))

        def kept(rec: Record) -> bool:
            return any(rec.line <= n <= rec.end_line for n in keep)

        if records and cut_after is not None and records[-1].end_line >= cut_after and not kept(records[-1]):
            records.pop()
        # A run that starts mid-file may start inside a record (a header line can
        # continue a burst from the same thread): its first record is only kept
        # when it holds a signature line.
        if records and cut_before and not kept(records[0]):
            records.pop(0)
        # Each untimed record lies between the timed ones around it: its time
        # is the previous one's (the next one's at the start), the gap its bound.
        nxt: list[dt.datetime | None] = [None] * len(records)
        upcoming: dt.datetime | None = None
        for i in range(len(records) - 1, -1, -1):
            nxt[i] = upcoming
            if records[i].ts is not None:
                upcoming = records[i].ts
        texts = [rec.text for rec in records]
        classified = classify_many(texts)
        shift = _wrapper_offset(records)
        for k, rec in enumerate(records):
            ts, ts_kind = rec.ts, rec.ts_kind
            bound: float | None = None
            if (
                ts is not None
                and ts_kind == "absl_noyear"
                and not_after is not None
                and ts > not_after + _DAY
            ):
                ts = ts.replace(year=ts.year - 1)
            if ts is None:
                if rec.wrap_ts is not None:
                    # (on the process's own clock, where the two clocks differ steadily)
                    ts, ts_kind = rec.wrap_ts - shift, "collector"
                    if last_ts is not None and ts.microsecond == 0 and ts <= last_ts < ts + _SECOND:
                        # A collector's stamp to the second (syslog, journald,
                        # Airflow) for a line printed after a record timed to the
                        # microsecond in that second: it came after that record.
                        ts, bound = last_ts, (rec.wrap_ts + _SECOND - last_ts).total_seconds()
                elif last_ts is not None:
                    ts, ts_kind = last_ts, "inferred"
                    if (after := nxt[k]) is not None and after >= last_ts:
                        bound = (after - last_ts).total_seconds()
                elif nxt[k] is not None:
                    # Before the first timed line: printed at that time or before,
                    # how long before is unknown (a kill's time is no progress's).
                    ts, ts_kind = nxt[k], "inferred_before"
                else:
                    ts_kind = "none"
            else:
                last_ts = ts
            text = texts[k]
            kind, fields, benign = classified[k]
            severity = rec.severity
            floor = TEMPLATE_SEVERITY.get(kind or "")
            if floor and (severity is None or _RANK[severity] < _RANK[floor]):
                severity = floor
            if severity is None and not benign and _ERRORISH.search(text):
                severity = "error"  # a pasted line without a header that names an error
            if kind is None and severity is not None and _RANK[severity] >= _RANK["warning"]:
                # No message of the catalogue: the emitters' own format strings.
                if (e := emitted.lookup(text)) is not None:
                    kind, fields = emitted.kind_of(e), emitted.fields_of(e)
            elif (
                kind == TRACEBACK_KIND
                and (exc := fields.get("exc_message"))
                and (e := emitted.lookup(exc)) is not None
            ):
                fields = {**fields, **emitted.fields_of(e)}
            self.line.append(rec.line)
            self.end_line.append(rec.end_line)
            self.ts.append(ts)
            self.ts_kind.append(ts_kind)
            self.ts_bound.append(bound)
            self.severity.append(severity)
            self.origin.append(rec.origin)
            self.tid.append(rec.tid)
            self.kind.append(kind)
            self.text.append(text)
            self.fields.append(sorted(fields.items()) if fields else None)
            self.benign.append(benign)


def _app_json(line: Line) -> Line:
    """A line a script's own JSON logger wrote, among lines of any kind (TF's
    on the same stream): read as its level, its message and its fields, its
    time the logger's."""
    text = strip_ansi(line.text) if "\x1b" in line.text else line.text  # a coloured JSON logger
    if not text.startswith("{") or (j := app_json_line(text)) is None:
        return line
    return Line(line.no, j.text, line.wrap_ts or j.ts)


def parse_log(lines: Iterable[str], source: str, year_hint: int, not_after: dt.datetime | None) -> ParsedLog:
    """Parse a whole worker log given as lines. ``year_hint`` and ``not_after``
    (the file's mtime) give the year to absl lines that print none: a date past
    the file's mtime belongs to the year before."""
    out = ParsedLog(source)
    items = list(numbered(lines))
    out.add_segment(items, year_hint, not_after)
    out.n_lines = len(items)
    return out

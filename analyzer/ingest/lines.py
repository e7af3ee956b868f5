"""Recognise the header of one log line: its time, severity, origin, pid/tid.

Formats (all seen in real TensorFlow output):

* absl, TF 2.16+ before absl is initialised:
  ``I0000 00:00:1795285805.270246    2057 port.cc:153] msg`` (epoch seconds)
* absl proper: ``I1121 10:11:12.345678 140234 file.cc:123] msg`` (no year)
* TF1 and early TF2: ``2019-06-01 10:11:12.345678: I tensorflow/core/x.cc:123] msg``
* Python logging, default format: ``INFO:tensorflow:msg`` (no time)
* Python logging with asctime: ``2026-11-21 10:11:12,345 - tensorflow - INFO - msg``
* Python logging in any other layout that starts with a date and names a level
  (``[2026-11-21 10:11:12,345] INFO trainer: msg``, ``2026-11-21T10:11:12Z ERROR msg``)
* glog/absl pasted without time or thread (``E tensorflow/core/x.cc:123] msg``,
  ``W1121 10:11:12.345678 file.cc:12] msg``) and protobuf's own
  ``[libprotobuf ERROR google/protobuf/io/coded_stream.cc:207] msg``
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

UTC = dt.timezone.utc

_ABSL = re.compile(
    r"^(?P<sev>[IWEF])(?P<md>\d{4}) (?P<h>\d{2}):(?P<m>\d{2}):(?P<s>\d+(?:\.\d+)?)\s+"
    r"(?:(?P<tid>\d+) )?(?P<origin>[\w.\-/]+:\d+)\] ?(?P<msg>.*)$"
)
# A glog line pasted without its time: the severity letter and the origin.
_GLOG_NOTIME = re.compile(r"^(?P<sev>[IWEF]) ?(?P<origin>[\w.\-/]+\.(?:cc|h|cpp|c|py):\d+)\] ?(?P<msg>.*)$")
# A script's short layout: a level's one letter and the time of day, no date
# ("I 22:12:14.358 worker-1 | waiting for feature snapshot").
_LETTER_CLOCK = re.compile(r"^(?P<sev>[DIWEFC]) \d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})? (?P<msg>.*)$")
_PROTOBUF = re.compile(
    r"^\[libprotobuf (?P<lvl>INFO|WARNING|ERROR|FATAL) (?P<origin>[^\]\s]+)\] ?(?P<msg>.*)$"
)
_LEVELS = r"DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL"
# Python logging in a layout of its own: a date first, a level word soon after
# (before or after the logger's name), then the message.
_PY_GENERIC = re.compile(
    r"^\[?(?P<date>\d{4}[-/]\d{2}[-/]\d{2}[ T]\d{2}:\d{2}:\d{2})(?:[.,](?P<frac>\d{1,9}))?"
    r"(?P<tz>Z|[+-]\d{2}:?\d{2})?\]?"
    rf"(?:[\s|:\-\[]+(?P<lvl1>{_LEVELS})\]?(?:[\s|\-]+(?P<logger1>[\w.]+)\s?[:|\-])?"
    rf"|[\s|:\-\[]+(?P<logger2>[\w.]+)\]?[\s|:\-\[]+(?P<lvl2>{_LEVELS})\]?(?:\s*[:|\-])?)"
    r"(?:\s+|:(?P<logger3>[\w.]+):)(?P<msg>.*)$"
)
# Any other line that starts with a date and time: a logging layout of the
# script's own. Its level is taken when it stands among header fields only
# (a bracketed, braced or parenthesised field, key=value, a pid, a file:line,
# a module's dotted name, at most two bare words such as a logger's name);
# a level word further into the text is the message's, not the line's.
_DATE_LEAD = re.compile(
    # (asctime's ",mmm" may be followed by "%(msecs)03d" again: "04:51:08,889.889")
    r"^[\[(]?(?P<date>\d{4}[-/]\d{2}[-/]\d{2}[ T]\d{2}:\d{2}:\d{2})(?:[.,](?P<frac>\d{1,9}))?(?:[.,]\d{1,9})?"
    r"(?P<tz>Z|[+-]\d{2}:?\d{2}| ?UTC| ?GMT)?[\])]?(?=[\s|:\-\[{(,]|$)[\s,|:\-]*"
)
_HEAD_FIELD = re.compile(
    rf"\[?(?P<lvl>{_LEVELS})\]?(?![\w.])[\]\s:|\-]*"
    # glog's one letter among the fields ("[date] 11705 I mw.train: msg")
    r"|(?P<letter>[DIWEFC])\s+"
    r"|(?:\[[^\]]{0,80}\]|\{[^}]{0,80}\}|\([^)]{0,80}\)|<[^>]{0,40}>|\w+=\S+|(?P<word>\S+))[\s:|\-]*"
)
_PLAIN_WORD = re.compile(r"[A-Za-z][a-z]*")
_LOGGER_COLON = re.compile(r"[\w.]+:\s+")
_MAX_FIELDS = 6
# (Horovod prints the same inside brackets: "[2021-02-08 09:24:59.555830: E /path/x.cc:548] msg";
# a redacted path keeps its marks: "<redacted>/tensorflow/core/x.cc:670".)
_TF_DATE = re.compile(
    r"^\[?(?P<date>(?:\d{4}-\d{2}-\d{2} )?\d{2}:\d{2}:\d{2}(?:\.\d+)?): (?P<sev>[IWEF]) "
    r"(?P<origin>[^\s\]]+:\d+)\] ?(?P<msg>.*)$"
)
_PY_PLAIN = re.compile(r"^(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL|FATAL):(?P<logger>[\w.]+):(?P<msg>.*)$")
_PY_ASCTIME = re.compile(
    r"^(?P<date>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}),(?P<ms>\d{3}) - (?P<logger>[\w.]+) - "
    r"(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL|FATAL) - (?P<msg>.*)$"
)

_ABSL_SEV = {"I": "info", "W": "warning", "E": "error", "F": "fatal"}
# A level's one letter in a logging format of the script's own (glog's four, and Python's D and C).
_LETTER_SEV = {**_ABSL_SEV, "D": "debug", "C": "fatal"}
_PY_SEV = {
    "DEBUG": "debug",
    "INFO": "info",
    "WARNING": "warning",
    "ERROR": "error",
    "CRITICAL": "fatal",
    "FATAL": "fatal",
    "WARN": "warning",
}


@dataclass(frozen=True, slots=True)
class Header:
    style: str  # "cpp" (absl / TF date) or "python"
    ts: dt.datetime | None
    ts_kind: str
    severity: str | None  # None: a line with a time and no level
    origin: str
    tid: int | None
    msg: str


def from_epoch(secs: float) -> dt.datetime | None:
    """A UTC time from epoch seconds; None for a value no clock prints (a
    damaged line can carry any number of digits)."""
    try:
        return dt.datetime.fromtimestamp(secs, UTC)
    except (OverflowError, ValueError, OSError):
        return None


def _absl_time(m: re.Match[str], year_hint: int) -> tuple[dt.datetime | None, str]:
    md = m["md"]
    if md == "0000":
        # TF 2.16+ prints "00:00:<epoch seconds>" before absl is initialised.
        secs = int(m["h"]) * 3600 + int(m["m"]) * 60 + float(m["s"])
        ts = from_epoch(secs)
        return (ts, "absl_epoch") if ts is not None else (None, "none")
    month, day = int(md[:2]), int(md[2:])
    sec = float(m["s"])
    try:
        base = dt.datetime(year_hint, month, day, int(m["h"]), int(m["m"]), tzinfo=UTC)
        return base + dt.timedelta(seconds=sec), "absl_noyear"
    except (ValueError, OverflowError):  # 29 Feb in a year that has none, or a garbled line
        return None, "none"


def _date(text: str) -> dt.datetime | None:
    try:
        return dt.datetime.fromisoformat(text).replace(tzinfo=UTC)
    except ValueError:
        return None


# A logfmt logger's line (Go's logrus, Python's structlog and logfmter):
# "ts=2026-11-24T19:01:27.787993Z level=info logger=train event=train step=30".
_LOGFMT = re.compile(
    r"^(?:ts|time|timestamp)=\"?(?P<date>\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2})(?:[.,](?P<frac>\d+))?"
    r"(?P<tz>Z|[+-]\d{2}:?\d{2})?\"?\s+(?:level|lvl|severity)=\"?(?P<lvl>[A-Za-z]+)\"?"
    r"(?:\s+logger=\"?(?P<logger>[\w.-]+)\"?)?\s*(?P<msg>.*)$"
)


# absl's own first words, at warning level whatever a logger around them says.
_ABSL_FIRST = "WARNING: All log messages before absl::InitializeLog"


def parse_header(line: str, year_hint: int) -> Header | None:
    """The header of ``line``, or None when it has none (a continuation or a plain print).

    A logger that re-logs a child process's output at one level (a pipeline
    framework's ``- ERROR -`` on every line of the child's stderr) wraps whole
    lines of TensorFlow's: such a line keeps its own level, and its own time
    where it has one."""
    h = _parse_header(line, year_hint)
    if h is None or h.style != "python" or h.msg[:1] not in "IWEF":
        return h
    if h.msg.startswith(_ABSL_FIRST):
        return Header(h.style, h.ts, h.ts_kind, "warning", h.origin, h.tid, h.msg)
    inner = _parse_header(h.msg, year_hint)
    if inner is None or inner.severity is None:
        return h
    if inner.ts is None:
        return Header(inner.style, h.ts, h.ts_kind, inner.severity, inner.origin, inner.tid, inner.msg)
    return inner


def _parse_header(line: str, year_hint: int) -> Header | None:
    c = line[:1]
    if c in "IWEF" and (m := _ABSL.match(line)):
        ts, kind = _absl_time(m, year_hint)
        tid = int(m["tid"]) if m["tid"] else None
        return Header("cpp", ts, kind, _ABSL_SEV[m["sev"]], m["origin"], tid, m["msg"])
    if c.isdigit():
        if m := _TF_DATE.match(line):
            return _tf_date(m)
        if m := _PY_ASCTIME.match(line):
            ts = _date(m["date"])
            if ts is not None:
                ts = ts.replace(microsecond=int(m["ms"]) * 1000)
            kind = "python_logging" if ts else "none"
            return Header("python", ts, kind, _PY_SEV[m["lvl"]], m["logger"], None, m["msg"])
        if m := _PY_GENERIC.match(line):
            return _py_generic(m)
        if m := _DATE_LEAD.match(line):
            return _date_led(m, line, year_hint)
    if c == "t" and (m := _LOGFMT.match(line)):
        ts = _lead_time(m)
        sev = _PY_SEV.get(m["lvl"].upper(), "info")
        return Header(
            "python", ts, "python_logging" if ts else "none", sev, m["logger"] or "", None, m["msg"]
        )
    if c in "DIWECF" and (m := _PY_PLAIN.match(line)):
        return Header("python", None, "none", _PY_SEV[m["lvl"]], m["logger"], None, m["msg"])
    if c in "IWEF" and (m := _GLOG_NOTIME.match(line)):
        return Header("cpp", None, "none", _ABSL_SEV[m["sev"]], m["origin"], None, m["msg"])
    if c in "DIWEFC" and (m := _LETTER_CLOCK.match(line)):
        # Its time of day names no date: the line's time is its neighbours'.
        return Header("python", None, "none", _LETTER_SEV[m["sev"]], "", None, m["msg"])
    if c == "[":
        if m := _PROTOBUF.match(line):
            return Header("cpp", None, "none", _PY_SEV[m["lvl"]], m["origin"], None, m["msg"])
        if m := _TF_DATE.match(line):
            return _tf_date(m)
        if m := _PY_GENERIC.match(line):
            return _py_generic(m)
        if m := _DATE_LEAD.match(line):
            return _date_led(m, line, year_hint)
    return None


def _tf_date(m: re.Match[str]) -> Header:
    ts = _date(m["date"]) if "-" in m["date"] else None  # a pasted line cut before its date
    return Header("cpp", ts, "tf_date" if ts else "none", _ABSL_SEV[m["sev"]], m["origin"], None, m["msg"])


def _py_generic(m: re.Match[str]) -> Header:
    ts = _lead_time(m)
    level = m["lvl1"] or m["lvl2"]
    logger = m["logger1"] or m["logger2"] or m["logger3"] or ""
    return Header("python", ts, "python_logging" if ts else "none", _PY_SEV[level], logger, None, m["msg"])


def _date_led(m: re.Match[str], line: str, year_hint: int) -> Header:
    """A line that starts with a date in a layout of its own: its level when
    one stands among the header fields after the date, else none. A date
    before a whole line of another layout is a collector's stamp: the line's
    own header is read, with the stamp's time where it has none."""
    ts = _lead_time(m)
    if (inner := parse_header(line[m.end() :], year_hint)) is not None:
        if inner.ts is None and ts is not None:
            return Header(inner.style, ts, "collector", inner.severity, inner.origin, inner.tid, inner.msg)
        return inner
    kind = "python_logging" if ts else "none"
    pos, words, origin, last, last_at = m.end(), 0, "", "", m.end()
    for _ in range(_MAX_FIELDS):
        f = _HEAD_FIELD.match(line, pos)
        if f is None or f.end() == pos:
            break
        if f["lvl"]:
            if last == "NCCL":
                # NCCL's own header (src/debug.cc: "[time] host:pid:tid [dev] file:line
                # NCCL WARN msg"): "NCCL WARN" is the message's, as NCCL's templates read it.
                source = next(iter(origin_files(line[m.end() : last_at])), origin)
                return Header("cpp", ts, kind, _PY_SEV[f["lvl"]], source, None, line[last_at:])
            return Header("python", ts, kind, _PY_SEV[f["lvl"]], origin, None, line[f.end() :])
        last, last_at = f["word"] or "", pos
        if f["letter"]:
            # A level letter only where a logger's name follows it ("I mw.train: msg").
            rest = line[f.end() :]
            if (logger := _LOGGER_COLON.match(rest)) is None:
                break
            return Header("python", ts, kind, _LETTER_SEV[f["letter"]], origin, None, rest[logger.end() :])
        if (w := f["word"]) is not None:
            if _PLAIN_WORD.fullmatch(w):
                words += 1
                if words > 2:
                    break
            origin = origin or w.rstrip(":")
        pos = f.end()
    return Header("python", ts, kind, None, "", None, line[m.end() :])


_ORIGIN_FILE = re.compile(r"[\w.\-/]+\.(?:cc|h|cpp|c|cu|py):\d+")


def origin_files(text: str) -> list[str]:
    """The ``file.cc:123`` origins named in a header's fields."""
    return _ORIGIN_FILE.findall(text)


def _lead_time(m: re.Match[str]) -> dt.datetime | None:
    ts = _date(m["date"].replace("/", "-").replace("T", " "))
    if ts is not None:
        if m["frac"]:
            ts = ts.replace(microsecond=int(m["frac"][:6].ljust(6, "0")))
        if m["tz"] and m["tz"][0] in "+-":
            sign = 1 if m["tz"][0] == "+" else -1
            hh, mm = int(m["tz"][1:3]), int(m["tz"][-2:])
            ts -= sign * dt.timedelta(hours=hh, minutes=mm)
    return ts

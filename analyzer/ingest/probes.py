"""A connectivity check's output: someone outside the cluster tried the
tasks' ports with netcat, curl or bash's ``/dev/tcp`` and kept what it
printed (``netcheck.txt``, a terminal capture of ``nc -zv host port``).

Each result line names one address and what became of the attempt, in the
words its program prints (the format strings of each):

* OpenBSD netcat (``nc.c``): ``Connection to HOST PORT port [tcp/*] succeeded!``
  (newer: ``Connection to HOST port PORT [tcp/*] succeeded!``) and
  ``nc: connect to HOST port PORT (tcp) failed: Connection refused`` /
  ``... (tcp) timed out: Operation now in progress``;
* traditional netcat (``nc.traditional``): ``HOST [IP] PORT (?) open`` and
  ``HOST [IP] PORT (?) : Connection refused``;
* curl (``lib/connect.c``): ``curl: (7) Failed to connect to HOST port PORT
  after N ms: Connection refused`` (curl 7.83+; before it without ``after N ms``),
  ``curl: (28) Failed to connect to HOST port PORT after N ms: Timeout was reached``;
* bash: ``bash: /dev/tcp/HOST/PORT: Connection refused``.

Such a file is an observer's record, no worker's log: it is read as the
launcher's. Its lines carry no time; a time the capture states before its
checks (a ``# ... 2026-11-28T07:32:15Z`` comment, the output of ``date``) is
when they ran, or earlier: the checks take it as the time they ran at or after.
"""

from __future__ import annotations

import datetime as dt
import re

_HOST = r"(?P<host>\[?[\w.:-]+?\]?)"
_PORT = r"(?P<port>\d{2,5})"
_PORT2 = r"(?P<port2>\d{2,5})"
_WHY = r"(?P<why>Connection refused|Connection timed out|No route to host|timed out|Timeout was reached)"
# One pattern a program, each with the same groups: host, port, and either ok
# (the port answered) or why (what became of the attempt).
RESULTS = tuple(
    re.compile(p)
    for p in (
        # OpenBSD netcat's success, older and newer word order
        rf"Connection to {_HOST} (?:{_PORT} port|port {_PORT2}) \[\w+/[^\]]*\] (?P<ok>succeeded)!",
        # ... and its failure
        rf"\bconnect to {_HOST} port {_PORT} \(\w+\) (?:failed: )?{_WHY}",
        # traditional netcat
        rf"^\S+ \[(?P<host>[\d.:a-fA-F]+)\] {_PORT} \([^)]*\) (?:(?P<ok>open)|: {_WHY})",
        # curl
        rf"Failed to connect to {_HOST} port {_PORT}\b[^:\n]*: {_WHY}",
        # bash's /dev/tcp
        rf"/dev/tcp/(?P<host>[\w.:-]+)/{_PORT}: {_WHY}",
    )
)
# What a probe capture holds besides its results: the commands typed, comments,
# the programs' chatter around an attempt.
_AROUND = re.compile(
    r"^(?:\$|#|>|\+ )|^(?:Trying |Connected to |Escape character|Connection closed|telnet: |Ncat: |curl: |"
    r"bash: connect: |real\s|user\s|sys\s)|^\s*$"
)
_REASON = {
    "Connection refused": "connection_refused",
    "Connection timed out": "connect_timeout",
    "timed out": "connect_timeout",
    "Timeout was reached": "connect_timeout",
    "No route to host": "no_route",
}


def probe_result(line: str) -> tuple[str, str] | None:
    """The address (``host:port``) one result line names and what became of
    the attempt: ``open`` or a reason (``connection_refused``,
    ``connect_timeout``, ``no_route``); None for any other line."""
    for pattern in RESULTS:
        if (m := pattern.search(line)) is not None:
            found = m.groupdict()
            port = found["port"] or found.get("port2")
            outcome = "open" if found.get("ok") else _REASON.get(found.get("why") or "", "connect_failed")
            return f"{m['host'].strip('[]')}:{port}", outcome
    return None


def tells_probes(head: str) -> bool:
    """Whether a file is a connectivity check's capture: its lines are results
    (at least two), the commands that printed them, comments and the programs'
    chatter, and nothing else (a worker's log with one check in it stays the
    worker's)."""
    results = 0
    for line in head.split("\n")[:400]:
        if probe_result(line) is not None:
            results += 1
        elif not _AROUND.match(line):
            return False
    return results >= 2


_ISO = re.compile(
    r"(?<!\d)(?P<d>\d{4}-\d{2}-\d{2})[T ](?P<t>\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?)(?P<z>Z|[+-]\d{2}:?\d{2}|\s?UTC)?(?!\d)"
)
# date(1)'s default output: "Sat Nov 28 07:32:15 UTC 2026".
_DATE_OUTPUT = re.compile(
    r"^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?P<mon>[A-Z][a-z]{2}) +(?P<day>\d{1,2}) (?P<t>\d{2}:\d{2}:\d{2}) "
    r"(?:(?P<zone>[A-Z]{2,5}) )?(?P<year>\d{4})\s*$"
)


def stated_time(line: str) -> dt.datetime | None:
    """The time a capture's own line states: a comment (``# ...``) holding
    an ISO date and time, or ``date``'s output; None for any other line (a
    result line's numbers are no time). Without a zone, UTC."""
    s = line.strip()
    if s.startswith("#"):
        m = _ISO.search(s)
        if m is None:
            return None
        zone = (m["z"] or "").strip()
        zone = "+00:00" if zone in ("", "Z", "UTC") else zone
        try:
            return dt.datetime.fromisoformat(f"{m['d']}T{m['t'].replace(',', '.')}{zone}").astimezone(dt.UTC)
        except ValueError:
            return None
    m = _DATE_OUTPUT.match(s)
    if m is None or m["zone"] not in (None, "UTC", "GMT"):
        return None
    try:
        return dt.datetime.strptime(
            f"{m['year']} {m['mon']} {m['day']} {m['t']}", "%Y %b %d %H:%M:%S"
        ).replace(tzinfo=dt.UTC)
    except ValueError:
        return None

"""What the fast scanner looks for: the lines of a big log that may matter.

Most of a long worker log is noise (progress bars, INFO chatter, the user's
own prints). The scanner finds the few lines that matter at the speed of a
multi-pattern matcher, and only those (with their records and some context)
are parsed in full. A line matters when it matches a signature:

* every message's signature (``messages.py``): what TF prints about the
  cluster coming up, training progress and known failures;
* any line logged at warning level or above, in every header format, and any
  Python traceback or exception line: unknown errors matter most of all;
* words that name failures no template knows yet (gRPC status names, signals,
  host OOM, NaN, preemption).

Every signature is written in the subset of regex syntax that POSIX ERE
(``grep -E``), RE2 (pyarrow's matcher) and Python's ``re`` read the same
way, so the benchmark can hand the very same list to grep.
"""

from __future__ import annotations

from dataclasses import dataclass

from .messages import scan_words
from .templates import BENIGN, TEMPLATES


@dataclass(frozen=True)
class Signature:
    name: str
    regex: str
    # A failure or warning: parsed with the records around it, not alone.
    alarm: bool
    # Printed over and over (an epoch line): only the first and last are kept.
    frequent: bool = False


# Header formats at warning level and above (lines.py parses them fully).
_ALARM = (
    # absl: W1121 10:11:12.345678 140234 file.cc:123] and TF 2.16+'s E0000 00:00:<epoch>
    Signature("absl_alarm", r"[WEF][0-9]{4} [0-9]{2}:[0-9]{2}:[0-9.]+ +[0-9]+ [^ ]+:[0-9]+\]", True),
    # TF1: 2019-06-01 10:11:12.345678: E tensorflow/core/x.cc:123]
    Signature("tf_date_alarm", r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9:.]+: [WEF] [^ ]+:[0-9]+\]", True),
    Signature("py_alarm", r"(WARNING|ERROR|CRITICAL|FATAL):[A-Za-z_][A-Za-z0-9_.]*:", True),
    Signature("py_asctime_alarm", r" - (WARNING|ERROR|CRITICAL|FATAL) - ", True),
    # Python logging in other layouts: a time, then a level word soon after.
    Signature("py_any_alarm", r"[0-9]{2}:[0-9]{2}:[0-9]{2}.{0,60}(WARNING|WARN|ERROR|CRITICAL|FATAL)", True),
    # glog pasted without its time, and protobuf's own lines.
    Signature("glog_notime_alarm", r"[WEF] [A-Za-z0-9_/.-]+[.](cc|h|cpp):[0-9]+\] ", True),
    Signature("protobuf_alarm", r"\[libprotobuf (WARNING|ERROR|FATAL)", True),
    Signature("traceback", r"Traceback \(most recent call last\)", True),
    Signature("exception", r"[A-Za-z]+(Error|Exception): ", True),
    # Words of failures no message knows yet (the catalogue's phrases).
    Signature("grpc", scan_words("grpc"), True),
    Signature("process", scan_words("process"), True),
    Signature("numeric", scan_words("numeric"), True),
    Signature("data", scan_words("data"), False),
    # A script's own JSON logger: its step, epoch and loss fields (read as progress once rendered).
    Signature("json_progress", r'"(step|global_step|epoch|loss)" *: *[-0-9NI]', False, frequent=True),
)


def signatures() -> tuple[Signature, ...]:
    """Every message's signature (each once), then the alarm words."""
    seen: dict[str, Signature] = {}
    for t in (*TEMPLATES, *BENIGN):
        if t.signature not in seen:
            seen[t.signature] = Signature(t.kind, t.signature, alarm=False, frequent=t.frequent)
    return (*seen.values(), *_ALARM)


def combined(group: str = "all") -> str:
    """One alternation of every signature of a group: all, alarm, frequent."""
    chosen = [
        s
        for s in signatures()
        if group == "all" or (group == "alarm" and s.alarm) or (group == "frequent" and s.frequent)
    ]
    return "|".join(f"({s.regex})" for s in chosen)


def grep_patterns() -> list[str]:
    """The list for ``grep -E -f``: one signature per line."""
    return [s.regex for s in signatures()]

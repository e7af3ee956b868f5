"""A launcher's or runner's own words on how the workers it started ended
("worker:0 exited with code 1", "chief:0 exited rc=1", "worker 2 finished: exit 1"):
read by discovery (a file of such lines is a runner's log, even without one
TensorFlow line) and by ingest (each worker's exit status)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..inputs import key_hint

# A launcher's own line on how a worker it started ended: "worker:0 exited with
# code 1", "worker-2 terminated by signal 9 (SIGKILL)", "rank 3 killed by signal SIGTERM",
# "worker:1 exited: signal 9".
ENDED = re.compile(
    r"(?P<who>\b(?:chief|worker|master|ps|evaluator|task|rank)[\s:_#-]?\d{1,4})\b[^\n]{0,40}?\b"
    # "exited with code 1", "exit status 2", a launcher's bare "exited with 1 after 12.1s";
    # A runner's terse "worker 0 finished: exit 1", "exited=137".
    r"(?:exit(?:ed)?(?:(?: with)?(?: exit)? (?:(?:code|status|rc)[:=]?\s*|(?<=with ))|[:=]\s*|\s)"
    r"(?P<code>-?\d+)\b(?!\.\d|\s*(?:s|secs?|seconds|ms|min|times)\b)"
    r"|(?:(?:terminated|killed) by|exited(?: by| due to| with| on)?:?) signal (?:(?P<signo>\d+)|(?:SIG)?(?P<signame>[A-Z]+))"
    # A launcher's own kill at its deadline: "chief-0 on 10.12.0.5: killed by launcher (no progress for 30s)".
    r"|(?P<killer>killed by (?:the )?(?:launcher|runner|scheduler|supervisor|watchdog|timeout|deadline))\b)",
    re.I,
)


def who(m: re.Match[str], ranks: dict[int, str] | None = None) -> str | None:
    """The worker an ``ENDED`` line names ("worker:0", "rank 3", "worker-2");
    a rank by the task the launcher said it runs, where it said."""
    said = re.fullmatch(r"(?i)rank[\s#:_-]?(\d+)", m["who"].strip())
    if ranks and said and int(said[1]) in ranks:
        return ranks[int(said[1])]
    return key_hint(re.sub(r"[\s#:_]", "-", m["who"]))


def ended_named(texts: Iterable[str]) -> set[str]:
    """The workers whose ends these texts tell, a line at a time (a record's
    continuation lines may be a launcher's next reports)."""
    named = {who(m) for t in texts for line in t.split("\n") if (m := ENDED.search(line))}
    named.discard(None)
    return {w for w in named if w is not None}


def tells_ends(head: str) -> bool:
    """Whether a file's first bytes tell how two or more workers ended: a
    runner's own log (a launcher script's, a job runner's)."""
    return len(ended_named(head.split("\n")[:2000])) >= 2

"""HG002 collective-timed-out: workers gave up waiting in a collective after its timeout; one never came.

## What it means
The job set a timeout on its collectives
(`tf.distribute.experimental.CommunicationOptions(timeout_seconds=...)`), and
some workers hit it: TensorFlow aborted their all-reduce with
`DEADLINE_EXCEEDED: Collective has timed out during execution` (or `waiting
for other workers`). Every member must join a collective; the workers that
timed out were waiting for one that did not. The worker named is the one
that never timed out, because it never entered the collective: it was
blocked somewhere else (in the script's own code, a data loader, a lock) or
stopped without a word. The timeouts, and everything the workers then say
about each other (a leader gone, connections refused), are echoes of it.

## Why it happens
A worker blocked outside TensorFlow (a callback or data loader that never
returns, a deadlock in the script, storage that hangs), a worker that
skipped or added a collective (a branch on the task index around a
reduction), or a worker that stopped without an error. Without the timeout
the same job hangs silently until something kills it.

## What to do
Look at the named worker's last lines below: they say where it stopped.
Take its stack while it hangs (`py-spy dump --pid`, or
`faulthandler.dump_traceback_later` in the script), and check that every
worker runs the same collectives in the same order. Keep the collective
timeout: it turned a silent hang into this error.
"""

from __future__ import annotations

from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.ingest.messages import messages_tagged
from mwms_doctor.rows import evidence, time_key

CODE = "HG002"
NAME = "collective-timed-out"
CLASS = "hang"
SEVERITY = "error"
REQUIRES = ("events", "workers")
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()


def check(job: Job) -> Iterator[Hit]:
    stalls = messages_tagged("stall")
    rows = sorted(job.rows.of(stalls) + job.rows.tracebacks_with(stalls), key=time_key)
    if not rows:
        return
    first: dict[str, dict[str, object]] = {}
    for r in rows:
        first.setdefault(r["worker"], r)
    waited = list(first)
    named = [w for w in job.facts.live if not w.startswith("?")]
    absent = [w for w in named if w not in first]
    lead = rows[0]
    said = str(lead["text"]).strip().splitlines()[0][:160]
    ev = [evidence(r, "timed out") for r in first.values()][:3]
    also: list[str] = []
    if len(absent) == 1:
        subject = absent[0]
        ev += [evidence(r, "its last line") for r in job.rows.last(subject, 1)]
        who = f"{subject} never joined it: it did not time out, so it never entered the collective"
        confidence = 0.75
    else:
        subject, also = (absent[0], absent[1:]) if absent else ("?", [])
        who = (
            f"{', '.join(absent)} did not time out; which of them kept the others waiting, this evidence alone cannot say"
            if absent
            else "every worker here timed out: the one they waited for is not in this evidence, or they did not "
            "all issue the same collective"
        )
        confidence = 0.5
    yield Hit(
        subject=subject,
        also=also,
        summary=(f"{', '.join(waited)} gave up waiting in a collective after its timeout ({said}); {who}."),
        evidence=ev,
        confidence=confidence,
        ts=lead["ts"],
        local=False,
        facts={"timed_out": waited, "never_joined": absent},
    )

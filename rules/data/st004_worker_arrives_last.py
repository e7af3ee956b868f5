"""ST004 worker-arrives-last: one worker prints every step after all the others.

## What it means
Every worker printed the same steps of training, and one of them printed
each of them after every other worker, steadily (nine points in ten or more,
over six or more steps, with three workers or more): it reaches each step
later than they do. Under MultiWorkerMirroredStrategy each step ends in an
all-reduce that waits for every worker, so the others spend that lag waiting
for it, and the whole job runs at its pace, even though every worker's step
takes the same time and no timing of its own stands apart (the job moves in
lock-step). The order is read from one stream that holds every worker's lines
(a CI step log, a merged console, a log archive: the order its collector
wrote them in), or from the workers' own clocks where they were aligned
closer than the lag. Where times tell, the lag must be a tenth of a second or
more and a tenth of the time between steps or more: a print's jitter is no
lag.

## Why it happens
Something this worker does between steps that the others do not: a slower
host or a CPU quota, a sleep or a blocking call in its own code after each
step (its logging, a metrics push, a callback), a slower disk or network for
what it reads or writes each step.

## What to do
Look at what this worker does between its steps and at its host: its CPU
quota and throttling, its load, any per-step work only it runs (a callback, a
summary writer, a sync to storage). Profile a few steps on it (the
TensorBoard profiler's trace viewer shows the gap before its all-reduce).
"""

from __future__ import annotations

from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import evidence
from mwms_doctor.series import arrives_last

CODE = "ST004"
NAME = "worker-arrives-last"
CLASS = "straggler"
SEVERITY = "warning"
REQUIRES = ("events",)
PRECEDENCE = "specific"
# A profile, the script's own timings or Keras' callback warning say it more directly.
DEFERS_TO: tuple[str, ...] = ("ST001", "ST002", "ST003")


def check(job: Job) -> Iterator[Hit]:
    late = arrives_last(job)
    if late is None:
        return
    w = late.worker
    if late.lag_s is not None:
        by = f", {late.lag_s:.2f} s after the worker before it (median"
        by += f"; {late.period_s:.2f} s between its steps)" if late.period_s else ")"
    else:
        by = " (the order its collector wrote the lines in; their times do not tell by how much)"
    yield Hit(
        subject=w,
        summary=(
            f"{w} reached {late.last_at} of the {late.points} steps every worker printed after all the "
            f"others{by}: every all-reduce waits for it, so the job runs at its pace."
        ),
        evidence=[
            evidence(r, "late: the step's last" if r["worker"] == w else "the same step") for r in late.rows
        ],
        # Timed lags are measured; an order alone is likelier to have another cause.
        confidence=0.7 if late.lag_s is not None else 0.55,
        ts=None,
        facts={"points": late.points, "last_at": late.last_at, "lag_s": late.lag_s, "basis": late.basis},
    )

"""ST002 worker-timings-apart: the script's own timings show one worker slower than the rest.

## What it means
The training script prints, per step or per epoch, how long parts of the
step took (`input_ms=201`, `data_time: 0.8`, `step_ms=12`), and one worker
stands apart from all the others: its input takes several times as long as
theirs, or its step, which includes the wait for the others inside the
all-reduce, takes a fraction of theirs (it arrives last and waits for no
one). Every all-reduce waits for the last member, so the whole job runs at
this worker's pace. Read from the numbers the script prints, compared across
at least three workers (with two, either could be the odd one); profiles,
when there are some, are read by ST001.

## Why it happens
Something outside the model's step is slower on this worker: its input
pipeline (slower disk or network, larger records in its shard, Python
featurisation on fewer cores), a busy or throttled host (a noisy neighbour,
a CPU quota, thermal throttling), or work only this worker does.

## What to do
Look at this worker's host and input pipeline: compare its CPU quota and
load (`top`, the container's CPU limit and throttling counters), its disk or
network to the data, and its shard's size. Prefetch and parallelise the
input (`dataset.prefetch(tf.data.AUTOTUNE)`, `num_parallel_calls`), move
Python featurisation into `tf.data`, and give every worker the same resources.
"""

from __future__ import annotations

from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import evidence
from mwms_doctor.series import standing_apart

CODE = "ST002"
NAME = "worker-timings-apart"
CLASS = "straggler"
SEVERITY = "warning"
REQUIRES = ("events",)
PRECEDENCE = "specific"
# A profile measures the wait itself: ST001 says it better when there is one.
DEFERS_TO: tuple[str, ...] = ("ST001",)


def check(job: Job) -> Iterator[Hit]:
    apart = standing_apart(job)
    if apart is None:
        return
    w = apart.worker
    if apart.alone:
        yield Hit(
            subject=w,
            summary=(
                f"{w} is a straggler by the script's own timings: it alone printed its {apart.key}, typically "
                f"{apart.medians[w]:g}, while every other worker printed the same steps with no such wait; "
                f"its input is the slowest: every all-reduce waits for it."
            ),
            evidence=[evidence(apart.rows[w], f"{apart.key}")],
            confidence=0.5,
            ts=None,
            facts={"key": apart.key, "medians": apart.medians, "alone": True},
        )
        return
    rest = sorted(v for x, v in apart.medians.items() if x != w)
    how = "longer" if apart.higher else "shorter"
    span = f"{rest[0]:g}" if rest[0] == rest[-1] else f"{rest[0]:g} to {rest[-1]:g}"
    why = (
        "its input is the slowest: every all-reduce waits for it"
        if apart.higher
        else "it arrives last at every all-reduce and waits for no one, while the others wait for it"
    )
    yield Hit(
        subject=w,
        summary=(
            f"{w} is a straggler by the script's own timings: its typical {apart.key} is "
            f"{apart.medians[w]:g}, {how} than every other worker's ({span}); {why}."
        ),
        evidence=[evidence(apart.rows[x], f"{apart.key}") for x in [w, *sorted(set(apart.rows) - {w})][:3]],
        confidence=0.6,
        ts=None,
        facts={"key": apart.key, "medians": apart.medians},
    )

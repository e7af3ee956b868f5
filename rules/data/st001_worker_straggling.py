"""ST001 worker-straggling: one worker is slow and every all-reduce waits for it.

## What it means
In the profiled steps, the other workers spent most of each step inside the
all-reduce, waiting, while this worker reached the all-reduce last and
hardly waited at all: the collective cannot finish until every member
arrives, so the whole job runs at this worker's pace. The step times are
the same on every worker (they are synchronised); the time spent waiting
inside collectives is what tells the slow worker apart. This is read from
profiler traces only: without them this rule is not evaluated.

## Why it happens
Something outside the model's step is slower on this worker: its input
pipeline (slower disk or network, fewer CPU cores, a data shard with larger
records), a busy host (other processes, CPU throttling, a noisy neighbour),
a slower or older GPU, or Python work in a callback that only this worker
does (logging, checkpointing on the chief).

## What to do
Look at this worker's host and input pipeline: compare its `tf.data` time in
the profile with the others', check the node (`top`, GPU clocks), and give
it the same hardware. Prefetch (`dataset.prefetch(tf.data.AUTOTUNE)`),
parallelise map stages, and move chief-only work out of the step.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Evidence, Hit

CODE = "ST001"
NAME = "worker-straggling"
CLASS = "straggler"
SEVERITY = "warning"
REQUIRES = ("trace_events",)
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()

# The others must wait at least this share of a step for it, and at least
# WAIT_RATIO times as long as it waits itself: a few ms of jitter in a ring
# all-reduce is normal; a worker that makes the others idle a fifth of every
# step costs the job a fifth of its throughput.
MIN_SHARE_OF_STEP = 0.2
WAIT_RATIO = 3.0


def check(job: Job) -> Iterator[Hit]:
    waits: dict[str, dict[int, float]] = defaultdict(lambda: defaultdict(float))
    steps: dict[str, list[float]] = defaultdict(list)
    sources: dict[str, str] = {}
    for r in job.rows.trace(["collective", "step"]):
        sources.setdefault(r["worker"], r["source"])
        if r["step"] is None:
            continue
        if r["args"].get("kind") == "collective":
            waits[r["worker"]][int(r["step"])] += r["duration_us"] or 0.0
        else:
            steps[r["worker"]].append(r["duration_us"] or 0.0)
    if len(waits) < 2:
        return
    median_wait = {w: statistics.median(v.values()) for w, v in waits.items()}
    slow = min(median_wait, key=median_wait.__getitem__)
    others = statistics.median([v for w, v in median_wait.items() if w != slow])
    step_us = statistics.median([d for v in steps.values() for d in v]) if steps else others
    if others - median_wait[slow] < MIN_SHARE_OF_STEP * step_us or others < WAIT_RATIO * median_wait[slow]:
        return
    share = (others - median_wait[slow]) / step_us if step_us else 0.0
    yield Hit(
        subject=slow,
        summary=(
            f"{slow} is a straggler: in each profiled step (~{step_us / 1000:.0f} ms) the other workers wait "
            f"~{others / 1000:.0f} ms in all-reduces for it, while it waits ~{median_wait[slow] / 1000:.0f} ms; "
            f"about {share:.0%} of every profiled step is spent waiting for {slow}."
        ),
        evidence=[
            Evidence(
                w,
                sources[w],
                0,
                0,
                None,
                f"median time in all-reduces per step: {v / 1000:.1f} ms",
                "straggler's profile" if w == slow else "profile",
            )
            for w, v in sorted(median_wait.items(), key=lambda kv: kv[0] != slow)
            if w in sources
        ],
        confidence=0.8,
        ts=None,
        local=True,
        facts={
            "median_step_ms": round(step_us / 1000, 1),
            "median_wait_ms": {w: round(v / 1000, 1) for w, v in sorted(median_wait.items())},
            "steps_profiled": len(waits[slow]),
        },
    )

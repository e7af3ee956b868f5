"""ST003 worker-callbacks-slow: one worker's own callbacks hold every step, and the whole job waits for it.

## What it means
Keras times a worker's callbacks over the first batches of `fit` and warns
when a batch hook (`on_train_batch_end`, `on_batch_begin`, ...) takes longer
than the batch itself. Under MultiWorkerMirroredStrategy every step is an
all-reduce that waits for its last member, so one worker's slow callback
makes every worker's step as long: the others spend the time waiting inside
the all-reduce, their batches look long, and Keras warns only on the slow
worker. Here exactly one worker printed the warning, and the job's own step
time, as Keras printed it at the epochs' ends, is mostly that callback's
time: the job runs at this worker's pace.

## Why it happens
Work the script does between steps on this worker only, or more slowly
there: a callback that logs, writes summaries, images or checkpoints every
batch (often only on the chief), a synchronous upload, a `time.sleep`, a
metrics client on a slow network, or a host that is busy or throttled.

## What to do
Look at the callbacks this worker runs on every batch (`callbacks=` of its
`fit`, and anything added only where `task_type`/`task_id` pick it). Move
per-batch work to the epoch's end or every N batches, make uploads
asynchronous, and profile one step on that worker (`tf.profiler`, or the
TensorBoard callback's `profile_batch`) to see where the time goes.
"""

from __future__ import annotations

from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import evidence
from mwms_doctor.series import keras_step_seconds

CODE = "ST003"
NAME = "worker-callbacks-slow"
CLASS = "straggler"
SEVERITY = "warning"
REQUIRES = ("events",)
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ("ST001", "ST002")

# The callback's time is at least this share of the job's step: the job runs
# at its pace, not a one-off (a profile taken at batch 2, a first summary).
SHARE = 0.5
# ... and this many times the worker's own batch, where Keras gave it.
OVER_BATCH = 3.0


def check(job: Job) -> Iterator[Hit]:
    slow = job.rows.of(["keras.callback_slow"])
    workers = [w for w, r in job.facts.workers.items() if r["has_log"] and not w.startswith("?")]
    by_worker = {r["worker"] for r in slow}
    if len(workers) < 2 or len(by_worker) != 1 or not by_worker <= set(workers):
        return
    (w,) = by_worker
    row = max(slow, key=lambda r: float(r["fields"].get("hook_time") or 0))
    hook = float(row["fields"].get("hook_time") or 0)
    batch = row["fields"].get("batch_time")
    if hook <= 0 or (batch is not None and hook < OVER_BATCH * float(batch)):
        return
    steps = keras_step_seconds(job)
    # The job's step as the epochs ended: each worker's last, the typical of them.
    last = sorted(v[-1] for v in steps.values() if v)
    if not last:
        return
    step = last[len(last) // 2]
    if hook < SHARE * step:
        return
    others = ", ".join(x for x in sorted(workers) if x != w)
    yield Hit(
        subject=w,
        summary=(
            f"{w} is a straggler: its own callbacks take {hook:.2f} s at `{row['fields'].get('hook')}` "
            + (f"against a {float(batch):.3f} s batch " if batch is not None else "")
            + f"(Keras warned on it alone), and the job's steps take {step:.2f} s: every all-reduce waits "
            f"for {w} while {others} wait inside it."
        ),
        evidence=[evidence(row, "callbacks slower than the batch")]
        + [evidence(r, "the job's step time") for r in job.rows.of(["keras.epoch_end"]) if r["worker"] != w][
            -1:
        ],
        confidence=0.65,
        ts=row["ts"],
        facts={"hook": row["fields"].get("hook"), "hook_seconds": hook, "step_seconds": step},
    )

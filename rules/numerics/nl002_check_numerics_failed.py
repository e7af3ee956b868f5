"""NL002 check-numerics-failed: a NaN or Inf was caught where it was computed.

## What it means
A numerics check (`tf.debugging.check_numerics`, or every op with
`tf.debugging.enable_check_numerics()`) found NaN or Inf values in a tensor on
this worker and raised `InvalidArgumentError: ... : Tensor had NaN values`.
This worker is where the non-finite value was computed, before any
all-reduce spread it; the other workers then lose their collective with it
and fail too (echoes).

## Why it happens
The tensor named in the message went non-finite: an input record with a NaN
or Inf, `log(0)`, division by zero or `sqrt` of a negative number in the
model or loss, exploding activations from a learning rate that is too high,
or float16 overflow.

## What to do
The message names the checked tensor (the text before `: Tensor had`); with
`enable_check_numerics` it also names the op and its inputs. Inspect this
worker's input batch at that step (its data shard differs from the
others'), then lower the learning rate, clip gradients or fix the op.
"""

from __future__ import annotations

from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import evidence

CODE = "NL002"
NAME = "check-numerics-failed"
CLASS = "nan_loss"
SEVERITY = "error"
REQUIRES = ("events",)
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()


def check(job: Job) -> Iterator[Hit]:
    for worker, row in job.rows.first_reports(["numerics.check_failed"]).items():
        f = row["fields"]
        yield Hit(
            subject=worker,
            summary=(
                f"{worker} computed {f.get('values', 'NaN')} values in '{f.get('message', '?').strip()}' "
                f"and its numerics check stopped the step there."
            ),
            evidence=[evidence(row, "numerics check")],
            confidence=0.95,
            ts=row["ts"],
            facts={"tensor": f.get("message", "").strip(), "values": f.get("values")},
        )

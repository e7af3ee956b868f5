"""NL001 loss-not-finite: the training loss became NaN or Inf.

## What it means
Keras reported a loss of `nan` (or `inf`) at the end of an epoch, or its
`TerminateOnNaN` callback stopped training (`Invalid loss, terminating
training`). From that step on the weights are NaN and the model is useless,
even if the job went on and exited 0. Under MultiWorkerMirroredStrategy the
gradients are all-reduced, so one worker's NaN reaches every worker's
weights in the same step, and the loss every worker prints is the
all-reduced one: the epoch lines cannot say on which worker the NaN was
computed first. Every worker that printed it is named.

## Why it happens
A learning rate too high for the batch size (the global batch grows with the
number of workers, and many scripts scale the learning rate with it), a
bad record in one worker's shard (a NaN or Inf feature, a label out of
range), `log(0)` or division by zero in a custom loss, or float16 overflow
without loss scaling.

## What to do
Find the first step that is not finite: add
`tf.debugging.enable_check_numerics()` (or `check_numerics` on the loss and
inputs) and rerun; it stops at the op that produced the NaN, on the worker
that produced it. Check that worker's input data, lower the learning rate or
clip gradients (`clipnorm`), and use `LossScaleOptimizer` with mixed
precision. Keep `TerminateOnNaN` so a NaN run stops instead of finishing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from mwms_doctor.findings import Hit
from mwms_doctor.query import Row, evidence, records
from mwms_doctor.tables import JobTables

CODE = "NL001"
NAME = "loss-not-finite"
CLASS = "nan_loss"
SEVERITY = "error"
REQUIRES = ("events",)

_NOT_FINITE = re.compile(r"\bloss: (?P<value>-?nan|-?inf)\b", re.I)


def check(tables: JobTables) -> Iterator[Hit]:
    firsts: dict[str, Row] = {}
    for row in records(tables, ["keras.epoch_end", "keras.invalid_loss"]):
        if row["kind"] == "keras.epoch_end" and not _NOT_FINITE.search(row["fields"].get("metrics", "")):
            continue
        firsts.setdefault(row["worker"], row)
    if not firsts:
        return
    rows = sorted(firsts.values(), key=lambda r: (r["ts"] is None, r["ts"] or 0))
    names = sorted(firsts)
    m = _NOT_FINITE.search(rows[0]["fields"].get("metrics", ""))
    value = m["value"] if m else "not finite"
    which = (
        "on every worker at once (the loss is all-reduced, so the worker that computed it first cannot be told)"
        if len(names) > 1
        else f"on {names[0]}"
    )
    yield Hit(
        subject=names[0],
        also=names[1:],
        summary=f"The training loss became {value} {which}; the weights after it are not usable.",
        evidence=[evidence(r, "loss not finite") for r in rows],
        confidence=0.9,
        ts=rows[0]["ts"],
        local=True,
        facts={"value": value, "workers": names},
    )

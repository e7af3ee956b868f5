"""NL001 loss-not-finite: the training loss became NaN or Inf.

## What it means
Keras reported a loss of `nan` (or `inf`) at the end of an epoch, its
`TerminateOnNaN` callback stopped training (`Invalid loss, terminating
training`), a custom loop's progress line printed a `nan` loss, or the
script's own check stopped on one (`ValueError: loss is nan`). From that step on the weights are NaN and the model is useless,
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
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.ingest.messages import says
from mwms_doctor.rows import Row, evidence, to_rows
from mwms_doctor.series import local_loss
from mwms_doctor.tables import LAUNCHER

CODE = "NL001"
NAME = "loss-not-finite"
CLASS = "nan_loss"
SEVERITY = "error"
REQUIRES = ("events",)
PRECEDENCE = "specific"
# A NaN that a worker's empty batches made (its loss averaged over zero examples) is that.
DEFERS_TO: tuple[str, ...] = ("DA004",)

_NOT_FINITE = re.compile(r"\bloss: (?P<value>-?nan|-?inf)\b", re.I)
# A loss the script's own progress line gives as not finite, in any layout its
# logger uses: "loss=nan", "mean_loss: inf", '"loss": "nan"', "loss nan" (a
# structured logger's fields come after the message once the line is read).
_LOSS_NOT_FINITE = r"(?i)\b[a-z_]*loss[a-z_]*[\"']?\s*[=:]?\s*[\"']?(?P<value>[-+]?(?:nan|inf))\b"
_LOSS_NOT_FINITE_RE = re.compile(_LOSS_NOT_FINITE)
# Progress records whose text may carry such a loss (each kind's own field is read first).
_PROGRESS_WITH_LOSS = ("train.step", "train.epoch")


_NOT_FINITE_VALUE = re.compile(r"(?i)^[-+]?(?:nan|inf(?:inity)?)$")


def _not_finite(row: Row) -> bool:
    f = row["fields"]
    if row["kind"] == "keras.epoch_end":
        return bool(_NOT_FINITE.search(f.get("metrics", "")))
    if row["kind"] in _PROGRESS_WITH_LOSS:
        if str(f.get("loss", "")).lower().endswith(("nan", "inf")):
            return True
        return bool(_LOSS_NOT_FINITE_RE.search(row["text"].split("\n", 1)[0]))
    if row["kind"] == "py.traceback":
        return bool(f.get("exc_type")) and says(f.get("exc_message", ""), "nonfinite")
    return True  # keras.invalid_loss


def _maybe_not_finite(job: Job) -> Any:
    """Over the events table, in Arrow: true where ``_not_finite`` may hold (a
    looser test, so that only those few records become rows, not every step)."""
    ev = job.tables.events
    kind = pc.cast(ev["kind"], pa.string())
    fields = ev["fields"]
    loss = pc.map_lookup(fields, "loss", "first")
    metrics = pc.map_lookup(fields, "metrics", "first")
    text = pc.cast(ev["text"], pa.string())
    return pc.or_kleene(
        pc.or_kleene(
            pc.or_kleene(
                pc.and_kleene(pc.equal(kind, "train.step"), pc.match_substring_regex(loss, "(?i)(nan|inf)$")),
                pc.and_kleene(
                    pc.is_in(kind, pa.array(list(_PROGRESS_WITH_LOSS))),
                    pc.match_substring_regex(text, _LOSS_NOT_FINITE),
                ),
            ),
            pc.and_kleene(
                pc.equal(kind, "keras.epoch_end"), pc.match_substring_regex(metrics, "(?i)loss: -?(nan|inf)")
            ),
        ),
        pc.is_in(kind, pa.array(["keras.invalid_loss", "train.loss_not_finite", "py.traceback"])),
    )


def check(job: Job) -> Iterator[Hit]:
    firsts: dict[str, Row] = {}
    kinds = [
        "keras.epoch_end",
        "keras.invalid_loss",
        *_PROGRESS_WITH_LOSS,
        "train.loss_not_finite",
        "py.traceback",
    ]
    for row in sorted(
        job.rows.where(kinds, _maybe_not_finite(job)), key=lambda r: (r["ts"] is None, r["ts"] or 0)
    ):
        if _not_finite(row):
            firsts.setdefault(row["worker"], row)
    if not firsts:
        return
    if len(firsts) > 1:
        firsts.pop(LAUNCHER, None)  # a launcher's copy of its workers' tails: theirs, not a worker of its own
    rows = sorted(firsts.values(), key=lambda r: (r["ts"] is None, r["ts"] or 0))
    # A script that checks its own, local loss before the all-reduce names the
    # worker that computed the NaN: only those workers are the root.
    own = False
    checked = [r for r in rows if r["kind"] == "py.traceback"]
    if checked:
        rows = checked
        firsts = {r["worker"]: r for r in rows}
    # So does a script that logs each worker's local loss beside the all-reduced
    # one ("local_loss=nan loss=nan" on one worker, "local_loss=0.92 loss=nan" on
    # the others): the workers whose own loss was not finite computed it.
    elif len(rows) > 1:
        local = {w: local_loss(r, named=True) for w, r in firsts.items()}
        if None not in local.values():
            bad = [r for r in rows if _NOT_FINITE_VALUE.match(str(local[r["worker"]]))]
            if bad and len(bad) < len(rows):
                rows, own = bad, True
                firsts = {r["worker"]: r for r in rows}
    stat = _stat_apart(job, sorted(firsts)) if len(rows) > 1 and not own and not checked else None
    if stat is not None:
        # A figure of its own data that one worker printed not finite where
        # the others printed it finite ("label_mean: nan" beside "label_mean:
        # 0.1475"): its input made the NaN that the all-reduce then spread.
        odd, stat_row, key = stat
        rows, own = [stat_row, firsts[odd]], True
        firsts = {odd: firsts[odd]}
    names = sorted(firsts)
    m = _NOT_FINITE.search(rows[0]["fields"].get("metrics", "")) or _LOSS_NOT_FINITE_RE.search(
        rows[0]["text"].split("\n", 1)[0] if rows[0]["kind"] in _PROGRESS_WITH_LOSS else ""
    )
    value = m["value"].lower() if m else "not finite"
    which = (
        "on every worker at once (the loss is all-reduced, so the worker that computed it first cannot be told)"
        if len(names) > 1
        else f"on {names[0]}"
    )
    if own and stat is not None:
        which = (
            f"on every worker at once, from {names[0]}'s input: its own '{stat[2]}' was not finite where every "
            f"other worker's was (the all-reduce spread it)"
        )
    elif own:
        whose = "its own local loss" if len(names) == 1 else "their own local losses"
        which = f"on {', '.join(names)} ({whose}; the all-reduced loss then was not finite on every worker)"
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


# A named figure of the script's own with a value ("label_mean: nan", "grad_norm=inf").
_STAT_NOT_FINITE = re.compile(
    r"(?i)\b(?P<key>[A-Za-z][\w.]*)[\"']?\s*[:=]\s*[\"']?(?P<value>[-+]?(?:nan|inf))\b"
)


def _stat_apart(job: Job, workers: list[str]) -> tuple[str, Row, str] | None:
    """The one worker that printed a figure of its own (not a loss) not
    finite, where every other worker printed that figure finite: (worker, the
    record, the figure's name). None when no one worker stands so."""
    ev = job.tables.events
    text = pc.cast(ev["text"], pa.string())
    mask = pc.fill_null(pc.match_substring_regex(text, r"(?i)[:=]\s*[\"']?[-+]?(?:nan|inf)\b"), False)
    bad: dict[str, dict[str, Row]] = {}
    for r in to_rows(ev.filter(mask)):
        if r["worker"] not in workers or r["kind"] == "py.traceback" or r["severity"] in ("error", "fatal"):
            continue
        for m in _STAT_NOT_FINITE.finditer(r["text"].split("\n", 1)[0]):
            key = m["key"]
            if "loss" not in key.lower():
                bad.setdefault(key, {}).setdefault(r["worker"], r)
    for key, by_worker in sorted(bad.items()):
        if len(by_worker) != 1:
            continue
        ((odd, row),) = by_worker.items()
        others = [w for w in workers if w != odd]
        finite = rf"\b{re.escape(key)}[\"']?\s*[:=]\s*[\"']?[-+]?\d"
        shown = pc.fill_null(pc.match_substring_regex(text, finite), False)
        printed = set(pc.unique(pc.cast(ev.filter(shown)["worker"], pa.string())).to_pylist())
        if others and set(others) <= printed:
            return odd, row, key
    return None

"""DA003 same-local-loss: every worker reports the same local loss, or the same data, at every step.

## What it means
The training script logs each worker's own loss (the loss of the batch this
worker computed, before the all-reduce: "local loss", "this worker",
"per-replica"), and at every step logged the value is the same on every
worker, to the last digit. Different shards of data cannot give the same
loss step after step: every worker is reading the same batches, so the job
trains on one worker's data N times over. (A loss that was all-reduced is
the same on every worker by construction, so only losses the script marks
as local are compared.)

Or the script prints what each worker read (the ids of its first batch, a
digest of a shard) and every worker printed the same, numbers and all.

Or every worker states that its input's auto-shard policy is OFF
(`auto_shard_policy=OFF`, `AutoShardPolicy.OFF`), or that it reads all the
records, and nothing says it shards the input by hand: each worker then
reads the whole dataset.

## Why it happens
Auto-sharding turned off (`AutoShardPolicy.OFF`) or impossible (a dataset
from a Python generator or from `from_tensor_slices` of in-memory arrays
shards by DATA only when the policy allows it), a `distribute_datasets_from_function`
input function that ignores `input_context.input_pipeline_id`, or the same
random seed for each worker's shuffled copy of the whole dataset.

## What to do
Shard the input per worker: with `distribute_datasets_from_function`, call
`dataset.shard(ctx.num_input_pipelines, ctx.input_pipeline_id)`; otherwise
set `AutoShardPolicy.DATA` or `FILE` in the dataset's options. Check that
each worker's first batch differs.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import Row, evidence
from mwms_doctor.series import local_loss, same_fingerprint

CODE = "DA003"
NAME = "same-local-loss"
CLASS = "identical_data"
SEVERITY = "warning"
REQUIRES = ("events",)
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()

# A progress line that says its loss is this worker's own.
_LOCAL = re.compile(
    r"(?i)(?:^|[^a-z])local(?:[^a-z]|$)|this worker|per[- ]?(?:worker|replica)|\bon (?:this )?worker \d"
)
# A field of its own whose name says local, about something else than the loss
# ("local_s=0.100", "local_time=3.1", "local step 12"): no word on the loss.
_LOCAL_OTHER = re.compile(r"(?i)\b[\w.-]*local[\w.-]*\s*[=:]\s*\S+|\blocal[ _-]+(?!loss)[a-z]\w*")


def _says_local(text: str) -> bool:
    """Whether a progress line says its loss is the worker's own: a word for
    that, not a local timing or step beside an all-reduced loss."""
    rest = _LOCAL_OTHER.sub(lambda m: m[0] if "loss" in m[0].lower() else " ", text)
    return bool(_LOCAL.search(rest))


# A script stating its input's auto-shard policy is OFF ("auto_shard_policy=OFF",
# "AutoShardPolicy.OFF") or that it reads all the data; and what says it shards by hand instead.
_OFF = (
    r"(?i)(?:auto[_ ]?shard(?:ing)?[_ ]?(?:policy)?|shard(?:ing)?[_ ]policy)\W{0,3}(?:=|:|is|set to)?\W{0,3}"
    r"(?:AutoShardPolicy\.)?OFF\b"
    # ... or that it reads the whole dataset ("input pipeline 1/4: reading all records")
    r"|\b(?:read(?:s|ing)?|load(?:s|ing)?) (?:all|every|the (?:whole|full|entire)) "
    r"(?:records|examples|samples|files|rows|data(?:set)?)\b"
)
_BY_HAND = r"(?i)\.shard\(|input_pipeline_id|shard(?:ed|ing)? (?:by hand|manually)|\bshard \d+ ?(?:/|of) ?\d+"


def _sharding_off(job: Job) -> Hit | None:
    """Every worker says its input is not auto-sharded, and none says it
    shards by hand: each reads the whole dataset."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ev = job.tables.events
    text = pc.cast(ev["text"], pa.string())
    if pc.any(pc.fill_null(pc.match_substring_regex(text, _BY_HAND), False)).as_py():
        return None
    said = ev.filter(pc.fill_null(pc.match_substring_regex(text, _OFF), False)).to_pylist()
    by_worker: dict[str, Row] = {}
    for r in said:
        by_worker.setdefault(r["worker"], r)
    named = job.facts.named
    if len(named) < 2 or set(named) - set(by_worker):
        return None
    return Hit(
        subject=named[0],
        also=named[1:],
        summary=(
            f"Every worker says its input is not sharded ({by_worker[named[0]]['text'][:120]!r}) "
            f"and none shards it by hand: each worker reads the whole dataset, the same batches as the others."
        ),
        evidence=[evidence(by_worker[w], "auto-sharding off") for w in named[:3]],
        confidence=0.6,
        ts=None,
        facts={"policy": "OFF"},
    )


# Steps compared on every worker before identical values count: a few could match by chance.
MIN_STEPS = 3


def check(job: Job) -> Iterator[Hit]:
    same = same_fingerprint(job)
    if same is not None:
        named = sorted(same.rows)
        line = same.line[:160]
        yield Hit(
            subject=named[0],
            also=named[1:],
            summary=(
                f"Every worker printed the same account of the data it read ({line!r} on "
                f"{', '.join(named)}): the workers read the same data."
            ),
            evidence=[evidence(same.rows[w], "what it read") for w in named[:3]],
            confidence=0.7,
            ts=None,
            facts={"fingerprint": line},
        )
        return
    if (off := _sharding_off(job)) is not None:
        yield off
        return
    rows = [
        r
        for r in job.rows.matching(["train.step"], _LOCAL.pattern)
        if _says_local(r["text"]) and local_loss(r) is not None
    ]
    by_step: dict[tuple[str, str], dict[str, Row]] = defaultdict(dict)
    for r in rows:
        f = r["fields"]
        by_step[(f.get("epoch", ""), f.get("step", ""))].setdefault(r["worker"], r)
    workers = {r["worker"] for r in rows}
    shared = [v for v in by_step.values() if len(v) == len(workers) >= 2]
    if len(shared) < MIN_STEPS:
        return
    if any(len({local_loss(r) for r in v.values()}) > 1 for v in shared):
        return
    example = shared[0]
    yield Hit(
        subject=sorted(workers)[0],
        also=sorted(workers)[1:],
        summary=(
            f"Every worker logged the same local loss at each of {len(shared)} steps "
            f"(e.g. {local_loss(next(iter(example.values())))} on {', '.join(sorted(example))}): "
            f"the workers read the same data."
        ),
        evidence=[evidence(r, "local loss") for r in list(example.values())[:3]],
        confidence=0.75,
        ts=None,
        facts={"steps_compared": len(shared)},
    )

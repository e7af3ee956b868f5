"""DA004 worker-fed-empty-batches: one worker's input ran out, and MWMS kept it in step with empty batches.

## What it means
A worker's black box (`mwms_doctor.capture`) saw it train on batches with
no examples, from some step on, while the other workers' black boxes saw
none. Its shard held fewer batches than the others'. In a custom loop over
`experimental_distribute_dataset` or `distribute_datasets_from_function`,
MultiWorkerMirroredStrategy does not stop a worker whose input ended while
others still have data: it hands it empty batches, so every all-reduce
still has all members, and the job runs to its end without an error. From
that step on the worker contributes nothing (a loss averaged over zero
examples is NaN where the script divides by the local batch size), and the
job trains on fewer examples than it should, and unevenly.

The logs seldom say it; the black box counts the empty batches. So does a
script that logs its own batch size each step (`local_batch=0`, `examples=0`
on one worker while the others count 8): that count is read too.

## Why it happens
Uneven shards: files of different sizes under `AutoShardPolicy.FILE`, a
number of files not divisible by the number of workers, a filter that drops
more records on one worker, or a per-worker input function that builds
different inputs per `input_pipeline_id`.

## What to do
Give every worker the same number of batches: shard by DATA, or make the
input infinite (`repeat()`) and bound the loop by a step count computed
from the smallest shard. Divide the loss by the global batch size
(`tf.nn.compute_average_loss`), never by the local one, so an empty batch
adds zero, not NaN.
"""

from __future__ import annotations

from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import evidence
from mwms_doctor.series import empty_batches

CODE = "DA004"
NAME = "worker-fed-empty-batches"
CLASS = "data_exhaustion"
SEVERITY = "warning"
REQUIRES = ("events",)
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()

# One empty batch at the very end is a dataset whose size the workers split
# unevenly by a batch; a worker fed more than this ran out early.
MIN_EMPTY = 2


def _counted(job: Job) -> Iterator[Hit]:
    """The script's own count of each worker's batch: one worker's fell to 0."""
    found = empty_batches(job)
    if found is None:
        return
    w, first = found.worker, found.first
    others = ", ".join(f"{o} {found.field}>0" for o in sorted(found.others))
    yield Hit(
        subject=w,
        summary=(
            f"{w}'s input ran out: from {first['text'].strip()[:80]!r} on, its own count of its batch "
            f"({found.field}) was 0 at {found.empty} steps while the other workers' was above 0 ({others}): "
            "MultiWorkerMirroredStrategy kept it in step with empty batches, so it trained on nothing from "
            "there (a loss averaged over zero examples is NaN)."
        ),
        evidence=[
            evidence(first, "first empty batch"),
            evidence(found.before, "its last batch with examples"),
        ]
        + [evidence(r, "the same step elsewhere") for r in list(found.others.values())[:2]],
        confidence=0.75,
        ts=first["ts"],
        facts={"field": found.field, "empty_steps": found.empty},
    )


def check(job: Job) -> Iterator[Hit]:
    ran_out = {r["worker"]: r for r in job.rows.of(["blackbox.input_ran_out"])}
    if not ran_out:
        yield from _counted(job)
        return
    ended = {r["worker"]: r for r in job.rows.of(["blackbox.ended"])}
    boxes = set(ended) | set(ran_out) | {r["worker"] for r in job.rows.of(["blackbox.stall"])}
    if not set(boxes) - set(ran_out):
        return  # every worker's input ran out: no shard shorter than another's
    for worker, row in sorted(ran_out.items()):
        end = ended.get(worker)
        empty = int(end["fields"].get("empty") or 0) if end is not None else None
        batches = int(end["fields"].get("batches") or 0) if end is not None else None
        if empty is not None and empty < MIN_EMPTY:
            continue
        of = f" ({empty} of its {batches} batches)" if empty is not None else ""
        fed = ", ".join(sorted(boxes - set(ran_out)))
        yield Hit(
            subject=worker,
            summary=(
                f"{worker}'s input ran out at batch {row['fields'].get('n')} while {fed} still had data: "
                f"MultiWorkerMirroredStrategy kept it in step with empty batches{of}, so it trained on "
                "nothing from there (its black box counted them; the logs say nothing)."
            ),
            evidence=[evidence(row, "first empty batch")]
            + ([evidence(end, "empty batches counted")] if end is not None else []),
            confidence=0.8 if empty is not None else 0.65,
            ts=row["ts"],
            facts={"first_empty_batch": row["fields"].get("n"), "empty_batches": empty},
        )

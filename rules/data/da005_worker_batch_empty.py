"""DA005 worker-batch-empty: one worker's input ran out, and its step failed on an empty batch.

## What it means
The worker trained for a while, then an op in its step failed because the
batch it was given had no examples: TensorFlow says it could not take
element 0 of dimension 0 (`slice index 0 of dimension 0 out of bounds`,
`indices[0] = 0 is not in [0, 0)`, `Input to reshape is a tensor with 0
values`). In a custom loop over a distributed dataset,
MultiWorkerMirroredStrategy keeps a worker whose own input has ended in step
with the others by handing it empty batches; code that indexes the batch
(`x[0]`, a reshape to the batch size, a gather by position) then fails on
that worker only, and the others lose it in the next collective. The
exception is where it stopped; the cause is that its shard was shorter.

## Why it happens
Uneven shards: files of different sizes under `AutoShardPolicy.FILE`, a
number of files not divisible by the number of workers, a filter that drops
more records on one worker, a per-worker input function that builds a
different input per `input_pipeline_id`, or a fixed number of steps per
epoch larger than the smallest shard holds.

## What to do
Give every worker the same number of batches: shard by DATA, or make the
input infinite (`repeat()`) and bound the loop by a step count computed from
the smallest shard. Do not index the batch by position in the step; divide
the loss by the global batch size (`tf.nn.compute_average_loss`) so an empty
batch adds zero.
"""

from __future__ import annotations

from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.ingest.messages import MESSAGES
from mwms_doctor.rows import Row, evidence

CODE = "DA005"
NAME = "worker-batch-empty"
CLASS = "data_exhaustion"
SEVERITY = "error"
REQUIRES = ("events",)
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()

_KIND = "tf.empty_input"


def _empty(job: Job) -> list[Row]:
    """Records, tracebacks included, that say a step met an empty batch."""
    direct = job.rows.of([_KIND])
    traced = [r for r in job.rows.of(["py.traceback"]) if r["fields"].get("tf_kind") == _KIND]
    return sorted(traced + direct, key=lambda r: (r["kind"] != "py.traceback", r["source"], r["line"]))


def _said(text: str) -> str:
    """The words of the record that say the batch was empty."""
    for m in MESSAGES:
        if m.kind == _KIND and (found := m.pattern.search(text)):
            return found[0]
    return text.strip().splitlines()[0][:160]


def check(job: Job) -> Iterator[Hit]:
    seen: set[str] = set()
    for row in _empty(job):
        w = row["worker"]
        if w in seen or w not in job.facts.workers:
            continue
        # It trained before (its input was not empty from the start), and did not go on after.
        if w not in job.facts.last_progress or job.facts.progressed_after(row):
            continue
        seen.add(w)
        last = job.facts.last_progress[w]
        yield Hit(
            subject=w,
            summary=(
                f"{w}'s input ran out: after training (last progress: {last['text'].strip()[:80]}), "
                "its step failed on a batch with no examples, which MultiWorkerMirroredStrategy hands a worker "
                f"whose own data has ended while the others still have some ({_said(row['text'])})."
            ),
            evidence=[evidence(row, "step on an empty batch"), evidence(last, "its last progress")],
            confidence=0.7,
            ts=row["ts"],
            facts={"last_progress": last["text"].strip()[:200]},
        )

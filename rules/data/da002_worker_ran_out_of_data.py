"""DA002 worker-ran-out-of-data: one worker's input ended before the others'.

## What it means
Under MultiWorkerMirroredStrategy every worker must run the same number of
steps, because each step all-reduces with all the others. This worker's
dataset ended first: Keras said `Your input ran out of data; interrupting
training`, the iterator raised `OutOfRangeError: End of sequence`, or (TF
2.21, recorded here) the worker issued the input pipeline's end-of-data
all-reduce (int64) while the others were reducing gradients (float), and
the collective failed with `Collective instance N expected ... data_type 9
but got ... data_type 1`. Under Horovod with an Estimator, a rank's
`train()` returned (`Loss for final step`) while the others still
all-reduced, and Horovod's stall inspector reported tensors "submitted by
subset of ranks", waiting for the missing ranks that had left. The others
then wait or abort; their errors are echoes.

A script that catches the end itself may say so in its own words
(`input iterator exhausted after 20 steps, stopping training`, `ran out of
batches`): read where that worker then trained no more while another failed
after it, and not where every worker says it (then it is the script's word at
each epoch's end).

Without any such message, the script's own lines can show it: its epochs
end at different global steps on different workers (`epoch 2 done` on one
worker where the others print `epoch 1 done` at the same step). Every step
is one all-reduce, so the steps move together; a worker whose epochs are
shorter has less input, finishes its epochs first and leaves, and the
others then lose it mid-epoch (`Socket closed`, a collective aborted). A
worker that stays alive after its training (waiting for the chief's export,
say) keeps its connections open: the others then sit silently in an
all-reduce it never joins, their logs ending mid-epoch without an error.
That is uneven input too; without a kill or an exit status it is said to be
inconclusive, not a failure.

When every worker's input ends before the last epoch, the dataset is simply
shorter than `steps_per_epoch x epochs` (a finite dataset without
`repeat()`): every worker is named.

## Why it happens
Uneven shards: `AutoShardPolicy.FILE` with files of different sizes or a
number of files not divisible by the number of workers, a filter that drops
more records on one worker, or a per-worker dataset built from different
inputs; `steps_per_epoch` larger than the smallest shard.

## What to do
Make every worker's input infinite and bound the epoch with
`steps_per_epoch` (`dataset.repeat()`), or shard by DATA instead of FILE,
or compute `steps_per_epoch` from the smallest shard. In a custom loop, use
`strategy.experimental_distribute_dataset` with
`get_next_as_optional()` so all workers stop together. Under Horovod, give
every rank the same number of batches, or call `hvd.join()` after training
so a rank that ran out waits for the others.
"""

from __future__ import annotations

from collections.abc import Iterator

from mwms_doctor.collectives import collective_mismatches, loop_ended_before_stall
from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import Row, evidence, time_key
from mwms_doctor.series import short_epochs, uneven_epochs
from mwms_doctor.tasks import listed
from mwms_doctor.text import what_it_says

CODE = "DA002"
NAME = "worker-ran-out-of-data"
CLASS = "data_exhaustion"
SEVERITY = "error"
REQUIRES = ("events", "workers")
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()


def _finished_alone(job: Job) -> tuple[str, Row] | None:
    """The one worker that completed its training while every other worker
    had not, each of them erring after it finished (what they say of losing
    it is then no shutdown noise of a finished job: they had more to do)."""
    finished = {w: t for w, t in job.facts.finished.items() if t is not None}
    live = job.facts.named
    if len(finished) != 1 or len(live) < 2 or len(job.facts.finished) != 1:
        return None
    ((worker, at),) = finished.items()
    others = [w for w in live if w != worker]
    if not all(any(r["ts"] is not None and r["ts"] >= at for r in job.rows.errors(w)) for w in others):
        return None
    row = job.facts.last_progress.get(worker)
    return (worker, row) if row is not None else None


def _left_behind(job: Job, short: list[str]) -> bool:
    """Whether the workers with less input completed their training while
    every other worker's log ends before it completed its own: they were
    left in an all-reduce the short ones never joined (no error need follow:
    a worker that stays alive after training holds its connections open)."""
    others = [w for w in job.facts.named if w not in short]
    return (
        bool(others)
        and all(job.facts.finished.get(w) is not None for w in short)
        and all(w not in job.facts.finished for w in others)
    )


def _then(job: Job, short: list[str], erred: bool) -> str:
    if erred:
        return "the others then lost it mid-epoch."
    others = [w for w in job.facts.named if w not in short]
    return (
        f"{listed(others)} never completed {'its own training: its log ends' if len(others) == 1 else 'theirs: their logs end'} "
        "mid-epoch, with no error (waiting in an all-reduce it never joined, or cut there)."
    )


def check(job: Job) -> Iterator[Hit]:
    wk = [w for w, r in job.facts.workers.items() if r["has_log"]]
    ended = job.rows.of(["keras.input_exhausted"])
    ended += [
        r
        for r in job.rows.of(["tf.end_of_sequence"]) + job.rows.tracebacks_with(["tf.end_of_sequence"])
        if r["severity"] in ("error", "fatal") or r["kind"] == "py.traceback"
    ]
    # An OutOfRangeError that ended the script is its input ending, whatever its message.
    ended += [
        r
        for r in job.rows.of(["py.traceback"])
        if r["fields"].get("exc_type", "").endswith("OutOfRangeError") and r not in ended
    ]
    # The script's own words that its input ran out, where that worker then
    # trained no more while another worker went on (a later step) or failed:
    # what a framework would have said, said by the script.
    said = job.rows.of(["script.input_ended"])
    if {r["worker"] for r in said} >= set(wk):
        said = []  # every worker says it: the script's words at each epoch's end, not one worker's input ending
    for r in said:
        others = [w for w in wk if w != r["worker"]]
        if r["worker"] in {x["worker"] for x in ended} or job.facts.progressed_after(r):
            continue
        later = [
            e
            for w in others
            for e in job.rows.errors(w)
            if r["ts"] is None or e["ts"] is None or e["ts"] >= r["ts"]
        ]
        if later:
            ended.append(r)
    first: dict[str, Row] = {}
    for r in ended:
        first.setdefault(r["worker"], r)
    if first and len(first) == len(wk) and len(wk) > 0:
        # Every worker's input ended before the last epoch: the input is
        # shorter than steps_per_epoch x epochs everywhere (not uneven shards).
        rows = sorted(first.values(), key=time_key)
        yield Hit(
            subject=rows[0]["worker"],
            also=[r["worker"] for r in rows[1:]],
            summary=(
                "Every worker's input ended before training did: the dataset holds fewer batches than "
                f"steps_per_epoch x epochs ({what_it_says(rows[0]['text'])[:160]})."
            ),
            evidence=[evidence(r, "its input ended") for r in rows],
            confidence=0.85,
            ts=rows[0]["ts"],
            facts={"all_workers": True},
        )
        return
    if first and len(first) < len(wk):
        for worker, row in first.items():
            yield Hit(
                subject=worker,
                summary=(
                    f"{worker}'s input ended before the other workers' ({what_it_says(row['text'])[:160]}); "
                    f"{', '.join(w for w in wk if w not in first)} still had data and waited for it."
                ),
                evidence=[evidence(row, "its input ended")],
                confidence=0.9,
                ts=row["ts"],
            )
        return
    found = collective_mismatches(job)
    if found is not None and found.looks_like_data_end:
        yield Hit(
            subject=found.odd[0],
            also=found.odd[1:],
            summary=(
                f"{', '.join(found.odd)} ran out of data: it entered the input pipeline's end-of-data all-reduce "
                f"(int64) while the other workers were reducing gradients ({found.what}), so collective "
                f"instance {found.instance} failed on every worker."
            ),
            evidence=[evidence(r, "collective error") for r in found.reports[:3]],
            confidence=0.75,
            ts=found.reports[0]["ts"],
            local=True,
            facts={"instance": found.instance},
        )
        return
    uneven = uneven_epochs(job)
    others = [w for w in wk if uneven is not None and w not in uneven.ahead]
    erred = any(job.rows.errors(w) for w in others)
    if uneven is not None and (erred or _left_behind(job, uneven.ahead)):
        # Positive evidence that it failed: the workers with longer epochs erred
        # (else the evidence simply ends: the verdict needs a kill to call it failed).
        short = ", ".join(uneven.ahead)
        at = ", ".join(f"{w} in epoch {e}" for w, e in sorted(uneven.epochs.items()))
        yield Hit(
            subject=uneven.ahead[0],
            also=uneven.ahead[1:],
            summary=(
                f"{short} had less input than the others: at global step {uneven.step} the workers were in "
                f"different epochs ({at}), so its epochs were shorter; it ran out of data and finished "
                f"first, and {_then(job, uneven.ahead, erred)}"
            ),
            evidence=[
                evidence(uneven.markers[w], f"epoch at step {uneven.step}") for w in sorted(uneven.markers)
            ],
            confidence=0.7,
            ts=uneven.markers[uneven.ahead[0]]["ts"],
            facts={"epochs_at_step": uneven.epochs, "step": uneven.step},
            proof="error" if erred else "",
        )
        return
    few = short_epochs(job)
    erred = few is not None and any(job.rows.errors(w) for w in few.steps if w != few.short)
    if few is not None and (erred or _left_behind(job, [few.short])):
        # The script's own count of steps per epoch: one worker's epoch was shorter, and the others erred.
        counts = ", ".join(f"{w} {n}" for w, n in sorted(few.steps.items()) if w != few.short)
        yield Hit(
            subject=few.short,
            summary=(
                f"{few.short} had less input than the others: its epoch {few.epoch} ended after "
                f"{few.steps[few.short]} steps where the others ran at least ({counts}); it ran out of data and "
                f"finished first, and {_then(job, [few.short], erred)}"
            ),
            evidence=[evidence(few.rows[w], f"steps in epoch {few.epoch}") for w in sorted(few.rows)],
            confidence=0.7,
            ts=few.rows[few.short]["ts"],
            facts={"steps_in_epoch": few.steps, "epoch": few.epoch},
            proof="error" if erred else "",
        )
        return
    early = _finished_alone(job)
    if early is not None:
        worker, row = early
        yield Hit(
            subject=worker,
            summary=(
                f"{worker} finished its training ({what_it_says(row['text'])[:100]}) while the other workers "
                "were still training, and they then lost it: its input was shorter than theirs, so it ran out "
                "of data first and left."
            ),
            evidence=[evidence(row, "its training ended")],
            confidence=0.6,
            ts=row["ts"],
            facts={"finished_alone": True},
        )
        return
    left = loop_ended_before_stall(job)
    if left is not None:
        done, stall, ranks = left
        known = {w for w in job.facts.workers}
        named = [f"worker:{r}" for r in ranks if f"worker:{r}" in known]
        who = f"rank{'s' if len(ranks) > 1 else ''} {', '.join(ranks)}" if ranks else "some ranks"
        yield Hit(
            subject=named[0] if named else done["worker"],
            also=named[1:],
            summary=(
                f"A worker's training loop ended ({what_it_says(done['text'])[:100]}) while the "
                f"others still submitted collectives, and the collective then stalled waiting for {who}: "
                "the workers' inputs were uneven, so some ran out of data first and left the others "
                "waiting for them."
            ),
            evidence=[evidence(done, "its training loop ended"), evidence(stall, "the others waited")],
            confidence=0.65,
            ts=done["ts"],
            facts={"missing_ranks": ranks},
        )

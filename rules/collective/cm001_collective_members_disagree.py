"""CM001 collective-members-disagree: workers entered one all-reduce with different tensors.

## What it means
Every member of a collective (an all-reduce of gradients, a metric, a
custom `all_reduce`) must bring a tensor of the same shape and type. Here
they did not: TensorFlow's collective resolver stopped the group with
`Shape mismatch in the collective instance N. Op at device D expected shape
[5] but another member in the group expected shape [4]` or `Collective
instance N expected type T and data_type X but got ... data_type Y`. The
worker named is the member whose tensor differs from the others'; every
worker's abort is the same error.

## Why it happens
The workers do not run the same program: a model built from per-worker
configuration (a vocabulary or class count read from each worker's local
files), a custom training loop with a branch on the task index, different
code or library versions on some hosts, or workers that reached a different
step (one worker ran out of data and issued the input pipeline's all-reduce
while the others reduced gradients: see DA002).

## What to do
Compare the shapes and types below with the variable or tensor they belong
to (the `instance` is the N-th collective of the program). Make every
worker build the same model from the same configuration, deploy the same code
everywhere, and never branch on the task index around collectives.
"""

from __future__ import annotations

from collections.abc import Iterator

from mwms_doctor.collectives import collective_mismatches
from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import evidence, time_key

CODE = "CM001"
NAME = "collective-members-disagree"
CLASS = "collective_mismatch"
SEVERITY = "error"
REQUIRES = ("events", "workers")
PRECEDENCE = "specific"
# Members that reached different points of training because one worker's
# input ended (an int64 end-of-data all-reduce among float gradients, ranks
# that had left their loop) disagree because of uneven input: DA002 says so.
# Members that count a group of another size count another cluster: TC002.
# (workers on different versions whose collectives then differ: the skew, VS002)
DEFERS_TO: tuple[str, ...] = ("DA002", "TC002", "VS002")


def check(job: Job) -> Iterator[Hit]:
    found = collective_mismatches(job)
    if found is None:
        yield from _group_disagreements(job)
        return
    ev = [evidence(r, "collective error") for r in found.reports[:3]]
    yield Hit(
        subject=found.odd[0],
        also=found.odd[1:],
        summary=(
            f"{', '.join(found.odd)} entered collective instance {found.instance} with {found.what}; "
            f"the group could not run and every worker aborted."
        ),
        evidence=ev,
        confidence=found.confidence,
        ts=found.reports[0]["ts"],
        facts={"instance": found.instance, "difference": found.what},
    )


def _group_disagreements(job: Job) -> Iterator[Hit]:
    """Members that disagree on the group itself (its size, the device type a
    group key was registered with) or, under Horovod, ranks that submitted
    different tensors: the reporter is named; which member differs, the text
    rarely says."""
    rows = job.rows.first_reports(["collective.group_mismatch", "collective.rank_mismatch"])
    if not rows:
        return
    first = sorted(rows.values(), key=time_key)[0]
    yield Hit(
        subject=first["worker"],
        summary=(
            f"The members of a collective disagree ({first['text'].strip().splitlines()[0][:200]}): "
            f"the workers did not build the same collectives (group size, device type or tensors differ)."
        ),
        evidence=[evidence(r, "collective error") for r in list(rows.values())[:3]],
        confidence=0.7,
        ts=first["ts"],
        facts={"kind": first["fields"].get("tf_kind") or first["kind"]},
    )

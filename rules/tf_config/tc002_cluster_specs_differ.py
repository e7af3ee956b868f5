"""TC002 cluster-specs-differ: workers were given different cluster lists.

## What it means
Every worker of a MultiWorkerMirroredStrategy job must be given the same
`cluster` in its TF_CONFIG (the same addresses, in the same order); only
`task.index` differs. Here at least one worker's cluster list differs from
the others'. It then looks for its peers at addresses where they are not
listening (`Connection refused`), or the collectives' rings differ between
workers. The worker whose list differs from the majority is named; the
others' connection errors are echoes.

## Why it happens
A pod re-created with a stale TF_CONFIG after the job was resized or its
services renamed, a launcher that builds each worker's list from a different
source (host files, DNS names vs IPs), or a hand-edited config on one host.

## What to do
Compare the cluster lists below: generate TF_CONFIG for all workers from one
place (the operator or one launcher template) and restart every worker
together, so that none keeps an old list.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import evidence

CODE = "TC002"
NAME = "cluster-specs-differ"
CLASS = "tf_config_mismatch"
SEVERITY = "error"
REQUIRES = ("events",)
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()


def _key(spec: dict[str, list[str]]) -> str:
    return json.dumps(spec, sort_keys=True)


def check(job: Job) -> Iterator[Hit]:
    views = job.facts.cluster_views
    if len(views) < 2:
        return
    counts = Counter(_key(spec) for spec, _ in views.values())
    if len(counts) < 2:
        return
    (common, n_common), *_ = counts.most_common()
    if list(counts.values()).count(n_common) > 1:
        odd = sorted(views)  # no majority: every view is suspect
    else:
        odd = sorted(w for w, (spec, _) in views.items() if _key(spec) != common)
    majority = json.loads(common)
    for worker in odd:
        spec, where = views[worker]
        diffs = []
        for role in sorted(set(spec) | set(majority)):
            mine, theirs = spec.get(role, []), majority.get(role, [])
            if mine != theirs:
                diffs.append(f"{role}: {mine} where the others have {theirs}")
        ev = [where]
        errs = job.rows.errors(worker)
        if errs:
            ev.append(evidence(errs[0], "its first error"))
        yield Hit(
            subject=worker,
            summary=f"{worker}'s TF_CONFIG lists a different cluster than the other workers' ({'; '.join(diffs)}).",
            evidence=ev,
            confidence=0.9,
            ts=min((e.ts for e in ev if e.ts is not None), default=None),
            facts={"its_cluster": spec, "others_cluster": majority},
        )

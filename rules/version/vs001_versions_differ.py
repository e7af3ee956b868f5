"""VS001 versions-differ: workers run different versions of TensorFlow or its stack.

## What it means
The workers of one job report different versions of TensorFlow, Keras,
protobuf, NumPy, Python or CUDA (from version banners in their logs, `pip
freeze` / `pip list` dumps or `nvidia-smi` beside them). Recent TensorFlow
versions usually interoperate in one MultiWorkerMirroredStrategy job (2.15,
2.20 and 2.21 were seen training together), so this is a risk, not proof of
the failure: kernels, graph rewrites and defaults differ between versions,
results become hard to reproduce, and an op or attribute one side does not
know fails the job (see VS002).

## Why it happens
Images built at different times (`:latest` tags, unpinned `pip install
tensorflow`), a node pool with another base image, or a worker started from
a developer's virtualenv.

## What to do
Pin every package in the image (`tensorflow==X.Y.Z`, a lock file), use an
image digest instead of a moving tag, and check the versions below. The
worker in the minority is named.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import evidence

from ._versions import build_fingerprints, differing, versions

CODE = "VS001"
NAME = "versions-differ"
CLASS = "version_skew"
SEVERITY = "warning"
REQUIRES = ("events", "workers")
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()


def check(job: Job) -> Iterator[Hit]:
    diffs = differing(job)
    if not diffs:
        return
    order = ["TensorFlow", "tf-keras", "keras", "protobuf", "Python", "CUDA", "numpy"]
    comps = sorted(diffs, key=lambda c: order.index(c) if c in order else len(order))
    values, minority = diffs[comps[0]]
    ev = []
    where = versions(job)
    if comps[0] not in where:  # told apart by the log lines' build fingerprint
        builds = build_fingerprints(job)
        ev = builds[1] if builds else []
    for w in minority + [w for w in sorted(values) if w not in minority][:1]:
        if comps[0] not in where:
            break
        _, e = where[comps[0]][w]
        if e is not None:
            ev.append(e)
        else:
            banners = job.rows.of(["env.tf_version"], w)
            ev += [evidence(r, "version") for r in banners[:1]]
    parts = []
    for comp in comps:
        vals, _ = diffs[comp]
        by_version: dict[str, list[str]] = {}
        for w, v in sorted(vals.items()):
            by_version.setdefault(v, []).append(w)
        parts.append(f"{comp} " + " vs ".join(f"{v} on {', '.join(ws)}" for v, ws in by_version.items()))
    summary = f"The workers run different versions: {'; '.join(parts)}."
    confidence = 0.9
    if comps[0] not in where:
        others = sorted(w for w in values if w not in minority) or ["the others"]
        lines = " vs ".join(e.role.removeprefix("printed from ") for e in ev)
        summary = (
            f"{', '.join(minority)} {'runs' if len(minority) == 1 else 'run'} another TensorFlow build than {', '.join(others)}: no version is "
            f"printed, but the same log messages come from other source lines ({lines})."
        )
        confidence = 0.75
    counts = sorted(Counter(values.values()).values(), reverse=True)
    if len(counts) > 1 and counts[0] == counts[1] and len(minority) < len(values):
        summary += " With as many workers on each side, the leader's is taken as the job's own."
        confidence = min(confidence, 0.6)
    yield Hit(
        subject=minority[0],
        also=minority[1:],
        summary=summary,
        evidence=ev,
        confidence=confidence,
        ts=None,
        facts={comp: diffs[comp][0] for comp in comps},
    )

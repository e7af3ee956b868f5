"""VS002 op-unknown-to-worker: a worker's TensorFlow does not know an op the others use.

## What it means
A worker failed with `Op type not registered 'X' in binary running on
<host>` (TF2's eager and remote calls: `'X' is neither a type of a primitive
operation nor a name of a function registered in binary running on <host>`):
the graph or function it was given (built by another worker, a newer client,
or a saved model) uses an op its TensorFlow build does not have. With versions differing
between workers (VS001), this is the version skew failing the job: the
worker with the older (or differently built) TensorFlow is the root cause,
and the other workers' errors are echoes.

## Why it happens
Workers run different TensorFlow versions, or one build lacks an op (a
custom op library not loaded with `tf.load_op_library` on every worker,
TF-Addons/TF-Text not installed everywhere).

## What to do
Run the same TensorFlow build, and the same op libraries, on every worker
(one image, pinned versions); if the op is from a library, import it in the
training script on every worker.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from mwms_doctor.collectives import collective_mismatches
from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import evidence
from mwms_doctor.tasks import listed

from ._versions import differing

# How each TensorFlow era words an op or function a binary does not have.
_NOT_REGISTERED = (
    "Op type not registered",
    "is neither a type of a primitive operation nor a name of a function",
)

CODE = "VS002"
NAME = "op-unknown-to-worker"
CLASS = "version_skew"
SEVERITY = "error"
REQUIRES = ("events", "workers")
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()


def check(job: Job) -> Iterator[Hit]:
    kinds = ["tf.op_not_registered", "tf.graph_incompatible"]
    rows = job.rows.of(kinds)
    rows += [
        r
        for r in job.rows.of(["py.traceback"])
        if any(words in r["fields"].get("exc_message", "") for words in _NOT_REGISTERED)
        or r["fields"].get("tf_kind") in kinds
    ]
    if not rows:
        yield from _collectives_apart(job)
        return
    rows.sort(key=lambda r: (r["ts"] is None, r["ts"] or 0))
    row = rows[0]
    diffs = differing(job)
    tf = diffs.get("TensorFlow")
    skew = (
        f" Its TensorFlow is {tf[0].get(row['worker'])}, the others' {', '.join(sorted(set(tf[0].values()) - {tf[0].get(row['worker'])}))}."
        if tf
        else ""
    )
    m = re.search(
        r"Op type not registered '([^']+)'|'([^']+)' is neither a type of a primitive operation", row["text"]
    )
    f = row["fields"]
    function = f.get("function") or (m[2] if m and m[2] else None)
    op = f.get("op") or function or (m[1] if m else "an op")
    if f.get("runtime"):
        what = f"runs CUDA library cuDNN {f['runtime']} but its TensorFlow was built for {f.get('built')}"
    elif f.get("attr") or f.get("missing"):
        what = f"reads a graph whose op attribute '{f.get('attr') or f.get('missing')}' its TensorFlow does not know: the graph and the binary come from different versions"
    elif row["kind"] == "tf.graph_incompatible" or f.get("tf_kind") == "tf.graph_incompatible":
        what = "was built from another TensorFlow version than the graph or the peer it talks to"
    elif function:
        host = f.get("function_host") or f.get("host")
        where = f" (the TensorFlow running on {host})" if host else ""
        what = f"was asked to run the function '{function}', which the binary it ran on{where} does not know: most likely the client and that binary are different TensorFlow versions, as TensorFlow's own message suggests"
    else:
        what = f"does not know the op '{op}' the job uses"
    yield Hit(
        subject=row["worker"],
        summary=f"{row['worker']}'s TensorFlow {what}.{skew}",
        evidence=[evidence(row, "op unknown")],
        confidence=0.9 if tf else 0.7,
        ts=row["ts"],
        facts={"op": op, "versions": tf[0] if tf else {}},
    )


# What differs between the workers' stacks that builds their collectives differently.
_STACK = ("TensorFlow", "keras", "tf-keras", "TensorFlow build (from its log lines)")


def _collectives_apart(job: Job) -> Iterator[Hit]:
    """Workers on different TensorFlow or Keras versions that then entered a
    collective with different tensors (another dtype, another shape: each
    stack builds and broadcasts the model its own way): the skew failed the
    job; the worker on the other version is the root."""
    found = collective_mismatches(job)
    if found is None:
        return
    diffs = {c: d for c, d in differing(job).items() if c in _STACK}
    if not diffs:
        return
    comp = next(c for c in _STACK if c in diffs)
    values, minority = diffs[comp]
    odd = [w for w in found.odd if w in minority] or minority
    if not odd:
        return
    others = sorted(set(values.values()) - {values[w] for w in odd if w in values})
    row = found.reports[0]
    yield Hit(
        subject=odd[0],
        also=odd[1:],
        summary=(
            f"{listed(odd)} runs {comp} {', '.join(sorted({values[w] for w in odd if w in values}))} where the "
            f"others run {', '.join(others)}, and the workers then entered collective instance {found.instance} with "
            f"different tensors ({found.what}): the two versions build the model's collectives differently."
        ),
        evidence=[evidence(r, "collective error") for r in found.reports[:2]],
        confidence=0.8,
        ts=row["ts"],
        facts={"versions": values, "instance": found.instance},
    )

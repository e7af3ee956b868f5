"""VS003 stack-mismatch-at-import: a worker's TensorFlow, Keras or protobuf does not fit the script.

## What it means
This worker stopped on an error raised while importing or calling into
TensorFlow's own stack: a module or attribute the script expects does not
exist in the installed version (`No module named 'tf_keras'`, `module
'keras' has no attribute ...`, Keras 3 refusing a Keras 2 API), or protobuf's
generated code does not match the installed protobuf (`Descriptors cannot
be created directly`). The other workers, which have a matching
environment, then wait for it or lose it: their errors are echoes.

## Why it happens
The worker runs in another image or virtualenv than the others: an unpinned
`pip install` picked up a newer Keras (TF 2.16+ gives Keras 3 unless
`tf-keras` is installed and `TF_USE_LEGACY_KERAS=1` is set), a protobuf
major upgrade, or a node with an older base image.

## What to do
Compare this worker's `pip freeze` with a healthy worker's. Pin TensorFlow,
Keras (`tf-keras` and `TF_USE_LEGACY_KERAS=1` for Keras 2 code on TF 2.16+)
and protobuf in the image, build every worker from the same image digest,
and restart the job.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.ingest.messages import says
from mwms_doctor.rows import evidence
from mwms_doctor.text import innermost_path

from ._versions import differing

CODE = "VS003"
NAME = "stack-mismatch-at-import"
CLASS = "version_skew"
SEVERITY = "error"
REQUIRES = ("events",)
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()

_IMPORTISH = re.compile(
    r"(?:ImportError|ModuleNotFoundError|AttributeError|TypeError|ValueError)$|Version\w*Error$"
)
# The statement that failed, when it imports from TensorFlow's own stack
# (py2's "No module named boosted_trees.python.ops" names only the tail).
_STACK_IMPORT = re.compile(
    r"(?:^|\s)(?:from|import)\s+(?:tensorflow|keras|tf_keras|google\.protobuf)\b[\w. ]*$", re.M
)


_STACK_FILE = re.compile(r"/(?:tensorflow|keras|tf_keras|google/protobuf)/")


def _imports_stack(text: str, exc: str) -> bool:
    if exc not in ("ImportError", "ModuleNotFoundError"):
        return False
    # The failing statement is the last one before the exception (a flattened
    # traceback keeps it on the same line).
    before = text.rsplit(exc, 1)[0]
    return bool(_STACK_IMPORT.search(before.rstrip()[-200:]))


def _raised_in_stack(text: str) -> bool:
    """Whether a traceback's innermost frame is in TensorFlow's stack."""
    path = innermost_path(text)
    return path is not None and bool(_STACK_FILE.search(path))


def check(job: Job) -> Iterator[Hit]:
    seen: set[str] = set()
    # The workers whose TensorFlow (or Keras, protobuf) is not the others'.
    skewed = {
        w
        for comp, (_, minority) in differing(job).items()
        if comp.startswith("TensorFlow") or comp in ("tf-keras", "keras", "protobuf")
        for w in minority
    }
    for row in job.rows.of(["py.traceback"]):
        f = row["fields"]
        exc = f.get("exc_type", "").rsplit(".", 1)[-1]
        message = f.get("exc_message", "")
        if row["worker"] in seen or not _IMPORTISH.search(exc):
            continue
        if not (
            says(message, "stack_mismatch")
            or _imports_stack(row["text"], exc)
            or "Version" in exc
            # Raised inside TensorFlow's own code (an option, an attribute this
            # version lacks) on the worker whose TensorFlow differs from the others'.
            or (row["worker"] in skewed and _raised_in_stack(row["text"]))
        ):
            continue
        seen.add(row["worker"])
        tf = next((v for c, v in differing(job).items() if c.startswith("TensorFlow")), None)
        skew = ""
        if tf:
            by_version: dict[str, list[str]] = {}
            for w, v in sorted(tf[0].items()):
                by_version.setdefault(v, []).append(w)
            skew = " The workers' TensorFlow versions differ: " + " vs ".join(
                f"{v} on {', '.join(ws)}" for v, ws in by_version.items()
            )
            skew += "."
        said = message[:200].rstrip(". ")
        yield Hit(
            subject=row["worker"],
            summary=f"{row['worker']}'s environment does not match the script: {exc}: {said}.{skew}",
            evidence=[evidence(row, "import failed")],
            confidence=0.85,
            ts=row["ts"],
            facts={"exception": exc, "message": message},
        )

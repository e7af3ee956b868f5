"""EM001 emitter-says: a worker failed with a message whose own source says what it is.

## What it means
A worker printed an error that no rule of this tool reads by name, but that
TensorFlow, tf-keras, Horovod or NCCL print from a format string whose
meaning is known from their source (`scripts/coverage.py` reads every error
and warning format string of their distributed code and gives each a class:
`Duplicate job ID in cluster specification` is a TF_CONFIG error, `Failed to
CUDA malloc` an out-of-memory, `Mismatched NCCL version detected` version
skew). The finding names the class, the file and line that print the
message, and the worker that printed it first.

## Why it happens
The class's own causes apply; the finding's summary names it. This rule
stands only where no rule that reads the message's own words, or the
shape of the job's progress, explained the failure, and with less
confidence than those: the message is known by where it comes from, not by
a recording of it.

## What to do
Read the message in the evidence and follow the advice for its class (run
`mwms-doctor explain <class>`). If the message reports a peer's failure,
look at that peer's log first.
"""

from __future__ import annotations

from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.ingest.emitted import meaning_of
from mwms_doctor.rows import evidence

CODE = "EM001"
NAME = "emitter-says"
CLASS = "unknown"  # each finding's class is the one its message's source gives (Hit.cls)
SEVERITY = "error"
REQUIRES = ("events",)
PRECEDENCE = "generic"
DEFERS_TO: tuple[str, ...] = ()

# Classes a worker's own message points at for that worker itself. A lost
# peer or a handshake that waited is about another worker: the rules that
# read who stopped and who waited decide those.
CONCLUDES = frozenset(
    {
        "tf_config_mismatch",
        "oom",
        "version_skew",
        "collective_mismatch",
        "nccl_error",
        "preemption",
        "grpc_message_size",
        "nan_loss",
        "data_exhaustion",
    }
)


def check(job: Job) -> Iterator[Hit]:
    seen: set[str] = set()
    for row in job.facts.errors:
        worker = row["worker"]
        said = meaning_of(row["kind"]) or row["fields"].get("meaning")
        if worker in seen or said not in CONCLUDES:
            continue
        if job.facts.shutdown_noise(row["ts"], worker):
            continue
        seen.add(worker)
        f = row["fields"]
        yield Hit(
            subject=worker,
            summary=(
                f"{worker} failed with {f.get('emitted_by', 'an emitter')}'s own message, printed at "
                f"{f.get('emitted_at', 'a known place')}, whose source says it is: {said.replace('_', ' ')} "
                f"(what to do: `mwms-doctor explain {said}`)."
            ),
            evidence=[evidence(row, "cause")],
            confidence=0.5,
            ts=row["ts"],
            cls=said,
            facts={"emitted_at": f.get("emitted_at", ""), "meaning": said},
        )

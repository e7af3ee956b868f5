"""NC001 nccl-failed: NCCL, the GPU collective library, failed on a worker.

## What it means
The all-reduce between GPUs runs in NCCL when MultiWorkerMirroredStrategy
uses `CommunicationImplementation.NCCL` (or AUTO on GPUs). NCCL reported an
error on this worker (`NCCL: unhandled system error`, `NCCL WARN ...`,
`ncclInternalError`): the collective aborted there, and the other workers
then fail or wait for it (their `Collective ops is aborted` and
`seems down` errors are echoes).

## Why it happens
`unhandled system error` is almost always the network or the host: an
InfiniBand/RoCE device NCCL cannot use (`ibv_create_qp failed`), the wrong
network interface picked (`NCCL_SOCKET_IFNAME`), too little shared memory in
a container (`/dev/shm`), or a peer process that died. `unhandled cuda error`
points at the GPU or driver; `invalid usage` at mismatched NCCL versions or
wrong device assignment.

## What to do
Rerun with `NCCL_DEBUG=INFO` (or WARN) to get NCCL's own explanation in the
log, then check the line NCCL prints before the error. In containers, mount a
larger `/dev/shm` (`--shm-size`), set `NCCL_SOCKET_IFNAME` to the interface
the workers share, or `NCCL_IB_DISABLE=1` to rule out InfiniBand. Use the
same NCCL/CUDA build on every worker.
"""

from __future__ import annotations

from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import evidence

CODE = "NC001"
NAME = "nccl-failed"
CLASS = "nccl_error"
SEVERITY = "error"
REQUIRES = ("events",)
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()


def check(job: Job) -> Iterator[Hit]:
    rows = job.rows.of(["nccl.error"]) + job.rows.tracebacks_with(["nccl.error"])
    rows.sort(key=lambda r: (r["ts"] is None, r["ts"] or 0))
    if not rows:
        return
    first = rows[0]
    worker = first["worker"]
    mine = [r for r in rows if r["worker"] == worker]
    f = first["fields"]
    what = (
        f.get("nccl_status")
        or f.get("nccl_code")
        or f.get("nccl_call")
        or (f.get("nccl_message") or first["text"].splitlines()[0])[:160]
    )
    yield Hit(
        subject=worker,
        summary=f"NCCL failed on {worker} ({what}); the collective aborted and the other workers lost it.",
        evidence=[evidence(r, "NCCL") for r in mine[:3]],
        confidence=0.85,
        ts=first["ts"],
        facts={"nccl": what},
    )

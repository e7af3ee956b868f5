"""OM001 device-allocation-failed: a worker ran out of memory allocating a tensor.

## What it means
TensorFlow's allocator (or the CUDA driver: `CUDA_ERROR_OUT_OF_MEMORY`) on one worker could not grant a tensor the memory it
asked for, raised `ResourceExhaustedError` (`OOM when allocating tensor
with shape[...]`) and the worker's training step failed. Under
MultiWorkerMirroredStrategy the other workers then lose their collective with
it and fail too (`Collective ops is aborted by`, `Socket closed`): those
are echoes of this failure, not failures of their own.

## Why it happens
The batch per replica, the model or one intermediate tensor is larger than the
device (GPU memory, or host RAM for CPU devices) can hold: a global batch size
that was not divided by the number of replicas, a bigger model than tested,
long sequences, a memory leak growing over steps, or another process sharing
the GPU. Only one worker fails when inputs differ in size across workers (a
worker whose shard holds the longest sequences) or when its device has less
free memory.

## What to do
Compare the requested size with the allocator's limit in the evidence.
Reduce the per-replica batch (global batch = per-replica batch x number of
replicas), use mixed precision, or shard the model. If only one worker fails,
check what else runs on its device (`nvidia-smi`) and whether its data is
larger. On GPUs, `TF_GPU_ALLOCATOR=cuda_malloc_async` helps when the
allocator dump shows fragmentation rather than a genuinely too-large request.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import Row, evidence, time_key
from mwms_doctor.text import human_bytes, parse_bytes

CODE = "OM001"
NAME = "device-allocation-failed"
CLASS = "oom"
SEVERITY = "error"
REQUIRES = ("events",)
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()

_KINDS = (
    "oom.tensor_allocation",
    "oom.allocator_exhausted",
    "oom.xla",
    "oom.bfc_dump",
    "oom.generic",
    "oom.resource_exhausted",
)
# How sure each kind alone makes us: the failed allocation itself, an allocator
# dump (printed when one fails), the driver's refusal, cuDNN without workspace.
_CONFIDENCE = {
    "oom.tensor_allocation": 0.95,
    "oom.allocator_exhausted": 0.95,
    "oom.xla": 0.95,
    "oom.bfc_dump": 0.85,
    "oom.generic": 0.7,  # "out of memory" in a message no specific template knows: device or host
    "oom.resource_exhausted": 0.8,  # TF's ResourceExhaustedError, its message cut off
    "oom.cuda_alloc_failed": 0.75,
    "oom.cudnn_alloc": 0.6,
}
# Bytes per element of the dtype names TF prints in "and type <dtype>".
_DTYPE_BYTES = {
    "float": 4,
    "double": 8,
    "half": 2,
    "bfloat16": 2,
    "float16": 2,
    "float32": 4,
    "float64": 8,
    "int8": 1,
    "uint8": 1,
    "int16": 2,
    "uint16": 2,
    "int32": 4,
    "uint32": 4,
    "int64": 8,
    "uint64": 8,
    "bool": 1,
    "complex64": 8,
    "complex128": 16,
}


def _tensor_bytes(shape: str, dtype: str) -> int | None:
    dims = [d for d in re.split(r"[,\s]+", shape.strip()) if d]
    if not dims or not all(d.isdigit() for d in dims) or dtype not in _DTYPE_BYTES:
        return None
    n = 1
    for d in dims:
        n *= int(d)
    return n * _DTYPE_BYTES[dtype]


def check(job: Job) -> Iterator[Hit]:
    by_worker: dict[str, list[Row]] = defaultdict(list)
    for row in job.rows.of(_KINDS) + job.rows.tracebacks_with(list(_KINDS)):
        by_worker[row["worker"]].append(row)
    # The CUDA driver's refusals count only on a worker that then failed: TF
    # prints them while it backs off at start-up on jobs that train fine.
    failed = {w for w, r in job.facts.workers.items() if r["exit_code"] not in (None, 0) or r["n_errors"]}
    soft = ["oom.cuda_alloc_failed", "oom.cudnn_alloc"]
    for row in job.rows.of(soft) + job.rows.tracebacks_with(soft):
        gave_up = row["worker"] in failed and (row["kind"] == "py.traceback" or _fails_after(job, row))
        # TF backs off after a refusal and trains on: it counts unless training went on after it.
        if gave_up or not job.facts.progressed_after(row):
            by_worker[row["worker"]].append(row)
    for worker, rows in by_worker.items():
        rows.sort(key=lambda r: (r["source"], r["line"]))
        facts: dict[str, object] = {}
        for r in rows:
            f = r["fields"]
            for key in ("shape", "dtype", "device", "allocator"):
                if f.get(key) and key not in facts:
                    facts[key] = f[key]
            if f.get("requested_bytes") and "requested_bytes" not in facts:
                facts["requested_bytes"] = int(f["requested_bytes"])
            if f.get("limit") and "limit_bytes" not in facts:
                facts["limit_bytes"] = parse_bytes(f["limit"])
            if f.get("in_use") and "in_use_bytes" not in facts:
                facts["in_use_bytes"] = parse_bytes(f["in_use"])
        if "requested_bytes" not in facts and facts.get("shape") and facts.get("dtype"):
            facts["requested_bytes"] = _tensor_bytes(str(facts["shape"]), str(facts["dtype"]))
        timed = [r for r in rows if r["ts"] is not None]
        first = min(timed, key=lambda r: r["ts"]) if timed else rows[0]

        what = "a tensor"
        if facts.get("dtype") or facts.get("shape"):
            what = f"a {facts.get('dtype', '')} tensor of shape [{facts.get('shape', '?')}]".replace(
                "a  ", "a "
            )
        req = facts.get("requested_bytes")
        lim = facts.get("limit_bytes")
        size = f" ({human_bytes(float(req))})" if isinstance(req, int) else ""
        where = f" on {facts['device']}" if facts.get("device") else ""
        limit = ""
        if isinstance(lim, int):
            limit = (
                f"; the {facts.get('allocator', '')} allocator's limit is {human_bytes(float(lim))}".replace(
                    "the  ", "the "
                )
            )
        summary = f"{worker} ran out of memory allocating {what}{size}{where}{limit}."
        roles = {
            "oom.cuda_alloc_failed": "CUDA driver",
            "oom.allocator_exhausted": "allocator",
            "oom.tensor_allocation": "failed op",
            "oom.bfc_dump": "allocator dump",
            "oom.generic": "out of memory",
            "oom.xla": "compiler",
            "oom.cudnn_alloc": "cuDNN/cuBLAS",
            "py.traceback": "exception",
        }
        # The first record of each kind says it all; TF repeats the message
        # as the error travels up (op kernel, rendezvous, Python exception).
        firsts: dict[str, Row] = {}
        for r in rows:
            firsts.setdefault(r["kind"], r)
        ev = [evidence(r, roles.get(r["kind"], "")) for r in firsts.values()]
        yield Hit(
            subject=worker,
            summary=summary,
            evidence=ev,
            confidence=max(_CONFIDENCE.get(r["fields"].get("tf_kind") or r["kind"], 0.9) for r in rows),
            ts=first["ts"],
            local=True,
            facts=facts,
        )


def _fails_after(job: Job, row: Row) -> bool:
    """The worker's last error comes after this record: the refusal was not recovered from."""
    errors = [r for r in job.rows.errors(row["worker"]) if r["kind"] != "oom.cuda_alloc_failed"]
    return bool(errors) and time_key(errors[-1]) >= time_key(row)

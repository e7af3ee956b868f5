"""GR001 message-too-large: a gRPC message was larger than allowed.

## What it means
A tensor or a request sent between workers was larger than the limit of the
channel: gRPC's `RESOURCE_EXHAUSTED: Received message larger than max (N
vs. M)` (its default limit is 4 MiB; TF raises it on its worker channels
but not everywhere), or protobuf's hard limit of 2 GB for one message
(`tensorflow.RecvBufRespExtra exceeded maximum protobuf size of 2GB`). The
transfer fails, and the collective or call it belonged to aborts on every
worker. This is not an out-of-memory error, although the status is called
RESOURCE_EXHAUSTED.

## Why it happens
One tensor over 2 GB in a collective (a huge embedding table's gradient, a
dense gradient of a sparse layer), a dataset or model sent whole through a
`tf.data` service or parameter server, or a service whose channel keeps
gRPC's default 4 MiB limit.

## What to do
Make the tensors smaller: partition large embedding variables
(`variable_partitioner`), keep sparse gradients sparse, or split the
all-reduce (`CommunicationOptions(bytes_per_pack=...)`). For a service with a
4 MiB limit, raise its `grpc.max_receive_message_length`.
"""

from __future__ import annotations

from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import evidence
from mwms_doctor.text import human_bytes

CODE = "GR001"
NAME = "message-too-large"
CLASS = "grpc_message_size"
SEVERITY = "error"
REQUIRES = ("events",)
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()

_KINDS = ["grpc.message_too_large", "grpc.protobuf_too_large"]


def check(job: Job) -> Iterator[Hit]:
    reports = job.rows.first_reports(_KINDS)
    if not reports:
        return
    # The earliest report says who failed to send or receive it; the rest repeat it.
    row = next(iter(reports.values()))
    f = row["fields"]
    size = int(f["size"]) if f.get("size", "").isdigit() else None
    limit = int(f["max"]) if f.get("max", "").isdigit() else (2**31 if f.get("message_type") else None)
    what = f"a message of {human_bytes(size)}" if size else "a message"
    lim = f" over the limit of {human_bytes(limit)}" if limit else ""
    yield Hit(
        subject=row["worker"],
        summary=f"{row['worker']} could not transfer {what}{lim}; the collective that carried it aborted.",
        evidence=[evidence(row, "size limit")],
        confidence=0.9,
        ts=row["ts"],
        facts={"size_bytes": size, "limit_bytes": limit},
    )

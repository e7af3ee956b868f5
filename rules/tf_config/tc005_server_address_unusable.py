"""TC005 server-address-unusable: a worker could not start its server on the address TF_CONFIG gives it.

## What it means
This worker's gRPC server could not listen on its own address from the
cluster spec (`Address already in use`, `No address added out of total 1
resolved`, `Could not start gRPC server`): another process already holds
that port, or the address is not one of this host's. The worker stops at
startup (sometimes with a crash), and the others wait for it at the
handshake or lose it: their errors are echoes.

## Why it happens
Two tasks of the cluster spec given the same host and port (a template
that repeats one address, several tasks scheduled on one node with a fixed
port), a previous run's process still holding the port, a port picked at
random that another process took in the meantime, or a host name in
TF_CONFIG that resolves to another machine.

## What to do
Check that every address in the cluster spec is unique and belongs to the
host its task runs on (`ss -ltnp | grep PORT` on that host shows who holds
the port). Kill leftovers of a previous run, or let the launcher assign free
ports, and restart the whole job.
"""

from __future__ import annotations

from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import evidence

CODE = "TC005"
NAME = "server-address-unusable"
CLASS = "tf_config_mismatch"
SEVERITY = "error"
REQUIRES = ("events",)
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()


def check(job: Job) -> Iterator[Hit]:
    for worker, row in job.rows.first_reports(["tf.server_start_failed"]).items():
        where = row["fields"].get("bind") or row["fields"].get("address") or "its address"
        yield Hit(
            subject=worker,
            summary=(
                f"{worker} could not start its server on {where}: "
                f"{row['text'].strip().splitlines()[0][:160]}. Another process holds the port, or the "
                f"address in TF_CONFIG is not this host's."
            ),
            evidence=[evidence(row, "server failed")],
            confidence=0.85,
            ts=row["ts"],
            facts={"address": where},
        )

"""TC003 task-claimed-twice: two processes were given the same task index.

## What it means
Two workers' TF_CONFIGs name the same task (`"task": {"type": "worker",
"index": 1}` on both), so no process is the task whose index is missing. The
second one to start cannot listen on the task's port (`Could not start gRPC
server`, the address is taken when they share a host) or registers a task
the coordination service already has; the missing task never registers and
the job waits at the handshake. The worker named here is the one whose file
(pod, host) says it was meant to be another task.

## Why it happens
A launcher or template that computes the index from something that is not
unique (the host name on a multi-GPU host, a StatefulSet ordinal read from
the wrong variable), or one config copied to two hosts.

## What to do
Give every process its own `task.index` (0 to N-1, each once) and restart the
job. The evidence shows which TF_CONFIG each process had.
"""

from __future__ import annotations

from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import evidence

CODE = "TC003"
NAME = "task-claimed-twice"
CLASS = "tf_config_mismatch"
SEVERITY = "error"
REQUIRES = ("events", "workers")
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()


def check(job: Job) -> Iterator[Hit]:
    for worker, row in job.facts.workers.items():
        claimed = row.get("claims_task")
        if not claimed:
            continue
        ev = []
        for kind in ("tf_config.dump", "mwms.cluster_spec", "tf.server_started"):
            ev += [evidence(r, "the task it claims") for r in job.rows.of([kind], worker)[:1]]
        ev += [evidence(r, f"{claimed}'s error") for r in job.rows.errors(claimed)[:1]]
        yield Hit(
            subject=worker,
            summary=(
                f"{worker} and {claimed} were both given task {claimed} in TF_CONFIG: no process is {worker}, "
                f"so the cluster cannot form."
            ),
            evidence=ev,
            confidence=0.85,
            ts=min((e.ts for e in ev if e.ts is not None), default=None),
            facts={"claims": claimed},
        )

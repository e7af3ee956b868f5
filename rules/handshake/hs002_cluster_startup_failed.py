"""HS002 cluster-startup-failed: the cluster's start-up failed or never completed, before any training.

## What it means
The workers were still forming the cluster when this evidence ends or
fails: an error while initialising the distributed context or a TF1 master
(`context_distributed_manager`, `Master init: Unavailable`), a task that
could not register with the coordination service (`RegisterTask`,
`DEADLINE_EXCEEDED`), or a launcher still waiting for its tasks
(TensorFlowOnSpark's `waiting for N reservations`), and no training step
happened anywhere. Which task is missing is named when the text names a
peer; often only the waiting side is in the evidence. HS001 reports the
same failure when the coordination service's own wait names the missing
tasks.

## Why it happens
A task that never started or started late past a timeout (its pod is
Pending, its executor never came up), tasks started in the wrong order for
TF1 (workers before parameter servers with a short timeout), or a network
path to a peer that drops packets.

## What to do
Check that every task of the cluster started (pods, executors, launcher
output) and can reach the others' ports (`nc -vz host port`). Start the
parameter servers and the chief first where the framework needs it, or
raise the start-up timeout; then restart the whole job.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.ingest.templates import PROGRESS_KINDS
from mwms_doctor.rows import evidence, time_key
from mwms_doctor.tasks import remote_task

CODE = "HS002"
NAME = "cluster-startup-failed"
CLASS = "handshake_deadlock"
SEVERITY = "error"
REQUIRES = ("events",)
# HS001 names the missing tasks when the coordination service says; this
# stands only when nothing more specific explains the failure.
PRECEDENCE = "fallback"
DEFERS_TO: tuple[str, ...] = ()

# Where TF sets the cluster up (C++ origins): an error from these is a start-up failure.
_STARTUP_ORIGINS = re.compile(r"context_distributed_manager|(?:^|/)master\.cc|coordination_service_agent")
_STARTUP_TEXT = re.compile(
    r"ensure_initialized|_initialize_multi_worker|configure_collective_ops|CheckPeerHealth"
)


def check(job: Job) -> Iterator[Hit]:
    if job.rows.has(PROGRESS_KINDS):
        return
    rows = job.rows.of(["cluster.startup_wait"]) + job.rows.tracebacks_with(["cluster.startup_wait"])
    rows += [
        r
        for r in job.rows.errors()
        if _STARTUP_ORIGINS.search(r["origin"] or "") or _STARTUP_TEXT.search(r["text"])
    ]
    if not rows:
        yield from _ended_at_startup(job)
        return
    rows.sort(key=time_key)
    first = rows[0]
    named = [t for r in rows if (t := r["fields"].get("task") or remote_task(r["text"])) and t != r["worker"]]
    subject = named[0] if named else "?"
    who = f"{subject} never joined" if named else "a task never joined (the evidence here does not say which)"
    yield Hit(
        subject=subject,
        summary=(
            f"The cluster never finished starting: {who}; {first['worker']} reported "
            f"{first['text'].strip().splitlines()[0][:160]!r} before any training step."
        ),
        evidence=[evidence(r, "start-up") for r in rows[:3]],
        confidence=0.6 if named else 0.5,
        ts=first["ts"],
        local=False,
        facts={"missing_task_named": bool(named)},
        # A wait that the evidence ends in is no failure by itself; an error is.
        proof="error" if any(r["severity"] in ("error", "fatal") for r in rows) else "",
    )


# What shows a worker reached the cluster start-up.
_STARTED = ("tf.server_started", "coord.service_started", "coord.agent_connected", "mwms.cluster_spec")


def _ended_at_startup(job: Job) -> Iterator[Hit]:
    """Logs that end right after the server or the coordination service
    started, with no training step anywhere: the job stopped during the
    handshake (killed while waiting, or the logs were taken then)."""
    started = job.rows.of(list(_STARTED))
    if not started:
        return
    live = [job.facts.workers[w] for w in job.facts.named]
    if live and all(r["exit_code"] == 0 and not r["exit_signal"] for r in live):
        return  # every worker exited 0: it trained without printing progress (Keras verbose=0)
    formed = [r for r in job.rows.of(["coord.barrier_passed"]) if r["fields"].get("status") == "OK"] + [
        r for r in job.rows.of(["coord.waiting_for_tasks"]) if r["fields"].get("waiting") == "0"
    ]
    if formed:
        return  # the leader saw every task connect: the start-up was over, whatever came after
    last = {r["worker"]: r for r in started}
    yield Hit(
        subject="?",
        also=[],
        summary=(
            f"The logs end during the cluster's start-up: {', '.join(sorted(last))} started "
            f"({last[sorted(last)[0]]['text'].strip().splitlines()[0][:100]!r}) but no worker ran a training step."
        ),
        evidence=[evidence(r, "last start-up step") for r in list(last.values())[:3]],
        confidence=0.45,
        ts=started[-1]["ts"],
        local=False,
        facts={"ended_at_startup": True},
        proof="",
    )

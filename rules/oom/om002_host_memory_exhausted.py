"""OM002 host-memory-exhausted: a worker ran out of host (CPU) memory.

## What it means
The worker's process could not get memory from the operating system: Python
raised `MemoryError` (NumPy: `Unable to allocate 64.0 TiB for an array`),
C++ code died with `std::bad_alloc`, or the kernel's OOM killer (or the
container runtime, `OOMKilled`) killed it with SIGKILL (exit 137). Killed
workers print nothing: their log just stops, and the evidence is the
kernel's or Kubernetes' record. The other workers then lose their peer; their
errors are echoes.

## Why it happens
Host memory is used by the input pipeline (`shuffle` and `prefetch`
buffers, `cache()` in memory, a dataset loaded whole with NumPy), by Python
objects growing each step (a leak: metrics or tensors kept in a list), and on
CPU workers by the model's tensors too. A container memory limit lower than
the node's memory kills earlier than the node would. Only one worker fails
when its data or its share of a skewed dataset is larger, or when other
processes on its node use memory.

## What to do
Compare the worker's memory limit with what it used: `kubectl describe pod`
(Last State: OOMKilled), `dmesg | grep -i oom` on the node, the allocation
size in the error. Reduce the shuffle buffer, do not `cache()` large datasets
in memory, stream data instead of loading it whole, or raise the container's
memory limit. A leak shows as memory growing per epoch in the pod's metrics.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import Row, env_evidence, evidence, worker_named

CODE = "OM002"
NAME = "host-memory-exhausted"
CLASS = "oom"
SEVERITY = "error"
REQUIRES = ("events", "workers")
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()

_REQUESTED = re.compile(r"Unable to allocate (?P<size>[\d.]+ ?[KMGTP]?i?B)")
# What the platform says when it killed a process for memory.
_KILLED_FOR_MEMORY = ("OOMKilled", "killed by the kernel's OOM killer", "Out Of Memory")


def _memory_errors(job: Job) -> list[Row]:
    out = [
        r
        for r in job.rows.of(["py.traceback"])
        if r["fields"].get("exc_type", "").rsplit(".", 1)[-1].endswith("MemoryError")
    ]
    return out + job.rows.of(["host.bad_alloc"])


# SIGKILL as an exit status: 137 from a shell or a container runtime, -9 from
# Python's subprocess. Alone it says "killed", and most often by the OOM killer.
_SIGKILL_CODES = {"137", "-9"}


def _ran_tf(job: Job, worker: str) -> bool:
    """Whether a part's lines show a TensorFlow process (its server, its version, a step)."""
    return job.rows.has(
        ["tf.server_started", "coord.agent_connected", "env.tf_version", "train.step", "train.epoch"], worker
    )


def _killed_in_text(job: Job, seen: set[str]) -> Iterator[Hit]:
    """What a log or a pasted excerpt says of a kill: the kernel's OOM killer,
    Kubernetes' OOMKilled or a memory eviction (sure), or only a shell's
    ``Killed`` / exit 137 (likely the OOM killer, not certain)."""
    sure = job.rows.of(["kernel.oom_kill", "k8s.oom_killed", "lsf.memlimit", "platform.memory_limit"])
    sure += [
        r
        for r in job.rows.of(["k8s.evicted"])
        if "memory" in (r["fields"].get("resource") or r["text"]).lower()
    ]
    likely = [
        r
        for r in job.rows.of(["shell.killed", "proc.exit_code", "proc.crashed"])
        if r["kind"] == "shell.killed"
        or r["fields"].get("code") in _SIGKILL_CODES
        # Go's "signal: killed" (a runner's exec); not a runner's own report of
        # the signal it saw ("Task failed: killed by signal 9"): a kill, no more.
        or (
            "killed" in r["fields"].get("crash", "").lower()
            and "by signal" not in r["fields"].get("crash", "")
        )
    ]
    # Only an unexplained SIGKILL is likely an OOM. A kill whose reason the
    # exit record states is either memory (the kernel named its pid, OOMKilled:
    # said surely below) or something else (Kubernetes' "Reason: Error" beside
    # exit 137: a kill from outside, a runner's deadline or a drain): no guess.
    likely = [r for r in likely if not job.facts.workers.get(r["worker"], {}).get("exit_note")]
    # A launcher's line about a worker's exit is that worker's exit record
    # (facts.workers), not a worker killed: the launcher is no worker.
    likely = [r for r in likely if r["worker"] in job.facts.workers]
    # A platform's line that names the pod it killed (kubectl get pods: OOMKilled) is that worker's.
    workers = {w: info for w, info in job.facts.workers.items() if not w.startswith("?")}
    # A part no task is, that never ran TensorFlow, beside the named workers: a
    # platform's record or console ("Killed  Task successfully killed" in a
    # scheduler's event table), not a process killed for its memory.
    likely = [
        r for r in likely if not (r["worker"].startswith("?") and workers and not _ran_tf(job, r["worker"]))
    ]
    sure = [{**r, "worker": worker_named(r, workers)} for r in sure]
    # A platform's word in a part no task is (Slurm's "Detected 1 oom_kill event
    # in StepId=..." in the batch output) that names no task: the one worker
    # whose exit says memory, else the one killed with SIGKILL.
    said = [w for w, i in workers.items() if any(k in (i.get("exit_note") or "") for k in _KILLED_FOR_MEMORY)]
    killed = [w for w, i in workers.items() if i.get("exit_signal") == "SIGKILL"]
    whose = said if len(said) == 1 else killed if len(killed) == 1 and not said else []
    if whose:
        sure = [{**r, "worker": whose[0]} if r["worker"].startswith("?") else r for r in sure]
    for rows, confidence, how in (
        (sure, 0.9, "the platform says it was out of memory"),
        (
            likely,
            0.5,
            "it was killed with SIGKILL, most often the kernel's OOM killer (not certain: "
            "a scheduler or a person can also kill -9)",
        ),
    ):
        for worker in dict.fromkeys(r["worker"] for r in rows):
            if worker in seen:
                continue
            seen.add(worker)
            mine = [r for r in rows if r["worker"] == worker]
            yield Hit(
                subject=worker,
                summary=f"{worker} was killed for memory: {how} ({mine[0]['text'].strip().splitlines()[0][:160]}).",
                evidence=[evidence(r, "kill") for r in mine[:3]],
                confidence=confidence,
                ts=mine[0]["ts"],
                facts={"certain": confidence >= 0.9},
            )


def check(job: Job) -> Iterator[Hit]:
    seen: set[str] = set()
    for row in _memory_errors(job):
        worker = row["worker"]
        if worker in seen:
            continue
        seen.add(worker)
        msg = row["fields"].get("exc_message", "") or row["text"].splitlines()[0]
        m = _REQUESTED.search(msg)
        what = f"allocating {m['size']}" if m else "allocating memory"
        how = "std::bad_alloc" if row["kind"] == "host.bad_alloc" else "MemoryError"
        yield Hit(
            subject=worker,
            summary=f"{worker} ran out of host memory {what} ({how}: {msg[:200]}).",
            evidence=[evidence(row, "exception")],
            confidence=0.95,
            ts=row["ts"],
            facts={"requested": m["size"] if m else None, "error": how},
        )
    yield from _killed_in_text(job, seen)
    platform = job.rows.env(["exit", "kernel"])
    for worker, info in job.facts.workers.items():
        note = info.get("exit_note") or ""
        if worker in seen or not any(k in note for k in _KILLED_FOR_MEMORY):
            continue
        # The pod's OOMKilled reason, or the kernel's kill line naming its pid.
        ev = [
            env_evidence(r, f"{r['key']}: {r['value']}", "platform record")
            for r in platform
            if (r["worker"] == worker and r["value"] == "OOMKilled")
            or (r["key"] == "oom_kill.pid" and str(r["value"]) == str(info.get("pid")))
        ]
        last = info.get("last_ts")
        yield Hit(
            subject=worker,
            summary=(
                f"{worker} was killed for using too much memory ({note}, exit {info.get('exit_code')}); "
                f"its log stops without an error."
            ),
            evidence=ev,
            confidence=0.9,
            ts=last,
            facts={"exit_code": info.get("exit_code"), "exit_note": note},
        )

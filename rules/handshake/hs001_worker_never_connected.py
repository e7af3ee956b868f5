"""HS001 worker-never-connected: the cluster never formed; a task never registered.

## What it means
MultiWorkerMirroredStrategy waits at startup until every task in TF_CONFIG
has registered with the coordination service (run by the first task). Here
the last word of the coordination service is `Waiting for N/M tasks to
connect` with the missing tasks listed as `Example stragglers`, and
nothing happened after it: no barrier passed, no training step. TF 2.x has
no registration timeout, so the job waits silently forever (until a
scheduler or a person kills it). The workers that did connect did nothing
wrong.

When the task that runs the coordination service (the first task) is the
one missing, nobody prints a wait: every other worker starts its server and
then blocks, silently, trying to register.

## Why it happens
The missing task never started (its pod is Pending, its container failed to
pull, the launcher skipped it), crashed before it reached the handshake (an
import error, a bad path), or started with a different TF_CONFIG so it tries
to join another cluster or listens on another address. A worker that starts
late is *not* this failure: it joins when it comes up and training begins.

## What to do
Find the missing task below. No log at all: check that it was scheduled and
started (`kubectl get pods`, the launcher's output). A log with an error:
fix that error, it is the real cause. A log without an error: compare its
TF_CONFIG (cluster list and task index) and the address in its `Started
server with target` line with the other workers'. Then restart the whole job:
the others will not notice a late fix.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from mwms_doctor.facts import Job
from mwms_doctor.findings import Evidence, Hit
from mwms_doctor.rows import Row, evidence, from_runtime

CODE = "HS001"
NAME = "worker-never-connected"
CLASS = "handshake_deadlock"
SEVERITY = "error"
REQUIRES = ("events", "workers")
PRECEDENCE = "specific"
# A task that could not reach a listening leader never registered because of the path (FW001).
DEFERS_TO: tuple[str, ...] = ("FW001",)

# Records that prove the cluster formed or training began after a wait.
_PROGRESS = ("coord.barrier_passed", "keras.epoch", "keras.epoch_end")


def _after(row: Row, other: Row) -> bool:
    if row["ts"] is None or other["ts"] is None:
        return bool(row["source"] == other["source"] and row["line"] > other["line"])
    return bool(row["ts"] >= other["ts"])


# What other TF versions print while they wait for peers at startup: TF 2.x
# before 2.16 (a startup barrier that times out), TF 2.4-2.6 MWMS (`Waiting
# for the cluster` until `Cluster is ready.`), TF1 sessions (CreateSession).
_OTHER_WAITS = ("coord.barrier_timeout", "mwms.waiting_for_cluster", "tf1.create_session_waiting")
# Records that show a worker reached the handshake.
_AT_HANDSHAKE = (
    "tf.server_started",
    "coord.agent_connected",
    "coord.task_connected",
    "mwms.cluster_spec",
    *_OTHER_WAITS,
    "mwms.cluster_ready",
)


def _interrupted(row: Row) -> bool:
    """A KeyboardInterrupt: the process was stopped from outside (Ctrl-C, a
    scheduler's SIGINT), it did not crash."""
    f = row["fields"] or {}
    return "KeyboardInterrupt" in str(f.get("exc_type", "")) + str(f.get("exc_message", ""))


def check(job: Job) -> Iterator[Hit]:
    waits = job.rows.of(["coord.waiting_for_tasks"])
    if waits:
        yield from _leader_waiting(job, waits[-1])
    elif job.rows.has(_OTHER_WAITS):
        yield from _other_waits(job)
    else:
        yield from _no_leader(job)


def _other_waits(job: Job) -> Iterator[Hit]:
    """Older TF's waits: the tasks named in them, else the tasks that never
    reached the handshake at all, are the missing ones."""
    waits = job.rows.of(_OTHER_WAITS)
    ready = {r["worker"] for r in job.rows.of(["mwms.cluster_ready", *_PROGRESS])}
    stuck = [r for r in waits if r["kind"] == "coord.barrier_timeout" or r["worker"] not in ready]
    if not stuck:
        return
    wk = job.facts.workers
    named = [t for r in stuck if (t := r["fields"].get("task"))]
    missing = list(dict.fromkeys(named))
    if not missing:
        reached = {r["worker"] for r in job.rows.of(_AT_HANDSHAKE)}
        missing = [w for w in wk if w not in reached and not w.startswith("?")]
    if not missing:
        return
    ev = []
    for worker in dict.fromkeys(r["worker"] for r in stuck):
        ev.append(evidence(next(r for r in stuck if r["worker"] == worker), "waiting for peers"))
    lead = (
        f"The cluster never formed: {', '.join(sorted({e.worker for e in ev}))} waited at startup for peers "
        f"that never came"
    )
    yield _hit(job, wk, missing, ev, lead, 0.8)


def _leader_waiting(job: Job, last: Row) -> Iterator[Hit]:
    """The coordination service's last word is a wait for tasks that never came."""
    f = last["fields"]
    if int(f.get("waiting", "0")) == 0:
        return
    if any(_after(p, last) for p in job.rows.of(_PROGRESS)):
        return
    connected = {r["fields"].get("task") for r in job.rows.of(["coord.task_connected"])}
    missing = [t for t in f.get("stragglers", "").split(",") if t]
    wk = job.facts.workers
    if len(missing) < int(f["waiting"]):  # TF lists only a few "example" stragglers
        missing += [w for w in wk if w not in connected and w not in missing and not w.startswith("?")]
    if not missing:
        return
    waited = f"{f.get('waiting')}/{f.get('total')}"
    lead = (
        f"The cluster never formed: the coordination service on {last['worker']} was still waiting for "
        f"{waited} tasks when the logs end"
    )
    yield _hit(job, wk, missing, [evidence(last, "coordination service")], lead, 0.9)


def _no_leader(job: Job) -> Iterator[Hit]:
    """No coordination service in any log: the task that runs it never came up.

    Every worker that did start stops after starting its server (it blocks
    registering with the coordination service, silently), nobody joined and
    nothing trained, and some task of the cluster has no log at all."""
    if job.rows.has(["coord.agent_connected", "coord.service_started", *_PROGRESS]):
        return
    started = job.rows.of(["tf.server_started"])
    if not started:
        return
    wk = job.facts.workers
    missing = [w for w, row in wk.items() if not row["has_log"] and not w.startswith("?")]
    if not missing:
        return
    ev = []
    for worker in dict.fromkeys(r["worker"] for r in started):
        tail = job.rows.last(worker, 1)
        ev.append(evidence(tail[0], "last line: still waiting to register"))
    lead = (
        f"The cluster never formed: {', '.join(sorted({e.worker for e in ev}))} started their servers and "
        f"then waited to register with the coordination service, which runs on the first task"
    )
    yield _hit(job, wk, missing, ev, lead, 0.75)


def _hit(
    job: Job,
    wk: Mapping[str, Mapping[str, Any]],
    missing: list[str],
    ev: list[Evidence],
    lead: str,
    confidence: float,
) -> Hit:
    why: list[str] = []
    crashed = False
    for task in missing:
        row = wk.get(task, {})
        if not row.get("has_log"):
            why.append(f"{task} never started (there is no log from it)")
            continue
        # A stop from outside (Ctrl-C, a scheduler's SIGINT: KeyboardInterrupt) is no crash.
        errs = [e for e in job.rows.errors(task) if not _interrupted(e)]
        if errs:
            crashed = True
            ev.append(evidence(errs[0], "its first error"))
            why.append(f"{task} crashed before connecting")
            confidence = min(confidence, 0.85)
        elif not job.rows.has(_AT_HANDSHAKE, task):
            # Its last words before it was stopped (not the stop's own KeyboardInterrupt).
            # (the script's own, where it printed any: TF's start-up records say nothing of it)
            last = [r for r in job.rows.last(task, 12) if not _interrupted(r)]
            own = [r for r in last if r["kind"] is None and not from_runtime(r)]
            tail = (own or last)[-1:]
            ev += [evidence(r, "its last line") for r in tail]
            said = f" (its last line: {tail[0]['text'].splitlines()[0][:120]!r})" if tail else ""
            why.append(f"{task}'s log never reaches the handshake: its script was still busy or stuck{said}")
            confidence = min(confidence, 0.8)
        elif (moved := _listens_elsewhere(job, task)) is not None:
            row_, expected = moved
            ev.append(evidence(row_, "where it listens"))
            why.append(
                f"{task} listens on {row_['fields'].get('host')}:{row_['fields'].get('port')}, but the others "
                f"expect it at {expected}"
            )
            confidence = min(confidence, 0.8)
        else:
            why.append(
                f"{task} started but never registered: check its TF_CONFIG and the address it listens on"
            )
            confidence = min(confidence, 0.7)
    return Hit(
        subject=missing[0],
        also=missing[1:],
        summary=f"{lead}; {'; '.join(why)}.",
        evidence=ev,
        confidence=confidence,
        ts=min((e.ts for e in ev if e.ts is not None), default=None),
        local=False,
        facts={"missing": missing},
        # TF 2.21 waits for a missing task for ever: the wait is no failure
        # until something ends it (a kill, a bad exit), unless the task crashed.
        proof="error" if crashed else "",
    )


def _listens_elsewhere(job: Job, task: str) -> tuple[Row, str] | None:
    """The task's `Started server with target` address, when the other
    workers' cluster lists put it somewhere else."""
    started = job.rows.of(["tf.server_started"], task)
    if not started:
        return None
    role, _, index = task.partition(":")
    expected = {
        spec[role][int(index)]
        for w, (spec, _) in job.facts.cluster_views.items()
        if w != task and role in spec and index.isdigit() and int(index) < len(spec[role])
    }
    f = started[0]["fields"]
    port = f.get("port", "")
    if len(expected) == 1 and not any(a.rsplit(":", 1)[-1] == port for a in expected):
        return started[0], expected.pop()
    return None

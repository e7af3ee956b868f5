"""PR001 worker-preempted: the platform asked a worker to stop (SIGTERM).

## What it means
One worker was taken away while the others went on: TensorFlow's preemption
notifier caught a SIGTERM on this worker (`SIGTERM
caught at <time>`): the scheduler, the Kubernetes kubelet or the cloud VM
asked the process to stop. MultiWorkerMirroredStrategy does not stop on it by
itself (it only records the notice), so unless the script saves and exits,
the platform kills the worker a grace period later (SIGKILL, exit 137) and
the other workers lose it: their errors are echoes. When the worker comes
back (a restart policy), it registers again with a new incarnation, which the
coordination leader logs.

## Why it happens
Spot or preemptible VMs reclaimed, a node drained for maintenance or
autoscaling, a higher-priority pod evicting this one, a job time limit, or a
person deleting the pod.

## What to do
Plan for it: use `tf.keras.callbacks.BackupAndRestore` (or
`tf.distribute.experimental.PreemptionCheckpointHandler` in a custom loop) so
the job saves on SIGTERM and resumes from there when restarted, and give pods
a termination grace period long enough to write a checkpoint. Check the
platform's events (`kubectl get events`, the VM's preemption notices) for
why it was stopped.
"""

from __future__ import annotations

from collections.abc import Iterator

from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.rows import Row, env_evidence, evidence
from mwms_doctor.tables import LAUNCHER

CODE = "PR001"
NAME = "worker-preempted"
CLASS = "preemption"
SEVERITY = "error"
REQUIRES = ("events", "workers")
PRECEDENCE = "specific"
DEFERS_TO: tuple[str, ...] = ()


def _restarts(job: Job) -> dict[str, list[Row]]:
    """Tasks that registered more than once, with different incarnations, with
    one run of the coordination service (one leader's file): a leader's
    earlier run kept beside its current one (a pod's previous log, an
    attempt's folder) is the whole job started again, where every task
    registers anew."""
    seen: dict[tuple[str, str], list[Row]] = {}
    for r in job.rows.of(["coord.task_connected"]):
        seen.setdefault((r["source"], r["fields"].get("task", "")), []).append(r)
    out: dict[str, list[Row]] = {}
    for (_, t), rows in seen.items():
        if t and len({r["fields"].get("incarnation") for r in rows}) > 1:
            out.setdefault(t, rows)
    # The leader's complaint when a restarted task registers into the running job.
    for r in job.rows.of(["coord.task_restarted"]):
        task = r["fields"].get("task", "")
        if task and task not in out:
            out[task] = [r, r]
    return out


def _after_others_failed(job: Job, r: Row) -> bool:
    """Whether the SIGTERM came after another worker had already failed: a
    runner tearing the job down then ("Terminating 2 active tasks"), not a
    preemption that began it."""
    if r["ts"] is None:
        return False
    return any(
        e["ts"] is not None and e["ts"] < r["ts"] for e in job.facts.errors if e["worker"] != r["worker"]
    )


def check(job: Job) -> Iterator[Hit]:
    wk = job.facts.workers
    restarts = _restarts(job)
    notices: dict[str, Row] = {}
    # The whole job stopped at once (a runner's timeout, a cancel) is not one
    # worker taken away: HG001 or the handshake rules say why it was stuck.
    together = job.facts.stopped_together
    for r in job.rows.of(["tf.sigterm_caught"]):
        # A launcher's stream that merged several processes' output: whose
        # SIGTERM it was is not known, so it preempts no one by name.
        if r["worker"] not in together and r["worker"] != LAUNCHER and not _after_others_failed(job, r):
            notices.setdefault(r["worker"], r)
    # Or its platform's record says it ended by SIGTERM (exit 143), no
    # notifier's line in its log: the one worker so ended, whose log stops
    # without an error of its own before any other worker failed.
    termed = [w for w, i in wk.items() if i["has_log"] and i.get("exit_signal") == "SIGTERM"]
    exits: dict[str, Row] = {}
    if len(termed) == 1 and not notices and len(job.facts.live) >= 2:
        (w,) = termed
        last = job.rows.last(w, 1)
        if last and not job.rows.errors(w) and not _after_others_failed(job, last[0]):
            exits[w] = last[0]
    # Or no log of its own at all (its node is gone with it), and its platform
    # says its node was taken away (its record carries no time to order it by).
    said = {
        w: i
        for w, i in wk.items()
        if not i["has_log"] and str(i.get("exit_note") or "").startswith("preempted")
    }
    if len(said) == 1 and not notices and not exits and len(job.facts.live) >= 2:
        ((w, info),) = said.items()
        rows = [r for r in job.rows.env(["exit"], w) if r["key"] == "k8s.preempted"]
        yield Hit(
            subject=w,
            summary=f"{w} was preempted: its platform took its node away ({info['exit_note'][11:180]}); "
            f"there is no log from it, and the other workers lost it.",
            evidence=[env_evidence(r, f"{r['value']}", "platform record") for r in rows[:2]],
            confidence=0.8,
            ts=None,
            facts={"exit_code": info.get("exit_code"), "restarted": False},
        )
        return
    for worker in sorted(set(notices) | set(restarts) | set(exits)):
        info = wk.get(worker, {})
        ev = []
        bits = []
        if worker in notices:
            ev.append(evidence(notices[worker], "SIGTERM"))
            bits.append("caught a SIGTERM")
        if info.get("exit_signal") or info.get("exit_code") not in (None, 0):
            bits.append(
                f"was then killed (exit {info.get('exit_code')}{', ' + info['exit_signal'] if info.get('exit_signal') else ''})"
            )
        if worker in restarts:
            rows = restarts[worker]
            ev += [evidence(r, "registered again") for r in rows[1:2]]
            bits.append(
                "came back and registered again with a new incarnation, which the running job rejects"
            )
        if worker in exits:
            ev.append(evidence(exits[worker], "its last line"))
            bits = [
                f"ended by SIGTERM (exit {info.get('exit_code')}, {info.get('exit_note') or 'its exit record'})"
            ]
        if worker not in notices and worker not in restarts and worker not in exits:
            continue
        yield Hit(
            subject=worker,
            summary=f"{worker} was preempted: it {', '.join(bits)}.",
            evidence=ev,
            confidence=0.9 if worker in notices else 0.6 if worker in exits else 0.7,
            ts=ev[0].ts,
            facts={"exit_code": info.get("exit_code"), "restarted": worker in restarts},
        )

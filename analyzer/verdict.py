"""The verdict policy: what the findings and the facts mean for the job.

One ordered decision table, read top to bottom; the first decision that
applies gives the outcome. Then two adjustments, the same for every outcome:
what could not be checked is said, and what the evidence lacked lowers the
confidence. Precision first: FAILURE needs positive evidence (an error a rule
explains or none does, or a worker that exited badly); text that decides
nothing is never called healthy.

=====================  ============================================================  =========
decision               applies when                                                  status
=====================  ============================================================  =========
root cause             an error finding that nothing else explains, with proof of    failure
                       a failure: an error, a measured stall, or a kill or bad
                       exit in the job
unknown failure        errors that no rule explains, or a worker that exited         failure
                       non-zero or by a signal
inconclusive           an error finding whose evidence simply ends (no error, no     warning
                       stall measured, no kill): the job was stuck, or the logs
                       were taken or cut there
warning                a warning finding (no error)                                  warning
unrecognised           nothing in the evidence is what a TF job or a script prints   warning
stalled at start       training started (an epoch began), no step followed, no       warning
                       worker finished, no error
ended short            a worker's log ends before the training its own progress      warning
                       states was over (an epoch begun and not ended, epoch 2 of
                       3), with no exit status and no error
healthy                none of the above                                             healthy
=====================  ============================================================  =========

Errors a worker printed after it completed its training are shutdown noise
(a peer that exited first is gone), and errors a worker trained on after and
then completed its training were survived: listed, never failing the job.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from .classes import CLASSES, INCONCLUSIVE, SETTLE
from .facts import Facts
from .findings import Evidence, Finding, RuleStatus

# How much each gap in the evidence lowers a verdict's confidence.
PARTIAL = {
    "logs": 0.85,  # some task of the cluster left no log
    "times": 0.85,  # no time stamps: order is file order only
    "identity": 0.9,  # which worker wrote the text is unknown
    "exits": 0.95,  # no exit status for any worker
    "jobs": 0.4,  # the folder holds several jobs, read as one
    "checks": 0.9,  # a healthy verdict with checks that had no data to run on
}

NOISE_ROLE = "after its training finished; it exited 0"
RETRIED_ROLE = "ended an attempt that was run again; the worker then finished"
SURVIVED_ROLE = "the worker trained on after it and finished"
OUTSIDE_ROLE = "printed by a process that is no task of the cluster; every task finished"


@dataclass(frozen=True)
class Verdict:
    status: str  # failure | warning | healthy
    cls: str
    root_workers: list[str]
    confidence: float
    first_failure_ts: dt.datetime | None
    summary: str
    remedy: str
    title: str = ""  # the class in words, as a person reads it at the top of a report
    missing: list[str] = field(
        default_factory=list
    )  # what partial evidence lacked (it lowered the confidence)
    decision: str = ""  # which decision of the table gave it


@dataclass(frozen=True)
class Case:
    """What the policy reads: the ranked findings (root cause first, cascades
    marked), the errors no finding explains (shutdown noise already set
    apart), the job's facts, and each rule's status."""

    findings: list[Finding]
    failing: list[Evidence]
    facts: Facts
    rules: list[RuleStatus]


def _errors(case: Case) -> list[Finding]:
    return [f for f in case.findings if f.severity == "error" and f.cascade_of is None]


def _proven(case: Case) -> bool:
    """Whether the root error finding shows a failure: its own proof (an
    error, a measured stall), or a kill or bad exit anywhere in the job."""
    root = _errors(case)[0]
    return bool(root.proof or case.facts.bad_exits or case.facts.signalled)


def _inconclusive(case: Case) -> Verdict:
    root = _errors(case)[0]
    return Verdict(
        "warning",
        root.cls,
        list(root.root_workers),
        round(min(root.confidence, 0.5), 2),
        None,  # no failure shown, so no time of one
        f"{root.summary} Nothing shows that it failed, though: no error, no kill or bad exit, no stretch "
        "without progress while the logs went on. The job may have been stuck there, or its logs were "
        "taken or cut there.",
        f"Fetch what shows how it ended: {SETTLE.get(root.cls, SETTLE['unknown'])}. {root.remedy}",
    )


def _root_cause(case: Case) -> Verdict:
    errors = _errors(case)
    root = errors[0]
    roots = list(root.root_workers)
    for f in errors[1:]:  # the same failure on several workers at once
        if f.cls == root.cls and f.code == root.code:
            roots += [w for w in f.root_workers if w not in roots]
    return Verdict("failure", root.cls, roots, root.confidence, root.first_ts, root.summary, root.remedy)


def _unknown_failure(case: Case) -> Verdict:
    first = case.failing[0] if case.failing else None
    bad = list(case.facts.bad_exits)
    roots = [first.worker] if first else bad[:1]
    what = (
        f"{first.worker} reported an error that no rule recognises"
        if first
        else f"{', '.join(bad)} exited abnormally with no error in the logs"
    )
    return Verdict(
        "failure",
        "unknown",
        roots,
        0.3,
        first.ts if first else None,
        f"Unknown failure: {what}. Each worker's first error is listed below.",
        "Read each worker's first error below, earliest first; the earliest is most likely the cause.",
    )


def _warnings(case: Case) -> list[Finding]:
    return [f for f in case.findings if f.severity == "warning" and f.cascade_of is None]


def _warning(case: Case) -> Verdict:
    w = _warnings(case)[0]
    return Verdict("warning", w.cls, list(w.root_workers), w.confidence, w.first_ts, w.summary, w.remedy)


def _unrecognised(case: Case) -> Verdict:
    # "Healthy" needs evidence of a job: text with nothing TensorFlow or a
    # training script prints says nothing either way.
    return Verdict(
        "warning",
        "unknown",
        [],
        0.1,
        None,
        "Nothing in this evidence was recognised as the output of a TensorFlow job: no TensorFlow "
        "log line, no error, no training progress. It cannot say whether the job failed.",
        "Pass the workers' own output (each task's stdout and stderr), or paste the error and the "
        "lines before it.",
    )


def _stalled_at_start(case: Case) -> Verdict:
    """A job with no failure whose training started and never made a step:
    not healthy, and not a failure the evidence shows."""
    stalled = case.facts.stalled_at_start
    assert stalled is not None
    line = stalled["text"].split("\n", 1)[0].strip()[:80]
    return Verdict(
        "warning",
        "unknown",
        [],
        0.2,
        None,  # no failure, so no time of one: the epoch line is named in the summary
        f"Training started ({line}, {stalled['source']}:{stalled['line']}) but no step of it follows, and "
        "there is no error: the evidence ends there. Either it was cut there, or the job hung at its "
        "first step.",
        "If the job stopped there, it hung at its first step: in multi-GPU and multi-worker jobs that "
        "is usually a collective that never completes (NCCL peer-to-peer traffic blocked by the "
        "IOMMU or PCI ACS, a worker that cannot reach another's port, workers that disagree on the "
        "model). Get every worker's whole log, rerun with NCCL_DEBUG=INFO on GPUs, and check that each "
        "worker reaches the others' ports. If the job went on, pass the rest of its output.",
    )


def _ended_short(case: Case) -> Verdict:
    """No failure found, but a worker's log ends short of the training its
    own progress states (an epoch begun and not ended, epoch 2 of 3), with no
    exit status: not healthy, and nothing shows a failure either."""
    short = case.facts.ended_short
    rows = case.facts.short_rows()
    where = "; ".join(
        f"{w} at {r['source']}:{r['line']} ({r['text'].split(chr(10), 1)[0].strip()[:60]})"
        for w, r in rows.items()
    )
    done = [w for w in case.facts.named if w in case.facts.finished]
    also = f" {', '.join(done)} completed {'its' if len(done) == 1 else 'their'} training." if done else ""
    return Verdict(
        "warning",
        "unknown",
        list(short) if done else [],
        0.3,
        None,
        f"The log of {', '.join(short)} ends before the training it states was over, with no error, no "
        f"kill and no exit status: {where}.{also} Either the job was still running when the logs were "
        "taken, or it stopped there (stuck, or killed without a record), or the logs were cut.",
        "Fetch how each worker ended: its exit status (the pod's or the scheduler's record, the "
        "runner's log), whether it was still running when the logs were taken, and the rest of its "
        "log. If it was stuck, take its stacks next time (`py-spy dump --pid`).",
    )


def _healthy(case: Case) -> Verdict:
    return Verdict("healthy", "healthy", [], 1.0, None, "No failure found.", "")


@dataclass(frozen=True)
class Decision:
    name: str
    applies: Callable[[Case], bool]
    outcome: Callable[[Case], Verdict]


# The policy, in order: the first decision that applies gives the verdict.
DECISIONS: tuple[Decision, ...] = (
    Decision("root cause", lambda c: bool(_errors(c)) and _proven(c), _root_cause),
    Decision("unknown failure", lambda c: bool(c.failing or c.facts.bad_exits), _unknown_failure),
    Decision("inconclusive", lambda c: bool(_errors(c)), _inconclusive),
    Decision("warning", lambda c: bool(_warnings(c)), _warning),
    Decision("unrecognised", lambda c: not c.facts.recognised, _unrecognised),
    Decision("stalled at start", lambda c: c.facts.stalled_at_start is not None, _stalled_at_start),
    Decision("ended short", lambda c: bool(c.facts.ended_short), _ended_short),
    Decision("healthy", lambda c: True, _healthy),
)


def split_noise(unexplained: list[Evidence], facts: Facts) -> tuple[list[Evidence], list[Evidence]]:
    """(the errors that count against the job, every unexplained error with
    those a worker printed after it finished its training marked as such)."""
    noise = [ev for ev in unexplained if facts.finished_by(ev.worker, ev.ts)]
    # An error that ended an attempt the worker's wrapper then ran again, when
    # the worker in the end exited 0 or finished its training: the job survived it.
    retried = [
        ev
        for ev in unexplained
        if ev not in noise
        and (facts.workers.get(ev.worker, {}).get("exit_code") == 0 or ev.worker in facts.finished)
        and facts.started_again_after(
            {"worker": ev.worker, "source": ev.source, "end_line": ev.end_line, "ts": ev.ts}
        )
    ]
    # An error its worker trained on after (a later step, in the same file or
    # later by its clock), when that worker then completed its training: the
    # job survived it (a metrics push refused and retried, a skipped record).
    survived = [
        ev
        for ev in unexplained
        if ev not in noise
        and ev not in retried
        and ev.worker in facts.finished
        and facts.progressed_after(
            {"worker": ev.worker, "source": ev.source, "end_line": ev.end_line, "ts": ev.ts, "ts_kind": None}
        )
    ]
    retried += survived
    # A process no task of the cluster is (an unnamed part: a failed first
    # attempt a runner ran again under another name) cannot have failed a
    # job whose every task finished its training.
    outside = [
        ev
        for ev in unexplained
        if ev not in noise and ev not in retried and facts.all_finished and ev.worker.startswith("?")
    ]
    failing = [ev for ev in unexplained if ev not in noise and ev not in retried and ev not in outside]
    marked = [
        replace(ev, role=NOISE_ROLE)
        if ev in noise
        else replace(ev, role=SURVIVED_ROLE)
        if ev in survived
        else replace(ev, role=RETRIED_ROLE)
        if ev in retried
        else replace(ev, role=OUTSIDE_ROLE)
        if ev in outside
        else ev
        for ev in unexplained
    ]
    return failing, marked


def decide(case: Case) -> Verdict:
    """The verdict: the first decision that applies, with what could not be
    checked said and the confidence lowered for what the evidence lacked."""
    decision = next(d for d in DECISIONS if d.applies(case))
    v = replace(decision.outcome(case), decision=decision.name)
    inconclusive = v.status != "failure" and (v.cls == "unknown" or decision.name == "inconclusive")
    v = replace(v, title=INCONCLUSIVE if inconclusive else CLASSES[v.cls])
    skipped = [s for s in case.rules if s.status == "not evaluated"]
    if v.status != "failure" and skipped:
        # "No problem" is not "no data": say what could not be checked.
        checks = "; ".join(f"{s.code} {s.name} ({s.reason})" for s in skipped)
        v = replace(v, summary=f"{v.summary} Not checked, for lack of data: {checks}.")
    missing, factor = partial_evidence(case.facts, v)
    if v.status == "healthy" and skipped:
        # "Healthy" where some checks had no data to run on is less sure than where all ran.
        missing.append(f"not checked, for lack of data: {', '.join(s.code for s in skipped)}")
        factor *= PARTIAL["checks"]
    return replace(v, missing=missing, confidence=round(v.confidence * factor, 2))


def partial_evidence(facts: Facts, verdict: Verdict) -> tuple[list[str], float]:
    """What this evidence lacks that a whole job's would have, and the factor
    it takes off the verdict's confidence."""
    rows = list(facts.workers.values())
    missing: list[str] = []
    factor = 1.0
    without = [r["worker"] for r in rows if not r["has_log"] and r["worker"] not in verdict.root_workers]
    if without:
        missing.append(f"no log from {', '.join(without)}")
        factor *= PARTIAL["logs"]
    if facts.untimed:
        missing.append("no time stamps (order is taken from the file)")
        factor *= PARTIAL["times"]
    named = [r for r in rows if r["has_log"] and not r["worker"].startswith("?")]
    if rows and not named:
        missing.append("no worker identity (no task name, TF_CONFIG or file name says who wrote the text)")
        factor *= PARTIAL["identity"]
    if facts.several_jobs:
        shown = ", ".join(facts.several_jobs[:4]) + (", ..." if len(facts.several_jobs) > 4 else "")
        missing.append(
            f"the folder holds {len(facts.several_jobs)} jobs ({shown}), each with its own workers, "
            "read here as one: run `mwms-doctor triage` on it to analyse each job"
        )
        factor *= PARTIAL["jobs"]
    if verdict.status == "failure" and all(r["exit_code"] is None for r in rows):
        missing.append("no exit codes")
        factor *= PARTIAL["exits"]
    return missing, factor

"""PD001 peer-died: a worker vanished mid-job and the others lost it.

## What it means
The surviving workers report that one peer stopped answering: their
collective all-reduce was aborted because that peer's connection was reset or
closed (`Collective ops is aborted by: Socket closed` /
`Connection reset by peer` with `remote target /job:worker/.../task:N`),
or the coordination service noticed it stopped sending heartbeats
(`The following tasks are unhealthy`). The peer they name is where the
failure started; the survivors' errors are echoes. The dead worker itself
often logs nothing: its log simply stops.

## Why it happens
The process was killed from outside: the kernel's OOM killer (host memory),
the scheduler (preemption, eviction, a failed node, a time limit) or a
`kill -9`. A segfault in native code ends a process just as silently. When
the dead worker did log an error of its own, another finding names it and
this one is its consequence.

## What to do
Look at the dead worker's last words and exit status below. Exit 137 /
SIGKILL with no error usually means the OOM killer or the scheduler: check
`dmesg` / the node's kernel log for `Out of memory: Killed process`, the
pod's `OOMKilled` reason or the scheduler's events. A segfault (exit 139)
wants a core dump. MWMS cannot continue without the worker: restart the job
from its last checkpoint (`BackupAndRestore`) and fix the cause so it does
not recur.
"""

from __future__ import annotations

import datetime as dt
import re
from collections import Counter
from collections.abc import Iterator

from mwms_doctor.facts import Job, stop_times
from mwms_doctor.findings import Evidence, Hit
from mwms_doctor.ingest.messages import says
from mwms_doctor.ingest.templates import PROGRESS_KINDS
from mwms_doctor.rows import Row, evidence, time_key
from mwms_doctor.tasks import listed

CODE = "PD001"
NAME = "peer-died"
CLASS = "peer_died"
SEVERITY = "error"
REQUIRES = ("events", "workers")
PRECEDENCE = "specific"
# A worker that ran out of data and left is no dead peer, though the others lose it alike.
DEFERS_TO: tuple[str, ...] = ("DA002", "FW001")

LAST_WORDS = 1  # the dead worker's last record; the report shows the ones before it as context


def _accusations(job: Job) -> list[tuple[str, Row]]:
    """(accused task, report) for every survivor's report naming a peer."""
    out: list[tuple[str, Row]] = []
    reports = job.rows.of(["collective.aborted", "coord.unhealthy_tasks", "mwms.peer_down"])
    reports += job.rows.tracebacks_with(["collective.aborted"])
    for row in reports:
        f = row["fields"]
        accused = (
            [f["peer"]]
            if f.get("peer")
            else [t for t in (f.get("tasks") or f.get("task", "")).split(",") if t]
        )
        out += [(task, row) for task in accused if task and task != row["worker"]]
    # A report made after its writer, or the peer it names, finished training
    # is shutdown noise: workers end one after another.
    return [(task, row) for task, row in out if not job.facts.shutdown_noise(row["ts"], row["worker"], task)]


def _start_of_chain(subject: str, order: list[tuple[str, Row]]) -> str:
    """The peer a chain of losses started from: the accused that had itself
    reported losing another peer before anyone reported losing it went down
    with that peer (worker:2 killed; worker:0 loses it and exits; worker:1
    then loses worker:0)."""
    seen = {subject}
    while True:
        about = [row for task, row in order if task == subject]
        first_about = about[0]["ts"] if about else None
        earlier = [
            task
            for task, row in order
            if row["worker"] == subject
            and task not in seen
            and row["ts"] is not None
            and first_about is not None
            and row["ts"] < first_about
        ]
        if not earlier:
            return subject
        subject = earlier[0]
        seen.add(subject)


def _kept_logging(job: Job, accusations: list[tuple[str, Row]]) -> set[str]:
    """Accused tasks that were alive after the first report about them: the
    others could not reach them (FW001, TC002), or they failed on their own later."""
    first: dict[str, Row] = {}
    for task, row in sorted(accusations, key=lambda a: time_key(a[1])):
        if row["ts"] is not None:
            first.setdefault(task, row)
    return {task for task, row in first.items() if job.facts.alive_after(task, row["ts"], row["ts_kind"])}


# A signal sent to stop a process, by name or number (SIGKILL 9, SIGTERM 15).
_KILL = re.compile(r"(?i)kill|term|\bsignal (?:9|15)\b")

# gRPC reasons that mean the connection to a running peer went away.
_LOST = ("socket_closed", "connection_reset", "broken_pipe", "unhealthy_heartbeat")


def _crashes(job: Job) -> Iterator[Hit]:
    """A worker whose own log shows it crashed in native code (a segfault, an
    abort, a fatal Python error): it died, whatever the others then say."""
    seen: set[str] = set()
    for row in job.rows.of(["proc.crashed"]):
        crash = row["fields"].get("crash", "")
        if row["worker"] in seen or row["worker"] not in job.facts.workers:
            continue  # a launcher's line about a worker: read as that worker's exit record
        if _KILL.search(crash):
            continue  # a kill is the platform's doing: OM002 and PR001 read those
        if _errors_before(job, row):
            continue  # the crash is how an earlier error ended the process, not the cause
        seen.add(row["worker"])
        yield Hit(
            subject=row["worker"],
            summary=f"{row['worker']} crashed in native code ({crash}); the other workers then lose it.",
            evidence=[evidence(row, "crash")],
            confidence=0.85,
            ts=row["ts"],
            facts={"crash": crash},
        )


def _errors_before(job: Job, row: Row) -> bool:
    """The worker logged an error of its own before this record (same file)."""
    return any(
        r["source"] == row["source"] and r["line"] < row["line"] and r["kind"] != "proc.crashed"
        for r in job.rows.errors(row["worker"])
    )


def _lost_without_name(job: Job) -> Iterator[Hit]:
    """Survivors' words for a lost peer when no report names it (older TF,
    Horovod/MPI, one worker's excerpt): a peer died, which one the evidence
    here cannot say unless an address or a task is printed."""
    noise = job.facts.shutdown_noise
    rows = job.rows.of(["peer.lost"]) + [
        r for r in job.rows.errors() if r["kind"] == "py.traceback" and _says_lost(r)
    ]
    # A worker that trained on after it lost a connection had lost no training
    # peer: under MultiWorkerMirroredStrategy no step completes without every
    # worker (a data source reset, retried, is no peer).
    rows = [
        r
        for r in rows
        if not noise(r["ts"], r["worker"], r["fields"].get("task")) and not _trained_on_after(job, r)
    ]
    rpc = [
        r for r in job.rows.rpc() if r["reason"] in _LOST and not noise(r["ts"], r["worker"], r["peer_task"])
    ]
    if not rows and not rpc:
        return
    named = Counter(r["peer_task"] for r in rpc if r["peer_task"])
    named.update(t for r in rows if (t := r["fields"].get("task")) and t != r["worker"])
    subject = named.most_common(1)[0][0] if named else "?"
    first = sorted(rows, key=time_key)[:1] or [
        next(e for e in job.rows.errors() if (e["source"], e["line"]) == (rpc[0]["source"], rpc[0]["line"]))
    ]
    who = subject if subject != "?" else "A peer (the evidence here does not say which)"
    said = first[0]["text"].strip().splitlines()[0][:160]
    # An MPI launcher reports the rank's exit itself; a worker reports a lost connection.
    how = (
        f"the launcher reported it ({said})"
        if re.search(r"\bmpirun\b|Primary job +terminated", said)
        else f"{first[0]['worker']} lost its connection to it ({said})"
    )
    yield Hit(
        subject=subject,
        summary=f"{who} went away: {how}.",
        evidence=[evidence(r, "peer report") for r in first],
        confidence=0.6 if subject != "?" else 0.5,
        ts=first[0]["ts"],
        local=False,
        facts={"dead_peer_named": subject != "?"},
    )


def _trained_on_after(job: Job, row: Row) -> bool:
    """Whether the worker that reported a lost connection made training
    progress after it: by its own clock where both lines have one (an export
    may list its lines newest first), else later in the same file."""
    if row["ts"] is not None and row["ts_kind"] not in _UNTIMED:
        last = _last_timed_progress(job).get(row["worker"])
        return last is not None and last > row["ts"]
    return job.facts.progressed_after(row)


_UNTIMED = ("inferred", "inferred_before", "none")


def _last_timed_progress(job: Job) -> dict[str, dt.datetime]:
    """Each worker's last progress by its own clock (a time of its own, not
    one inferred from a neighbouring line), read once for the job."""

    def make() -> dict[str, dt.datetime]:
        out: dict[str, dt.datetime] = {}
        for p in job.rows.shared(PROGRESS_KINDS):
            if p["ts"] is not None and p["ts_kind"] not in _UNTIMED:
                w = p["worker"]
                out[w] = max(out[w], p["ts"]) if w in out else p["ts"]
        return out

    return job.rows.once("pd001.last_timed_progress", make)


def _says_lost(row: Row) -> bool:
    f = row["fields"]
    return f.get("exc_type", "").endswith(("UnavailableError", "AbortedError")) and says(
        f.get("exc_message", "") + row["text"][-2000:], "peer_lost"
    )


def check(job: Job) -> Iterator[Hit]:
    crashed = list(_crashes(job))
    yield from crashed
    accusations = _accusations(job)
    if not accusations and not crashed:
        yield from _lost_without_name(job)
        return
    # Heartbeat reports mean the peer stopped; connection failures to a peer
    # that kept logging mean it was never reached, not that it died.
    alive = _kept_logging(job, accusations)
    accusations = [
        (task, row)
        for task, row in accusations
        if (row["kind"] in ("coord.unhealthy_tasks", "mwms.peer_down") or task not in alive)
        and not _trained_on_after(job, row)
    ]
    if not accusations:
        return
    # Each survivor's word counts once, however many lines it printed.
    votes = Counter(task for task, _ in {(task, row["worker"]) for task, row in accusations})
    # The most-named peer; among equals, one a signal ended (a launcher's
    # "task 1: Segmentation fault": "The following tasks are unhealthy" lists
    # every task it stopped hearing, the dead and the ones that left after
    # it), then the one named first.
    order = sorted(accusations, key=lambda a: time_key(a[1]))
    wk_all = job.facts.workers
    subject = max(
        votes,
        key=lambda t: (
            votes[t],
            bool(wk_all.get(t, {}).get("exit_signal")),
            -[a[0] for a in order].index(t),
        ),
    )
    subject = _start_of_chain(subject, order)
    reports = [row for task, row in order if task == subject]
    observers = list(dict.fromkeys(r["worker"] for r in reports))
    first_report = reports[0]
    if subject in job.facts.stopped_together:
        # The peer was told to stop with the rest of the job (a runner's
        # deadline): the others losing it then is the stop, not a death.
        # (A report whose time is only a neighbour's cannot show it came first.)
        told = stop_times(job.rows).get(subject)
        loose = first_report["ts"] is None or first_report["ts_kind"] in ("inferred", "inferred_before")
        if told is None or loose or first_report["ts"] >= told:
            return

    wk = job.facts.workers.get(subject, {})
    ev: list[Evidence] = []
    seen_obs: set[str] = set()
    for r in reports:  # one report per survivor
        if r["worker"] not in seen_obs:
            seen_obs.add(r["worker"])
            ev.append(evidence(r, "peer report"))
    last_words: list[Row] = job.rows.last(subject, LAST_WORDS) if wk.get("has_log") else []
    ev += [evidence(r, "last words") for r in last_words]
    own_errors = job.rows.errors(subject)

    died_at = wk.get("last_ts")
    ts = (
        died_at
        if died_at is not None and (first_report["ts"] is None or died_at <= first_report["ts"])
        else None
    )
    ts = ts or first_report["ts"]

    exit_bits = []
    if wk.get("exit_code") is not None:
        exit_bits.append(f"exit {wk['exit_code']}")
    if wk.get("exit_signal"):
        exit_bits.append(str(wk["exit_signal"]))
    exit_txt = f" ({', '.join(exit_bits)})" if exit_bits else ""
    reason = first_report["fields"].get("peer_message") or first_report["fields"].get("reason") or ""
    said = f' ("{reason}")' if reason else ""
    obs = listed(observers)
    if not wk.get("has_log"):
        how = "there is no log from it"
        confidence = 0.8
    elif own_errors:
        how = "its own log shows an error first"
        confidence = 0.6
    else:
        how = "its log stops without an error"
        confidence = 0.9 if exit_bits else 0.85
    epoch = f" during epoch {wk['last_epoch']}" if wk.get("last_epoch") else ""
    summary = f"{subject} died{epoch}: {how}{exit_txt}; {obs} lost their connection to it{said}."
    yield Hit(
        subject=subject,
        summary=summary,
        evidence=ev,
        confidence=confidence,
        ts=ts,
        local=False,
        facts={
            "observers": observers,
            "reports": len(reports),
            "exit_code": wk.get("exit_code"),
            "exit_signal": wk.get("exit_signal"),
            "exit_note": wk.get("exit_note"),
            "last_seen": last.isoformat() if (last := wk.get("last_ts")) else None,
            "silent": bool(wk.get("has_log")) and not own_errors,
        },
    )

"""UE001 uncaught-exception: the training script raised an exception it did not catch, and the worker stopped.

## What it means
This worker's own Python code raised an exception (a `ValueError`, a
`TypeError`, an `AssertionError`, an `ImportError` of one of its modules, a
shape error in its model code) and nothing caught it: the worker printed the
traceback and made no further progress. Under MultiWorkerMirroredStrategy
every other worker then waits for it in the next collective, or loses it and
reports it gone: their errors (`UNAVAILABLE`, `Collective ops is aborted`,
`tasks are unhealthy`) are echoes of this one. When the exception means a
known failure (memory, NaN, TF_CONFIG, a version mismatch), that finding is
reported instead; this one is for the script's own errors.

## Why it happens
A bug or a bad assumption in the script that shows on one worker only: code
that branches on the task index (`if task_id == ...`), data that differs per
worker (a shard with an unexpected record), a file or module missing on one
node, a config value read per worker.

## What to do
Read the exception and the innermost frame of the script's own code named
below, and fix it there; reproduce with the same task index and data shard.
Restart the whole job afterwards: MWMS cannot continue without the worker.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from mwms_doctor.classes import CLASSES
from mwms_doctor.facts import Job
from mwms_doctor.findings import Hit
from mwms_doctor.ingest.messages import says
from mwms_doctor.rows import Row, evidence
from mwms_doctor.tables import LAUNCHER
from mwms_doctor.text import user_frame

CODE = "UE001"
NAME = "uncaught-exception"
CLASS = "worker_exception"
SEVERITY = "error"
REQUIRES = ("events",)
# A more specific finding on the same record (OOM, NaN, TF_CONFIG, versions)
# wins over this one: the engine drops a generic finding whose evidence
# another finding already explains.
PRECEDENCE = "generic"
DEFERS_TO: tuple[str, ...] = ()

# Exceptions that report someone else's failure, or a stop from outside: the
# echoes, not the cause (TF's errors for lost peers and aborted collectives).
_ECHO_TYPES = re.compile(
    r"(?:Unavailable|Aborted|Cancelled|DeadlineExceeded)Error$|^(?:KeyboardInterrupt|SystemExit|GeneratorExit)$"
)


def _is_echo(row: Row) -> bool:
    f = row["fields"]
    exc = f.get("exc_type", "").rsplit(".", 1)[-1]
    return bool(
        _ECHO_TYPES.search(exc)
        # A stop from outside surfacing as another exception (pybind11: "ORIGINAL
        # UnavailableError REPLACED BY KeyboardInterrupt": Ctrl-C in a collective).
        or re.search(r"\bKeyboardInterrupt\b", f.get("exc_message", ""))
        or says(f.get("exc_message", ""), "echo")
        or f.get("tf_kind")
        # TF's own source says the message reports an earlier error, or
        # shutdown, or names a class of its own (a TF_CONFIG error, an OOM).
        or f.get("meaning") in ("echo", "shutdown")
        or f.get("meaning") in CLASSES
    )


def _merged_owner(job: Job, row: Row) -> str | None:
    """Whose traceback it is, in one stream of several workers' output merged
    without tags (a terminal capture, a launcher's console): two or more TF
    servers started in it, and the errors in it right after the traceback
    report one task lost. The worker that raised is the one its peers lost
    (a launcher's own exception about its workers comes after their errors)."""
    started = [r for r in job.rows.of(["tf.server_started"], LAUNCHER) if r["source"] == row["source"]]
    if len({(r["fields"].get("host"), r["fields"].get("port")) for r in started}) < 2:
        return None
    lost = {
        r["peer_task"]
        for r in job.rows.rpc()
        if r["source"] == row["source"] and r["line"] > row["line"] and r["peer_task"]
    }
    if len(lost) != 1:
        return None
    (task,) = lost
    return task if task in job.facts.workers else None


def check(job: Job) -> Iterator[Hit]:
    seen: set[str] = set()
    for row in job.rows.of(["proc.script_missing"]):
        # The script itself is missing from the worker's image: it never ran.
        if row["worker"] not in seen:
            seen.add(row["worker"])
            script = row["fields"].get("script", "its script")
            yield Hit(
                subject=row["worker"],
                summary=f"{row['worker']} could not start: {script} does not exist in its container or host.",
                evidence=[evidence(row, "could not start")],
                confidence=0.85,
                ts=row["ts"],
                facts={"script": script},
            )
    for row in job.rows.of(["py.traceback"]):
        worker = row["worker"]
        f = row["fields"]
        if not f.get("exc_type") or _is_echo(row):
            continue
        merged = worker == LAUNCHER and _merged_owner(job, row)
        if worker == LAUNCHER and not merged:
            continue  # a launcher's exception reports its workers' ends: theirs are the causes
        if merged:
            worker = merged
        if worker in seen:
            continue
        if job.facts.progressed_after(row) or job.facts.started_again_after(row):
            continue  # caught and logged, or survived, or retried: the worker went on
        if _retried(job, worker, row):
            continue  # its own words retry after this very error, and it trained on
        if worker.startswith("?") and job.facts.all_finished:
            continue  # a process no task is (a failed first attempt run again under another name): the job finished
        seen.add(worker)
        exc = f["exc_type"].rsplit(".", 1)[-1]
        where = user_frame(row["text"])
        at = f" in {where}" if where else ""
        message = f.get("exc_message", "")
        whose = (
            f" (in the merged output of several workers: {worker} is the one its peers lost right after)"
            if merged
            else ""
        )
        yield Hit(
            subject=worker,
            summary=f"{worker} stopped on an uncaught {exc}{at}: {message[:240]}{whose}",
            evidence=[evidence(row, "uncaught exception")],
            confidence=(0.85 if where else 0.7) - (0.15 if merged else 0.0),
            local=not merged,
            ts=row["ts"],
            facts={"exception": exc, "message": message, "user_frame": where},
        )


# A script's word that it tries again ("retrying (1/3)", "will retry", "attempt 2/5").
_RETRY = re.compile(r"(?i)\bretr(?:y|ying|ied)\b|\battempt \d+ ?(?:/|of) ?\d+")
# What names the object an error was about: a file's name, a path's last part.
_NAMED = re.compile(r"[\w.-]+\.[A-Za-z][\w]{0,5}\b|/[\w./-]+")


def _retried(job: Job, worker: str, row: Row) -> bool:
    """The worker's own line says it retried after the error this traceback
    is of (both name the same file or object: "transient read error on
    part-00003.npz, retrying (1/3)" beside an OSError about
    '/data/shards/part-00003.npz'), and it trained on after that line. Its
    traceback was printed by the handler that retried, in the other stream
    of the same process, whose lines carry no time to order them by."""
    message = str(row["fields"].get("exc_message") or "")
    names = {n.rsplit("/", 1)[-1] for n in _NAMED.findall(message)} - {""}
    if not names:
        return False
    for r in job.rows.matching(None, _RETRY.pattern):
        if r["worker"] != worker or (r["source"], r["line"]) == (row["source"], row["line"]):
            continue
        if any(n in r["text"] for n in names) and job.facts.progressed_after(r):
            return True
    return False

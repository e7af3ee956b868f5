"""The facts stage: what every rule and the verdict read about a job, computed
once, after the clocks are aligned, each with one definition.

* **finished**: which workers completed their training, and when;
* **last progress**: each worker's last step, loss or epoch line;
* **stopped together**: workers told to stop (SIGTERM) at one moment;
* **liveness**: whether a worker still logged well after a moment
  (``alive_after``, one threshold for every rule);
* **shutdown noise**: what a worker, or a peer it names, said after it finished;
* **errors**, **bad exits**, and whether anything in the evidence is
  **recognised** at all.

``establish`` turns aligned tables into a ``Job``: the tables, their rows
(``rows.Rows``) and these facts, all frozen. Rules read a ``Job``.
"""

from __future__ import annotations

import ast
import datetime as dt
import json
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from .findings import Evidence, ts_key
from .ingest.job import attempt_of
from .ingest.templates import PROGRESS_KINDS
from .rows import Row, Rows, env_evidence, evidence, time_key, to_rows
from .tables import LAUNCHER, JobTables, datetimes
from .text import mask_message

# Records a worker's process prints as it comes up (each attempt once).
RESTART_KINDS = ("tf.server_started", "coord.agent_connected")
# Workers whose last progress came within this of each other ended together.
ENDED_TOGETHER = dt.timedelta(seconds=3)

# A worker that still logs this long after a moment was alive then: a dying
# process's last lines come within a second of its end (and log lines are
# flushed a little late), so a peer reported gone, or unreachable, that goes
# on logging past this was neither dead nor stopped.
ALIVE_AFTER = dt.timedelta(seconds=2)

# SIGTERMs this close together on several workers came from one hand: a job
# runner's timeout, a person cancelling the job, a whole-job eviction.
TOGETHER = dt.timedelta(seconds=15)

# What a worker says about a peer, not about itself.
PEER_REPORTS = ("coord.unhealthy_tasks", "collective.aborted", "peer.lost", "mwms.peer_down")

# A Keras progress bar inside an epoch ("  10/150 [=>....] - ETA: ..." or
# "937/Unknown - 3s ..."): steps being done, though no template names it.
_IN_EPOCH_BAR = r"(?m)^\s*\d+/(?:\d+|Unknown)\s"

ClusterView = tuple[dict[str, list[str]], Evidence]


@dataclass(frozen=True)
class _Progress:
    """Every progress record of the job as plain columns (events-table order):
    what ``finished`` and ``last progress`` read, without turning tens of
    thousands of kept progress records into row dicts."""

    idx: list[int]
    worker: list[str]
    source: list[str]
    line: list[int]
    kind: list[str]
    ts: list[dt.datetime | None]
    epoch: list[str | None]
    epochs: list[str | None]
    step: list[str | None]
    steps: list[str | None]
    of_worker: dict[str, list[int]]  # worker -> its records' positions here, in events-table order


@dataclass(frozen=True)
class Facts:
    workers: Mapping[str, Mapping[str, Any]]  # the workers table's rows, by worker
    live: tuple[str, ...]  # workers with a log
    finished: Mapping[str, dt.datetime | None]  # worker -> when it completed its training
    last_progress: Mapping[str, Row]  # worker -> its last step, loss or epoch record
    stopped_together: frozenset[str]  # workers stopped (SIGTERM) at one moment with most others
    stalled_at_start: Row | None  # an epoch start, the last sign of training, with no step after it
    # worker -> its last progress (an index of events), short of the total it states
    ended_short: Mapping[str, int]
    errors: tuple[Row, ...]  # error records, not known harmless, in time order
    bad_exits: tuple[str, ...]  # workers that exited non-zero or by a signal
    signalled: tuple[str, ...]  # workers that logged a SIGTERM (told to stop), exit records or not
    recognised: bool  # anything a TF job or a training script prints
    untimed: bool  # records, and not one of them with a time
    cluster_views: Mapping[str, ClusterView]  # each worker's own view of the cluster
    # the same, with each worker's own entry as its peers list it (where they agree)
    dialed_views: Mapping[str, ClusterView]
    several_jobs: tuple[str, ...]  # subfolders that each hold a whole job's workers (a folder of jobs)
    _progress: _Progress
    _rows: Rows

    @property
    def named(self) -> list[str]:
        """Workers with a log and a name (not an unresolved ``?file``)."""
        return [w for w in self.live if not w.startswith("?")]

    def short_rows(self) -> dict[str, Row]:
        """``ended_short``'s records as rows, by worker."""
        ev = self._rows.tables.events
        return {w: to_rows(ev.slice(i, 1))[0] for w, i in self.ended_short.items()}

    @property
    def all_finished(self) -> bool:
        """Every named worker with a log finished its training."""
        return bool(self.named) and all(w in self.finished for w in self.named)

    @property
    def leader(self) -> str | None:
        """The task that ran the coordination service: the one the logs say,
        else the first task (the chief, else worker:0)."""
        said = [w for w, r in self.workers.items() if r.get("is_leader")]
        if said:
            return said[0]
        return next((w for w in ("chief:0", "master:0", "worker:0") if w in self.workers), None)

    def progressed(self) -> bool:
        """Whether any worker made training progress."""
        return bool(self._progress.idx)

    def finished_by(self, worker: str | None, ts: dt.datetime | None) -> bool:
        """Whether ``worker`` had completed its training at ``ts``."""
        done = self.finished.get(worker) if worker else None
        return ts is not None and done is not None and ts >= done

    def shutdown_noise(self, ts: dt.datetime | None, *workers: str | None) -> bool:
        """Whether something said at ``ts`` by or about these workers came after
        one of them finished: workers end one after another, and what they then
        say of each other (a leader gone, connections refused) is no failure."""
        return any(self.finished_by(w, ts) for w in workers if w)

    def alive_after(self, worker: str, ts: dt.datetime | None, ts_kind: str | None) -> bool:
        """Whether ``worker`` still logged ALIVE_AFTER past ``ts`` (its times
        read the same way as ``ts_kind``, so like is compared with like)."""
        if ts is None or ts_kind is None:
            return False
        last = self._rows.last_seen(worker, ts_kind)
        return last is not None and last >= ts + ALIVE_AFTER

    def started_again_after(self, row: Row) -> bool:
        """Whether the worker of ``row`` started again after it: its process
        came up anew (a gRPC server started, it joined the coordination
        service) on a later line of the same file, or later in time in
        another of its files (a process manager's <app>-error.log beside its
        -out.log), as a wrapper's retry does. What ended an earlier attempt
        did not end the job."""
        ended: dt.datetime | None = None
        attempt = attempt_of(row["source"])
        for r in self._rows.of(list(RESTART_KINDS), row["worker"]):
            if r["source"] == row["source"]:
                if r["line"] > row["end_line"]:
                    return True
                continue
            if attempt_of(r["source"]) > attempt:
                return True  # a file its name or folder says is a later attempt's (kubectl logs --previous beside the current)
            if r["ts"] is None or row.get("ts") is None or r["ts"] <= row["ts"]:
                continue
            # Another file's start is a new attempt when that file began after
            # the error's file had ended (a framework's retry in a new run
            # folder, a process manager's next run), not one beside it.
            ended = ended or self._last_time_of(row["source"])
            if ended is not None and r["ts"] > ended:
                return True
        return False

    def _last_time_of(self, source: str) -> dt.datetime | None:
        ev = self._rows.tables.events
        mine = ev.filter(pc.equal(pc.cast(ev["source"], pa.string()), source)).column("ts")
        last: dt.datetime | None = pc.max(mine).as_py()
        return last

    def progressed_after(self, row: Row) -> bool:
        """Whether the worker of ``row`` made training progress after it (a
        later step, loss or epoch line in the same file, or later in time).
        A row without a time of its own was printed at some moment after the
        timed line before it (within ``ts_bound_s`` when a timed line follows,
        at any time later when none does): progress in another file is after
        it only when it is later than that."""
        p = self._progress
        latest = _latest(row)
        for j in p.of_worker.get(row["worker"], ()):
            if p.source[j] == row["source"]:
                if p.line[j] > row["end_line"]:
                    return True
            elif (ts := p.ts[j]) is not None and latest is not None and ts > latest:
                return True
        return False


def _latest(row: Row) -> dt.datetime | None:
    """The latest a row can have been printed: its time, or for a row without
    a time of its own, its timed neighbour's plus the gap to the next timed
    line (None when no timed line follows: any time later)."""
    latest: dt.datetime | None = row.get("ts")
    if row.get("ts_kind") == "inferred" and latest is not None:
        bound = row.get("ts_bound_s")
        latest = None if bound is None else latest + dt.timedelta(seconds=bound)
    return latest


@dataclass(frozen=True)
class Job:
    """One job as the rules read it: its aligned tables, their rows, its facts."""

    tables: JobTables
    rows: Rows
    facts: Facts


def establish(tables: JobTables) -> Job:
    """The facts stage: every fact of a job, computed once from its aligned tables."""
    rows = Rows(tables)
    workers = {r["worker"]: MappingProxyType(r) for r in tables.workers.to_pylist()}
    progress = _progress_columns(tables)
    finished = _finished(rows, workers, progress)
    views = _cluster_views(rows)
    facts = Facts(
        workers=MappingProxyType(workers),
        live=tuple(w for w, r in workers.items() if r["has_log"]),
        finished=MappingProxyType(finished),
        last_progress=MappingProxyType(_last_progress(rows, progress)),
        stopped_together=frozenset(_stopped_together(rows, workers)),
        stalled_at_start=_stalled_at_start(tables, rows, finished),
        ended_short=MappingProxyType(_ended_short(progress, workers, finished)),
        errors=tuple(rows.errors()),
        bad_exits=tuple(w for w, r in workers.items() if r["exit_code"] not in (None, 0) or r["exit_signal"]),
        signalled=tuple(dict.fromkeys(r["worker"] for r in rows.of(["tf.sigterm_caught"]))),
        recognised=_recognised(tables),
        untimed=tables.events.num_rows > 0 and bool(pc.all(pc.is_null(tables.events["ts"])).as_py()),
        cluster_views=MappingProxyType(views),
        dialed_views=MappingProxyType(_as_dialed(views)),
        several_jobs=several_jobs(workers),
        _progress=progress,
        _rows=rows,
    )
    return Job(tables, rows, facts)


# Subfolders that are one job's parts, not jobs: its attempts, its streams.
_PARTS = re.compile(
    r"(?i)(?:attempt|retry|restart|rerun|previous|prev|current|incarnation|try|round|epoch|stdout|stderr|std|out|err"
    r"|logs?|outputs?|stdio|console|container|rank|node|host|pod|worker|chief|ps|evaluator)?[-_. ]?\d*"
)


def several_jobs(workers: Mapping[str, Mapping[str, Any]]) -> tuple[str, ...]:
    """The subfolders of the evidence that each hold the logs of two or more
    of the same workers, when there are two or more: a folder of several jobs
    (``nightly/job-17/worker-0.log``, ``nightly/job-18/worker-0.log``), read as
    one they would blend. Folders named as a job's own parts (``attempt-2``,
    ``previous``, ``stderr``, ``0``) are one job's, and not counted."""
    paths = [
        (w, re.split(r"[/:]", str(src)))
        for w, r in workers.items()
        if r["has_log"]
        for src in r["sources"] or ()
    ]
    # The jobs may sit one or two folders down (an archive of nightly/<job>/...).
    for depth in range(3):
        by_folder: dict[str, set[str]] = {}
        for w, parts in paths:
            if len(parts) > depth + 1 and not _PARTS.fullmatch(parts[depth]):
                by_folder.setdefault("/".join(parts[: depth + 1]), set()).add(w)
        whole = {f: ws for f, ws in by_folder.items() if len(ws) >= 2}
        if len(whole) < 2:
            continue
        counts: dict[str, int] = {}
        for ws in whole.values():
            for w in ws:
                counts[w] = counts.get(w, 0) + 1
        if sum(n >= 2 for n in counts.values()) >= 2:
            return tuple(sorted(f.rsplit("/", 1)[-1] for f in whole))
    return ()


def _progress_columns(tables: JobTables) -> _Progress:
    ev = tables.events
    mask = pc.fill_null(pc.is_in(pc.cast(ev["kind"], pa.string()), pa.array(list(PROGRESS_KINDS))), False)
    # An epoch line that says its epoch ran no step ("epoch end epoch=4 steps=0",
    # a worker whose input had run out going through its remaining epochs) trained nothing.
    empty = pc.fill_null(pc.equal(pc.map_lookup(ev["fields"], "epoch_steps", "first"), "0"), False)
    mask = pc.and_(mask, pc.invert(empty))
    idx = pc.indices_nonzero(mask)
    prog = ev.take(idx)

    def field(key: str) -> list[str | None]:
        if prog.num_rows == 0:
            return []
        return pc.map_lookup(prog["fields"], key, "first").to_pylist()  # type: ignore[no-any-return]

    workers = pc.cast(prog["worker"], pa.string()).to_pylist()
    of_worker: dict[str, list[int]] = {}
    for j, w in enumerate(workers):
        of_worker.setdefault(w, []).append(j)
    return _Progress(
        idx=idx.to_pylist(),
        worker=workers,
        source=pc.cast(prog["source"], pa.string()).to_pylist(),
        line=prog["line"].to_pylist(),
        kind=pc.cast(prog["kind"], pa.string()).to_pylist(),
        ts=datetimes(prog["ts"]),
        epoch=field("epoch"),
        epochs=field("epochs"),
        step=field("step"),
        steps=field("steps"),
        of_worker=of_worker,
    )


def _finished(
    rows: Rows, workers: Mapping[str, Mapping[str, Any]], p: _Progress
) -> dict[str, dt.datetime | None]:
    """Workers that completed their training -> when (their last timed
    progress; None when their progress lines carry no time).

    Completed: the worker's *last* progress says so (training that starts
    again after a completion did not complete): the end line of its last Keras
    epoch (``Epoch N/N``), a script's line that reaches its stated total
    (``epoch 10/10``; ``step 500/500`` with no epoch or in the last epoch);
    or its Keras input ran out and it then ended cleanly; or it exited 0
    after any progress, or without any where every worker exited 0."""
    mine = _by_worker(p)
    out: dict[str, dt.datetime | None] = {}
    lasts: dict[str, list[int]] = {}  # worker -> its main file's progress records, in file order
    # Every worker's process exited 0, each as recorded: those that printed no
    # progress at all (a script that logs none) ended cleanly too, at their
    # last calm record; what they said of each other after that was shutdown.
    logged = [r for r in workers.values() if r["has_log"]]
    all_clean = bool(logged) and all(r["exit_code"] == 0 and not r["exit_signal"] for r in logged)
    for w, row in workers.items():
        if w not in mine:
            if all_clean and row["has_log"]:
                out[w] = _last_calm(rows, w)
            continue
        every, js = mine[w]
        done = row["exit_code"] == 0 or _completes(p, js) or _says_it_completed(rows, w, p, js)
        # Keras stops a worker whose input ended, and it exits cleanly: it
        # finished early, it did not die (DA002 says why it was early).
        ended = rows.of(["keras.input_exhausted"], w)
        done = done or bool(ended and not _own_errors_after(rows, ended[0]))
        if done:
            # When: its last timed progress in any of its files (a black box's
            # step records are timed where the log's prints are not).
            timed = [t for j in every if (t := p.ts[j]) is not None]
            out[w] = max(timed) if timed else _last_calm(rows, w)
        lasts[w] = js
    if not out and (closing := _closing_line(rows, workers, p, lasts)) is not None:
        # No worker's own lines say it completed, but every worker ended alike
        # (see _closing_line): the job finished, in its script's own words.
        for w, js in lasts.items():
            timed = [t for j in js if (t := p.ts[j]) is not None]
            out[w] = max(timed) if timed else None
        del closing
    return out


def _by_worker(p: _Progress) -> dict[str, tuple[list[int], list[int]]]:
    """Each worker's progress records in file order: (all of them, those of its
    main file). The file with the most progress lines tells how training went
    (the first of them by name when two have as many)."""
    out: dict[str, tuple[list[int], list[int]]] = {}
    for w, found in p.of_worker.items():
        js = sorted(found, key=lambda j: (p.source[j], p.line[j]))
        counts = Counter(p.source[j] for j in js)
        main = max(counts, key=lambda src: counts[src])
        out[w] = (js, [j for j in js if p.source[j] == main])
    return out


def _ended_short(
    p: _Progress, workers: Mapping[str, Mapping[str, Any]], finished: Mapping[str, object]
) -> dict[str, int]:
    """Workers whose log ends short of the total their own progress states,
    with no exit status: their last progress (in the file with the most) is
    an epoch begun and not ended (``Epoch 3/3`` with no end line after it), or
    an epoch line, ended or counted, before the last (``epoch 1/3 finished``).
    worker -> that record's index in the events table."""
    mine = _by_worker(p)
    out: dict[str, int] = {}
    for w, row in workers.items():
        if (
            w not in mine
            or w in finished
            or w.startswith("?")
            or row["exit_code"] is not None
            or row["exit_signal"]
        ):
            continue
        js = mine[w][1]
        last = js[-1]
        epoch_of = last
        if p.kind[last] == "keras.epoch_end":
            begun = [j for j in js if p.kind[j] == "keras.epoch"]
            epoch_of = begun[-1] if begun else last
        try:
            epoch, epochs = int(p.epoch[epoch_of] or ""), int(p.epochs[epoch_of] or "")
        except ValueError:
            continue
        if p.kind[last] == "keras.epoch" or epoch < epochs:
            out[w] = p.idx[last]
    return out


def _last_calm(rows: Rows, worker: str) -> dt.datetime | None:
    """When a worker whose progress lines carry no time (prints on stdout,
    beside a timed stderr) finished, at the latest: its last timed record
    before its first error. What it printed after that error, the error
    included, is then after its training, as it is for a worker whose
    progress is timed."""
    ev = rows.tables.events
    mine = ev.filter(pc.equal(pc.cast(ev["worker"], pa.string()), worker)).select(
        ["ts", "severity", "benign"]
    )
    timed = [r for r in mine.to_pylist() if r["ts"] is not None]
    errors = [r["ts"] for r in timed if r["severity"] in ("error", "fatal") and not r["benign"]]
    cut = min(errors) if errors else None
    calm = [r["ts"] for r in timed if cut is None or r["ts"] < cut]
    return max(calm) if calm else None


def _still_running(tables: JobTables) -> set[str]:
    """Workers whose container the platform said was running when its status
    was taken (a pod's ``state: running``, ``kubectl describe``'s State:
    Running), and had not ended since: their logs were taken while they ran."""
    env = tables.env
    if env is None:
        return set()
    states = env.filter(pc.equal(pc.cast(env["key"], pa.string()), "k8s.state")).select(["worker", "value"])
    running: set[str] = set()
    ended: set[str] = set()
    for r in states.to_pylist():
        (running if str(r["value"]).lower() == "running" else ended).add(r["worker"])
    return running - ended


# Times a record took from a neighbour or a collector, not its own clock.
_BORROWED_TIMES = ("inferred", "inferred_before", "collector", "none")

# A script's own line of no template, or one that only says who it is
# ("training complete on worker:1: ..."): what a closing line can be.
_PLAIN_KINDS = (None, "script.whoami")


def _closing_line(
    rows: Rows, workers: Mapping[str, Mapping[str, Any]], p: _Progress, lasts: dict[str, list[int]]
) -> str | None:
    """The line a job's script prints when its training is over, learned from
    the job itself: after its last progress, every worker that trained printed
    the same line (numbers, paths and addresses masked), a plain line of its
    own (no template's, no warning or error), which none of them printed
    before (a line printed every epoch, a checkpoint saved, is no closing
    line); every worker stopped at the same point of training, under the
    totals it states; and nothing says a worker was stopped (no SIGTERM, no
    bad exit, no thread dump). Errors after a worker's closing line are shutdown noise.
    None when the job does not end so."""
    named = [w for w, r in workers.items() if r["has_log"] and not w.startswith("?")]
    if len(lasts) < 2 or set(named) - set(lasts):
        return None
    if _still_running(rows.tables) & set(named):
        return None  # a pod the platform says was running when its status was taken had not ended
    if any(r["exit_code"] not in (None, 0) or r["exit_signal"] for r in workers.values()):
        return None
    if rows.has(["tf.sigterm_caught"]):
        return None
    if rows.has(["py.thread_dump"]):
        return None  # a thread dump is taken of a process stuck or told to stop (faulthandler, py-spy)
    if any(_died_of_exception(rows, w, p, js) for w, js in lasts.items()):
        return None  # a script that ends in an uncaught exception did not end in its closing words
    points = set()
    for js in lasts.values():
        last = js[-1]
        if p.kind[last] == "keras.epoch":
            return None  # an epoch begun ("Epoch 3/3") and not ended: mid-training, not its end
        if p.epochs[last] and p.epoch[last] != p.epochs[last]:
            return None  # a stated total not reached
        if p.steps[last] and not _step_total_reached(p, js):
            return None
        points.add((p.kind[last], p.epoch[last], p.step[last]))
    if len(points) != 1:
        return None  # workers that stopped at different points did not end alike
    ev = rows.tables.events
    common: set[str] | None = None
    quiet_after: list[bool] = []
    tails: list[
        tuple[str, ...] | None
    ] = []  # each worker's plain lines after its last progress (None: others too)
    ended: list[dt.datetime | None] = []  # each worker's last time in that file
    for w, js in lasts.items():
        source, line = p.source[js[-1]], p.line[js[-1]]
        mine = (
            ev.filter(
                pc.and_(
                    pc.equal(pc.cast(ev["worker"], pa.string()), w),
                    pc.equal(pc.cast(ev["source"], pa.string()), source),
                )
            )
            .select(["line", "ts", "ts_kind", "kind", "severity", "benign", "text"])
            .to_pylist()
        )
        before: set[str] = set()
        after: list[str] = []
        # The level the worker's progress itself was logged at is its channel's, no
        # alarm: a runner that re-logs a child's prints at one level (Celery's
        # WARNING) gives its closing words that level too.
        channel = {r["severity"] for r in mine if r["line"] == line} - {"error", "fatal"}
        calm = {None, "debug", "info"} | channel
        at = p.ts[js[-1]]
        own_at = at is not None and rows.ts_kind_at(source, line) not in _BORROWED_TIMES
        clean, last_at = True, at
        for r in mine:
            if r["line"] >= line and r["ts"] is not None and (last_at is None or r["ts"] > last_at):
                last_at = r["ts"]
            # Each line of a record on its own: a thread's log calls printed
            # in one burst are folded into one record, and its last line may
            # be the closing one while its first was printed every epoch.
            parts = [m for ln in r["text"].split("\n") if (m := mask_message(ln))]
            # A line stamped with the very time of the last progress, or later by
            # its own clock, came after it, wherever it stands: a viewer's export
            # lists entries of one time (or of one second) in either order.
            later = own_at and r["ts"] is not None and r["ts_kind"] not in _BORROWED_TIMES and r["ts"] >= at
            if r["line"] < line and not later and not (at is not None and r["ts"] == at):
                before.update(parts)
                continue
            if r["line"] == line:
                # The last progress record; lines folded into it after its first
                # (a script's next print, read as its continuation) came after it.
                first, *rest = r["text"].split("\n")
                before.add(mask_message(first))
                after += [m for ln in rest if (m := mask_message(ln))]
                continue
            if r["severity"] in ("error", "fatal") and not r["benign"]:
                clean = False
                if r["kind"] in PEER_REPORTS:
                    continue  # a peer gone at shutdown: the script may still say it ended
                break  # what follows its own error is not how the script ended
            if r["kind"] in _PLAIN_KINDS and r["severity"] in calm and not r["benign"]:
                after += parts
            elif not r["benign"]:
                clean = False
        tails.append(tuple(after) if clean and after else None)
        ended.append(last_at)
        own = {m for m in after if m not in before}
        own |= _last_words_elsewhere(rows, w, source, p.ts[js[-1]])
        quiet_after.append(not any(r["line"] > line for r in mine))
        common = own if common is None else common & own
    if common:
        return sorted(common)[0]
    # No closing words, but every worker's last record is that same last
    # progress, all printed within moments of each other: the job ended
    # together at its end of training (what a cut or a hang seldom looks like:
    # a hang is killed, and a kill is logged).
    ends = [p.ts[js[-1]] for js in lasts.values()]
    if all(quiet_after) and all(t is not None for t in ends) and max(ends) - min(ends) <= ENDED_TOGETHER:  # type: ignore[operator, type-var]
        return ""
    # Or every worker's process then went through the interpreter's orderly
    # exit (TF's record of a generator dataset finalized as Python shuts down:
    # no kill and no uncaught exception ends so, and nothing is printed after
    # it), from that same last progress: the same ending, told by the process.
    if all(_exited_orderly(rows, w, p, js) for w, js in lasts.items()):
        return ""
    # Or every worker printed the same plain lines after that same last progress
    # (an epoch's summary the script prints each epoch), and nothing else, and
    # all of them ended within moments of each other: the same ending.
    if (
        tails[0] is not None
        and all(t == tails[0] for t in tails)
        and all(t is not None for t in ended)
        and max(ended) - min(ended) <= ENDED_TOGETHER  # type: ignore[operator, type-var]
        and not any(_opens_training(rows, w, p, js, tails[0]) for w, js in lasts.items())
    ):
        return ""
    return None


def _opens_training(rows: Rows, worker: str, p: _Progress, js: list[int], tail: tuple[str, ...]) -> bool:
    """Whether a line of ``tail`` (masked) was printed, in the same file, before
    the worker's first progress: a line that opens a stretch of training
    ("epoch 1 begin" before epoch 1's first step), no summary of one that
    ended. Printed last, it says training went on into a new stretch."""
    source, first = p.source[js[0]], p.line[js[0]]
    ev = rows.tables.events
    mask = pc.and_(
        pc.and_(
            pc.equal(pc.cast(ev["worker"], pa.string()), worker),
            pc.equal(pc.cast(ev["source"], pa.string()), source),
        ),
        pc.less(ev["line"], first),
    )
    # (each line of a record on its own: a script's print can be folded into the warning before it)
    said = {mask_message(ln) for t in ev.filter(mask)["text"].to_pylist() for ln in t.split("\n")}
    return bool(said & set(tail))


def _exited_orderly(rows: Rows, worker: str, p: _Progress, js: list[int]) -> bool:
    """Whether the worker's process exited through the interpreter's orderly
    shutdown after its last progress: TF's interpreter-exit record, later in
    the same file, or in another of its files and not earlier by the clock
    (on stderr beside an untimed stdout, it is the process's last act)."""
    source, line, at = p.source[js[-1]], p.line[js[-1]], p.ts[js[-1]]
    for r in rows.of(["benign.interpreter_exit"], worker):
        if r["source"] == source:
            if r["line"] > line:
                return True
        elif r["ts"] is not None and (at is None or r["ts"] >= at):
            return True
    return False


def _died_of_exception(rows: Rows, worker: str, p: _Progress, js: list[int]) -> bool:
    """Whether the worker's process ended in an uncaught exception after its
    last progress: a traceback of its own, in the same file after that line or
    in any file later by its clock (a ``.err`` beside the ``.out``)."""
    source, line, at = p.source[js[-1]], p.line[js[-1]], p.ts[js[-1]]
    for r in rows.of(["py.traceback"], worker):
        if r["severity"] not in ("error", "fatal") or r["benign"]:
            continue
        after = (r["source"] == source and r["line"] > line) or (
            r["source"] != source and at is not None and r["ts"] is not None and r["ts"] > at
        )
        # A traceback the script logged and then went on from ("metrics push
        # failed, will retry" with its exc_info, then "training finished") was
        # caught: an uncaught one is the process's last output. (It is after the
        # last progress: what follows it is the file's short end.)
        if after and not rows.plain(worker, r["source"], after=int(r["end_line"] or r["line"])):
            return True
    return False


def _last_words_elsewhere(rows: Rows, worker: str, main: str, last: dt.datetime | None) -> set[str]:
    """What a worker printed last on its other streams (a script's ``print``
    on stdout beside TF's and logging's stderr, ``.out`` beside ``.err``),
    masked: a file's last plain line when its lines carry no time, or its
    plain lines after the last progress when they do. Not when the stream
    ends in an error."""
    ev = rows.tables.events
    mine = ev.filter(
        pc.and_(
            pc.equal(pc.cast(ev["worker"], pa.string()), worker),
            pc.not_equal(pc.cast(ev["source"], pa.string()), main),
        )
    ).select(["source", "line", "ts", "kind", "severity", "benign", "text"])
    by_source: dict[str, list[dict[str, Any]]] = {}
    for r in mine.to_pylist():
        by_source.setdefault(r["source"], []).append(r)
    out: set[str] = set()
    for recs in by_source.values():
        recs.sort(key=lambda r: r["line"])
        if any(r["severity"] in ("error", "fatal") and not r["benign"] for r in recs[-3:]):
            continue
        plain = [
            r
            for r in recs
            if r["kind"] in _PLAIN_KINDS
            and r["severity"] in (None, "debug", "info")
            and not r["benign"]
            and r["text"]
        ]
        if not plain:
            continue
        if all(r["ts"] is None for r in recs):
            earlier = {mask_message(r["text"]) for r in plain[:-1]}
            if (m := mask_message(plain[-1]["text"])) and m not in earlier:
                out.add(m)
        elif last is not None:
            out |= {
                m for r in plain if r["ts"] is not None and r["ts"] > last and (m := mask_message(r["text"]))
            }
    return out


# A script's own words that its training is over ("training complete",
# "Training finished in 12.3s", "done training", "fit completed").
# (at the start of what it says: the line's start, a logfmt or JSON message
# field, or after a prefix's bracket, colon or dash)
_SAYS_COMPLETED = re.compile(
    r"(?i)(?:^|\b(?:msg|message|event)=\"?|[\]|:-]\s+)\W{0,3}"
    r"(?:(?:training|train|fit(?:ting)?)\W{0,3}(?:is\s+|has\s+)?(?:complete[d]?|finished|done)\b"
    r"|(?:finished|completed|done)\s+(?:training|fitting)\b)"
)


def _says_it_completed(rows: Rows, worker: str, p: _Progress, js: list[int]) -> bool:
    """The worker's script said its training was over, in a plain line of its
    own after its last progress (no template's, no warning or error), and no
    error of its own follows: it completed, though no total was reached that
    its lines state (its input ended, or it stops by its own measure)."""
    last = js[-1]
    after = rows.plain(worker, p.source[last], after=p.line[last], most=20)
    said = next((r for r in after or () if _SAYS_COMPLETED.search(r["text"])), None)
    return said is not None and not _own_errors_after(rows, said)


def _completes(p: _Progress, js: list[int]) -> bool:
    """Whether the last progress lines (``js``: one file's, in file order) say
    training completed."""
    last = js[-1]
    kind = p.kind[last]
    last_epoch = bool(p.epochs[last]) and p.epoch[last] == p.epochs[last]
    if kind == "keras.epoch_end":
        epochs = [j for j in js if p.kind[j] == "keras.epoch"]
        return bool(epochs) and bool(p.epochs[epochs[-1]]) and p.epoch[epochs[-1]] == p.epochs[epochs[-1]]
    if kind == "train.epoch":
        return last_epoch
    if kind == "train.step":
        all_steps = bool(p.steps[last]) and p.step[last] == p.steps[last]
        steps = [j for j in js if p.kind[j] == "train.step"]
        return (all_steps and (last_epoch or not p.epoch[last])) or (
            last_epoch and not p.steps[last] and _last_epoch_complete([p.epoch[j] or "" for j in steps])
        )
    return False


def _step_total_reached(p: _Progress, js: list[int]) -> bool:
    """Whether the last step line reaches its stated total, or falls within one
    stride of it where the script prints every k-th step counted from 0
    ("step=18/20" after 0, 2 ... 16: the last of 20)."""
    last = js[-1]
    try:
        step, total = int(p.step[last] or ""), int(p.steps[last] or "")
        before = int(p.step[js[-2]] or "") if len(js) >= 2 and p.kind[js[-2]] == p.kind[last] else None
    except ValueError:
        return p.step[last] == p.steps[last]
    if step == total:
        return True
    stride = step - before if before is not None and before < step else None
    return stride is not None and step < total <= step + stride


def _last_epoch_complete(epochs: list[str]) -> bool:
    """Without a step total, the last epoch is complete when it printed as many
    steps as the epoch before it (``epochs``: each step line's epoch)."""
    counts = list(Counter(epochs).values())
    return len(counts) >= 2 and counts[-1] >= counts[-2]


def _own_errors_after(rows: Rows, row: Row) -> list[Row]:
    """The worker's own errors after ``row`` (in file order), other than reports about peers."""
    return [
        r
        for r in rows.errors(row["worker"])
        if r["source"] == row["source"] and r["line"] > row["end_line"] and r["kind"] not in PEER_REPORTS
    ]


def _last_progress(rows: Rows, p: _Progress) -> dict[str, Row]:
    """Each worker's last record of training progress (a step, a loss, an
    epoch), last in time order (untimed ones after the timed)."""

    def key(j: int) -> tuple[tuple[bool, dt.datetime], str, int]:
        return (ts_key(p.ts[j]), p.source[j], p.line[j])

    best: dict[str, int] = {}
    for j, w in enumerate(p.worker):
        k = best.get(w)
        if k is None or key(j) > key(k):
            best[w] = j
    out = {w: rows.at(p.idx[j]) for w, j in best.items()}
    for w, row in out.items():
        if row["ts"] is not None:
            continue
        # The same line in another of the worker's files that times it (Nextflow's
        # .command.log holds what .command.out holds, with TF's timed lines): that copy.
        same = [
            j
            for j in p.of_worker.get(w, ())
            if p.ts[j] is not None
            and p.source[j] != row["source"]
            and rows.at(p.idx[j])["text"] == row["text"]
        ]
        if same:
            out[w] = rows.at(p.idx[max(same, key=key)])
    return out


def stop_times(rows: Rows) -> dict[str, dt.datetime]:
    """When each worker was first told to stop from outside: a SIGTERM it
    caught, or an interrupt (Ctrl-C: a KeyboardInterrupt, however surfaced)."""
    first: dict[str, dt.datetime] = {}
    told = rows.of(["tf.sigterm_caught"]) + [
        r
        for r in rows.of(["py.traceback"])
        if "KeyboardInterrupt" in str(r["fields"].get("exc_type", ""))
        or "KeyboardInterrupt" in str(r["fields"].get("exc_message", ""))
    ]
    for r in sorted((r for r in told if r["ts"] is not None), key=lambda r: r["ts"]):
        first.setdefault(r["worker"], r["ts"])
    return first


def _unbounded(rows: Rows) -> set[str]:
    """Workers whose first stop carries no time of its own and has no timed
    line after it: it happened at its time or any time later (a Ctrl-C's
    traceback after a long silence)."""
    out: set[str] = set()
    seen: set[str] = set()
    told = rows.of(["tf.sigterm_caught"]) + rows.of(["py.traceback"])
    for r in sorted((r for r in told if r["ts"] is not None), key=lambda r: r["ts"]):
        if r["worker"] in seen:
            continue
        if r["kind"] == "py.traceback" and "KeyboardInterrupt" not in str(
            r["fields"].get("exc_type", "")
        ) + str(r["fields"].get("exc_message", "")):
            continue
        seen.add(r["worker"])
        if _latest(r) is None:
            out.add(r["worker"])
    return out


def _stopped_together(rows: Rows, workers: Mapping[str, Mapping[str, Any]]) -> set[str]:
    """Workers that were told to stop (a SIGTERM, a Ctrl-C) at the same moment
    as most of the others: the whole job was stopped, not one worker taken away."""
    # The launcher's stream (a runner's lines, a terminal capture of every
    # worker's raw output) repeats the workers' lines: no worker stopped of its own.
    live = [w for w, r in workers.items() if r["has_log"] and w != LAUNCHER]
    first = {w: t for w, t in stop_times(rows).items() if w in live}
    if len(first) < 2 or len(first) * 2 < len(live):
        return set()
    loose = _unbounded(rows) & set(first)
    if loose and set(live) <= set(first):
        # Every worker was stopped from outside, some at times the logs do not
        # pin down (Ctrl-C in each terminal after a long silence): the job was.
        return set(first)
    known = {w: t for w, t in first.items() if w not in loose}
    times = sorted(known.values())
    if len(times) < 1 or times[-1] - times[0] > TOGETHER:
        return set()
    # A stop known only to be no earlier than its time fits the others' moment
    # when that time is not after it.
    return set(known) | {w for w in loose if first[w] <= times[-1]}


def _stalled_at_start(tables: JobTables, rows: Rows, finished: Mapping[str, object]) -> Row | None:
    """The start of an epoch when it is the last sign of training and nothing
    follows it: no step, no progress bar, no epoch end, no worker finished.
    Then "no failure found" is not "healthy": the text either was cut there or
    the job hung at its first step. None otherwise."""
    if finished or rows.has([k for k in PROGRESS_KINDS if k != "keras.epoch"]):
        return None
    progress = rows.of(["keras.epoch"])
    if not progress:
        return None
    ev = tables.events
    bars = pc.match_substring_regex(pc.cast(ev["text"], pa.string()), _IN_EPOCH_BAR)
    if pc.any(pc.fill_null(bars, False)).as_py():
        return None
    return progress[-1]


def _recognised(tables: JobTables) -> bool:
    """Whether anything in the evidence is known output of a TF job or script:
    a template, a log header (C++ origin or Python logger), or an error."""
    ev = tables.events
    if ev.num_rows == 0:
        return False
    known = pc.or_(pc.is_valid(ev["kind"]), pc.is_valid(ev["origin"]))
    known = pc.or_(known, pc.is_valid(ev["severity"]))
    return bool(pc.any(known).as_py())


def _cluster_views(rows: Rows) -> dict[str, ClusterView]:
    """Each worker's own view of the cluster, from its TF_CONFIG (a dump in its
    log, a TF_CONFIG file or env dump beside it) or MWMS's ``cluster_spec`` INFO
    line: worker -> ({job: [addresses]}, where it was read)."""
    views: dict[str, ClusterView] = {}
    for r in rows.env(["tf_config"]):
        key = str(r["key"])
        if not key.startswith("TF_CONFIG.cluster.") or str(r["worker"]).startswith("?"):
            continue
        try:
            addresses = [str(a) for a in json.loads(r["value"])]
        except (ValueError, TypeError):
            continue
        spec, ev = views.get(r["worker"], ({}, None))
        spec.setdefault(key.rsplit(".", 1)[1], addresses)
        ev = ev or env_evidence(r, f"TF_CONFIG {key}={r['value']}", "its TF_CONFIG")
        views[r["worker"]] = (spec, ev)
    for row in rows.of(["mwms.cluster_spec"]):
        if row["worker"] in views:
            continue
        try:
            raw = ast.literal_eval(row["fields"].get("cluster_spec", ""))
            spec = {str(k): [str(a) for a in v] for k, v in raw.items()}
        except (ValueError, SyntaxError, AttributeError, TypeError):
            continue
        views[row["worker"]] = (spec, evidence(row, "its cluster spec"))
    return views


def _as_dialed(views: dict[str, ClusterView]) -> dict[str, ClusterView]:
    """Each worker's cluster list with its own entry replaced by the address its
    peers list for it, where they agree. A worker's own entry is where its server
    binds; the others' are where it is dialed. Behind published ports or NAT
    (docker's ``-p``, a node port) the two differ for every task by design, and
    the lists then differ only in each worker's own entry: that is one cluster."""
    seen: dict[tuple[str, int], set[str]] = {}
    for worker, (spec, _) in views.items():
        for role, addrs in spec.items():
            for i, addr in enumerate(addrs):
                if f"{role}:{i}" != worker:
                    seen.setdefault((role, i), set()).add(addr)
    out: dict[str, ClusterView] = {}
    for worker, (spec, where) in views.items():
        role, _, index = worker.partition(":")
        mine = {r: list(a) for r, a in spec.items()}
        peers = seen.get((role, int(index)), set()) if index.isdigit() else set()
        if len(peers) == 1 and int(index) < len(mine.get(role, [])):
            mine[role][int(index)] = next(iter(peers))
        out[worker] = (mine, where)
    return out


__all__ = ["ALIVE_AFTER", "TOGETHER", "Facts", "Job", "establish", "time_key"]

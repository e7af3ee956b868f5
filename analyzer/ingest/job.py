"""Build every table of one job from its discovered inputs."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import re
import signal
from collections import defaultdict
from collections.abc import Iterable

import pyarrow as pa

from ..inputs import JobInputs, LogInput, key_hint
from ..tables import EVENTS, LAUNCHER, WORKERS, JobTables, distinct_rows, sort_key
from ..tasks import tasks_in
from .ends import ENDED as _ENDED
from .ends import ended_named
from .ends import who as _who
from .env import (
    JOB_WIDE,
    POD_UNIT,
    RANK_UNIT,
    UNIT,
    EnvRead,
    env_rows_from_events,
    env_table,
    read_env_file,
    srun_ends,
    step_tasks,
)
from .exit_status import ExitStatus, read_exit_status, shell_code, signal_of
from .grpc import rpc_table
from .identity import Cluster, Identity, gather_cluster, ranks_said, resolve, self_described
from .logfile import LogTask, Progress, read_logs
from .source import DEFAULT_LIMITS, ReadLimits
from .templates import PROGRESS_KINDS
from .worker_log import ParsedLog
from .xplane import TraceError, read_trace, trace_events_table

_ERRORS = ("error", "fatal")


def ingest_job(
    job: JobInputs,
    processes: int | None = None,
    progress: Progress | None = None,
    read_limits: ReadLimits = DEFAULT_LIMITS,
) -> JobTables:
    """``processes``: how many read the logs (default: one per core);
    ``progress``: told (bytes, bytes in all, files, files in all) as the logs are read."""
    skipped = list(job.skipped)
    logs: list[ParsedLog] = []
    hints: dict[str, str | None] = {}
    tasks = [LogTask(item.path, item.source, item.mtime.year, item.mtime) for item in job.logs]
    for item, found in zip(
        job.logs, read_logs(tasks, processes, progress, read_limits=read_limits), strict=True
    ):
        if isinstance(found, OSError):
            skipped.append((item.source, f"could not be read: {found}"))
            continue
        line_map = job.line_maps.get(item.source)
        for lg in found:
            if line_map is not None:
                # A converted export's lines, numbered as in the export the user has.
                lg.line = [_mapped(line_map, n) for n in lg.line]
                lg.end_line = [_mapped(line_map, n) for n in lg.end_line]
            hints[lg.id] = key_hint(lg.key) if lg.key is not None else item.name_hint
            # A damaged .gz still gave us what came before the damage; errors
            # past the per-file budget were counted, not parsed: say both.
            skipped.extend((item.source, note) for note in lg.notes)
        logs.extend(found)
    cluster = gather_cluster(logs)
    _ranks_as_tasks(logs, hints, cluster)
    env_files = _read_env_files(job, skipped)
    _cluster_from_env(cluster, env_files)
    # A TF_CONFIG file in a log's folder says whose log it is.
    beside = {
        item.source.rsplit("/", 1)[0]: read.task
        for item, read in env_files
        if read.task and "/" in item.source and read.rows and any(r["kind"] == "tf_config" for r in read.rows)
    }
    copies = _runtime_copies(logs)
    runtime = [lg for lg in logs if _has_runtime(lg) and lg.id not in copies]
    programs = _program_names(logs)
    for lg in logs:
        if lg.launcher or lg in runtime or hints.get(lg.id) or self_described(lg) is not None:
            continue
        if (
            _reports_others_ends(lg, lg.id in copies)
            or (runtime and any(_CHILD_ENDED.search(t) for t in lg.text))
            or (runtime and _runner_console(lg) and not _beside_one_process(lg, logs))
            or _reports_tags_ends(lg, logs)
            or len(_programs_ended(lg, programs)) >= 2
        ):
            lg.launcher = True
    for lg in logs:
        if not lg.launcher and lg.key is None and _several_servers(lg, cluster):
            # Several processes' output in one untagged stream (a launcher's
            # console that merged its children's stderr): no one worker's.
            lg.launcher = True
    ranks = ranks_said(logs)
    identities = resolve(logs, hints, cluster, beside, ranks)
    for lg in logs:
        if lg.launcher:
            identities[lg.id] = Identity(LAUNCHER, "launcher")
    exited = _launcher_exits(logs, ranks, identities)
    for worker, status in _program_exits(logs, identities, programs).items():
        exited.setdefault(worker, status)
    for worker, status in _tagged_exits(logs, identities).items():
        exited.setdefault(worker, status)
    for worker, status in _own_exits(logs, identities).items():
        exited.setdefault(worker, status)
    for worker, status in _task_named_exits(logs, identities, cluster.tasks).items():
        exited.setdefault(worker, status)
    exits: dict[str, ExitStatus] = {}
    for source, path in job.exits.items():
        try:
            exits[source] = read_exit_status(path)
        except OSError as exc:
            skipped.append((job.source_of(path), f"could not be read: {exc}"))
    known = {identities[lg.id].worker for lg in logs if not lg.launcher} | cluster.tasks
    for worker, path in job.named_exits.items():
        # A record named for a worker whose log has no file of its own: the
        # worker's, as sure as a wrapper's line on how it ended (or surer).
        if worker not in known:
            skipped.append((job.source_of(path), f"exit record of {worker}, which no log names"))
            continue
        try:
            exited[worker] = read_exit_status(path)
        except OSError as exc:
            skipped.append((job.source_of(path), f"could not be read: {exc}"))
    events = _events_table(logs, identities)
    # The name a wrapper tags a process's lines with ([trn01], a pod) is its unit's name too.
    keyed = {
        f"{POD_UNIT}{lg.key}": identities[lg.id].worker
        for lg in logs
        if lg.key and not identities[lg.id].worker.startswith("?")
    }
    env = _env_table(env_files, events, keyed)
    workers = _workers_table(logs, identities, cluster, exits, env, exited)
    # Where no cluster spec was printed, a worker's own server address says
    # which task a peer's address is (a connection that failed to it).
    for r in workers.select(["worker", "host", "port"]).to_pylist():
        if r["host"] and r["port"] and not r["worker"].startswith("?"):
            cluster.addresses.setdefault(r["worker"], f"{r['host']}:{r['port']}")
    return JobTables(
        events=events,
        workers=workers,
        rpc=rpc_table(events, cluster),
        env=env,
        trace_events=_trace_table(job, skipped),
        skipped=sorted(set(skipped)),
        other_inputs=_other_inputs(job, env_files, exits, skipped),
    )


def _other_inputs(
    job: JobInputs,
    env_files: list[tuple[LogInput, EnvRead]],
    exits: dict[str, ExitStatus],
    skipped: list[tuple[str, str]],
) -> list[tuple[str, str]]:
    """Every file read that is not a worker log, with what it was read as:
    with the logs and the skipped files, every file the job holds."""
    kinds = {item.source: kind for item, kind in job.env_files}
    out = [(item.source, f"environment ({kinds.get(item.source, 'dump')})") for item, _ in env_files]
    not_read = {s for s, _ in skipped}
    for log_source, path in job.exits.items():
        source = job.source_of(path)
        if source not in not_read and log_source in exits:
            out.append((source, f"exit record of {log_source}"))
    for worker, path in job.named_exits.items():
        if (source := job.source_of(path)) not in not_read:
            out.append((source, f"exit record of {worker}"))
    out += [(t.source, "profiler trace") for t in job.traces if t.source not in not_read]
    logs = {lg.source for lg in job.logs}
    return sorted((s, what) for s, what in set(out) if s not in logs)


def _has_runtime(lg: ParsedLog) -> bool:
    """Whether a log holds TensorFlow's C++ runtime's own records, which only
    a worker's own process prints."""
    return any(o and (".cc:" in o or ".h:" in o) for o in lg.origin)


# What a runner says of the command it ran: its kill at a deadline
# ("timeout: sending signal KILL to command 'docker'"), its exit status.
_RUNNER_KINDS = frozenset(("sched.cancelled", "proc.exit_code", "shell.killed", "launcher.exited"))


def _runner_console(lg: ParsedLog) -> bool:
    """A console that holds only what a runner printed around the command it
    ran (a CI step's "$ timeout 36 docker compose up", its kill at the
    deadline, the exit status): some of a runner's words, and no record a
    logger or TensorFlow wrote, no progress, no traceback. No worker's log:
    the workers' own lines are elsewhere."""
    if not any(k in _RUNNER_KINDS for k in lg.kind):
        return False
    return all(
        o is None and (k is None or k in _RUNNER_KINDS) and not t.startswith("Traceback")
        for o, k, t in zip(lg.origin, lg.kind, lg.text, strict=True)
    )


def _beside_one_process(lg: ParsedLog, logs: list[ParsedLog]) -> bool:
    """Whether a log shares its folder with one process's own log (a host
    folder's train.log beside the host wrapper's runner.log): then it is that
    process's wrapper, no runner of the whole job."""
    folder = lg.source.rpartition("/")[0]
    return any(
        o is not lg
        and o.key is None
        and not o.launcher
        and o.source.rpartition("/")[0] == folder
        and _has_runtime(o)
        for o in logs
    )


# A launcher's report that a child process it ran ended badly: Spark's "python
# process exited with code 1", a runner's "child process exited with status 2".
_CHILD_ENDED = re.compile(
    r"\b(?:python|child|worker|training|user|sub)[ -]?process(?:es)?\b[^\n]{0,20}?\b(?:exited|died|terminated|failed)\b"
    r"[^\n]{0,20}?\b(?:code|status|signal)\b"
    # A scheduler's word on the processes it ran (Spark's driver: "Lost executor 2
    # on 10.31.4.13", "Lost task 0.0 in stage 0.0"; YARN's "Container ... exited").
    r"|\bLost (?:executor|task) \d|\bContainer \S+ (?:exited|completed|killed)\b",
    re.I,
)


def _runtime_copies(logs: list[ParsedLog]) -> set[str]:
    """The logs whose TensorFlow runtime records are all another log's: each
    record's thread is one that another log's records name (a launcher or CI
    console that prints the tail of each failed worker's log after it)."""
    tids = {
        lg.id: {t for o, t in zip(lg.origin, lg.tid, strict=True) if t and o and ".cc:" in o} for lg in logs
    }
    out: set[str] = set()
    for lg in logs:
        mine = tids[lg.id]
        # Whose records these are: the other logs that hold the same threads,
        # two or more processes' (one process's own log holds one process).
        owners = [k for k, v in tids.items() if k != lg.id and v & mine]
        if len(owners) >= 2 and mine <= set().union(*(tids[k] for k in owners)):
            out.add(lg.id)
    return out


def _reports_others_ends(lg: ParsedLog, copied: bool = False) -> bool:
    """A log that tells how two or more workers ended (``process worker:2
    exited with code -9``, ``worker-0 exited with code 1``) and prints no
    TensorFlow record of its own is a launcher's (Azure ML's lifecycler, a
    job runner's own log), not a worker's. (With the same words about a
    child process, beside the workers' own logs: a driver's, Spark's.)
    ``copied``: its runtime records are copies of other logs' (the tails a
    launcher prints of the workers it ran)."""
    if lg.key is not None or (_has_runtime(lg) and not copied):
        return False
    return len(ended_named(lg.text)) >= 2


def _several_servers(lg: ParsedLog, cluster: Cluster) -> bool:
    """Whether one untagged file shows two or more gRPC servers started at
    different addresses: the output of several processes, merged. (One task
    that came up again on another port, its retry, is one process's: when
    the cluster spec says which task each address is, they must differ.)"""
    found = [
        (lg.field_of(i, "host") or "", lg.field_of(i, "port") or "")
        for i, kind in enumerate(lg.kind)
        if kind == "tf.server_started"
    ]
    ports = {port for _, port in found if port}
    if len(ports) < 2:
        return False
    tasks = {cluster.task_at(host, port) for host, port in found if port}
    return None in tasks or len(tasks) >= 2


def _reports_tags_ends(lg: ParsedLog, logs: list[ParsedLog]) -> bool:
    """A tagged part of a combined file that tells how the file's other tagged
    parts ended ("pdsh@login01: gpu01: ssh exited with exit code 137" beside
    "gpu01: ..." lines) and prints no TensorFlow record: the launcher's."""
    if lg.key is None or _has_runtime(lg):
        return False
    others = {x.key for x in logs if x.source == lg.source and x.key not in (None, lg.key)}
    named: set[str] = set()
    reports = 0
    for text in lg.text:
        if (m := _EXIT_WORDS.search(text)) is None:
            continue
        said = {k for k in others if re.search(rf"(?<![\w.-]){re.escape(k)}(?![\w-])", text[: m.start()])}
        if len(said) == 1:
            named |= said
            reports += 1
    return len(named) >= 2 or (bool(named) and reports * 2 >= len(lg.text))


_EXIT_WORDS = re.compile(
    # (honcho's own "system | worker.3 stopped (rc=0)" too)
    r"\b(?:exit(?:ed)?|finished|ended|terminated|stopped)\b[^\n]{0,20}?\b(?:code|status|rc)\b\s*[:=]?\s*(?P<code>-?\d+)"
    r"|\bexit(?:_?code|_?status)?\s*[:=]\s*(?P<code2>-?\d+)"
    # (a fan-out's "clush: node3: killed by signal 9")
    r"|\b(?:killed|terminated) by signal (?P<signo>\d{1,2})\b",
    re.I,
)


def _code_of(m: re.Match[str]) -> int:
    """The exit code an ``_EXIT_WORDS`` match says (a signal's as the shell's 128 + N)."""
    return int(m["code"] or m["code2"]) if m["signo"] is None else 128 + int(m["signo"])


def _program_names(logs: list[ParsedLog]) -> dict[str, ParsedLog]:
    """The names a process manager gives the programs it runs, as their own
    log files are named (circus' and supervisord's ``trainer-1.stdout.log``,
    pm2's ``trainer-1-out.log``): each untagged log's file name up to its
    first dot or stream word, for the log it names."""
    out: dict[str, ParsedLog] = {}
    for lg in logs:
        if lg.key is not None:
            continue
        name = lg.source.rsplit("/", 1)[-1].split(".", 1)[0]
        name = re.sub(r"[-_](?:stdout|stderr|out|err|error|output)$", "", name, flags=re.I)
        if len(name) >= 3 and not name.isdigit():
            out.setdefault(name, lg)
    return out


def _programs_ended(lg: ParsedLog, programs: dict[str, ParsedLog]) -> list[tuple[int, str, int]]:
    """(line index, program, exit code) of each line of ``lg`` that says how one
    of the job's other programs exited ("trainer-1: process 22946 exited with
    status 1; respawning", supervisord's "exited: trainer-1 (exit status 0;
    expected)"), in file order."""
    found: list[tuple[int, str, int]] = []
    names = [n for n, other in programs.items() if other is not lg]
    if not names:
        return found
    for i, text in enumerate(lg.text):
        if (m := _EXIT_WORDS.search(text)) is None:
            continue
        said = [n for n in names if re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w-])", text)]
        if len(said) == 1:
            found.append((i, said[0], _code_of(m)))
    return found


def _program_exits(
    logs: list[ParsedLog], identities: dict[str, Identity], programs: dict[str, ParsedLog]
) -> dict[str, ExitStatus]:
    """How each worker ended, from a process manager's log of the programs it
    ran: a program's last exit (one it respawned after ended nothing) is that
    of the worker whose log file bears its name."""
    out: dict[str, ExitStatus] = {}
    for lg in logs:
        if not lg.launcher:
            continue
        by_program: dict[str, list[tuple[int, ExitStatus]]] = {}
        for i, name, code in _programs_ended(lg, programs):
            note = f"{lg.text[i].strip()} ({lg.source}:{lg.line[i]})"
            by_program.setdefault(name, []).append((i, ExitStatus(code, signal_of(code), note)))
        for name, ends in by_program.items():
            # An end it respawned the program after (circus' "respawning") is that attempt's.
            _, last = _last_end(lg, ends)
            worker = identities[programs[name].id].worker
            if not worker.startswith("?"):
                out[worker] = last
    return out


def _tagged_exits(logs: list[ParsedLog], identities: dict[str, Identity]) -> dict[str, ExitStatus]:
    """How each worker ended, from a launcher's own lines in a file whose other
    lines it tagged by worker: its line that names a tag and an exit status
    (``rank w1 exited status=1`` beside ``w1.o| ...`` lines) is that worker's."""
    out: dict[str, ExitStatus] = {}
    by_source: dict[str, dict[str, str]] = {}
    for lg in logs:
        if lg.key is not None and not identities[lg.id].worker.startswith("?"):
            by_source.setdefault(lg.source, {})[lg.key] = identities[lg.id].worker
    for lg in logs:
        keys = by_source.get(lg.source)
        if not lg.launcher or not keys:
            continue
        for i, text in enumerate(lg.text):
            if (m := _EXIT_WORDS.search(text)) is None:
                continue
            # The tag, or the host of a user@host tag (an ssh fan-out's "fanout: gpu-box-05 exit=0").
            named = {
                w
                for k, w in keys.items()
                for name in {k, k.rsplit("@", 1)[-1]}
                if re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", text[: m.start()])
            }
            if len(named) == 1:
                code = _code_of(m)
                note = f"{text.strip()} ({lg.source}:{lg.line[i]})"
                out.setdefault(named.pop(), ExitStatus(code, signal_of(code), note))
    return out


def _launcher_exits(
    logs: list[ParsedLog], ranks: dict[int, str] | None = None, identities: dict[str, Identity] | None = None
) -> dict[str, ExitStatus]:
    """How each worker ended, from the lines a launcher printed about the
    workers it started (``worker-1 exited with code 137``), by worker."""
    out: dict[str, ExitStatus] = {}
    # srun --label's ranks, as the workers they were read as.
    labelled = {
        int(lg.key): identities[lg.id].worker
        for lg in logs
        if identities is not None and lg.key is not None and lg.key.isdigit() and not lg.launcher
    }
    for lg in logs:
        said: dict[str, list[tuple[int, ExitStatus]]] = {}  # worker -> its ends in this log, in order
        for i, kind in enumerate(lg.kind):
            note = f"{lg.text[i].strip()} ({lg.source}:{lg.line[i]})"
            if kind == "launcher.exited":
                worker = key_hint(lg.field_of(i, "service") or "")
                code = int(lg.field_of(i, "code") or 0)
                if worker:
                    said.setdefault(worker, []).append((i, ExitStatus(code, signal_of(code), note)))
                continue
            if not lg.launcher:
                continue
            # (each line: a record's continuation lines may be the launcher's next reports)
            for k, line in enumerate(lg.text[i].splitlines()):
                note = f"{line.strip()} ({lg.source}:{lg.line[i] + k})"
                for rank, code, _what in srun_ends(line):
                    if (worker := labelled.get(rank) or (ranks or {}).get(rank)) is not None:
                        said.setdefault(worker, []).append((i, ExitStatus(code, signal_of(code), note)))
                if (m := _ENDED.search(line)) is None or not (worker := _who(m, ranks)):
                    continue
                if m["code"] is not None:
                    code = shell_code(int(m["code"]))  # Python's -9: a child killed by signal 9
                    said.setdefault(worker, []).append((i, ExitStatus(code, signal_of(code), note)))
                    continue
                name = "SIGKILL" if m["killer"] else _signal_name(m["signo"], m["signame"])
                if name is not None:
                    number = signal.Signals[name].value
                    said.setdefault(worker, []).append((i, ExitStatus(128 + number, name, note)))
        for worker, ends in said.items():
            # An end the worker's own lines in this file come up again after
            # ended an attempt too.
            i, last = _last_end(lg, ends)
            if identities is not None and _started_after(logs, identities, worker, lg.source, lg.line[i]):
                lg.benign[i] = True
                continue
            out.setdefault(worker, last)
    return out


def _last_end(lg: ParsedLog, ends: list[tuple[int, ExitStatus]]) -> tuple[int, ExitStatus]:
    """The last of the ends a launcher's log ``lg`` reports for one worker (its
    record index, its status): a worker the launcher ran again ended as its
    last run did; each earlier end is an attempt's, no error of the job."""
    for i, _ in ends[:-1]:
        lg.benign[i] = True
    return ends[-1]


def _started_after(
    logs: list[ParsedLog], identities: dict[str, Identity], worker: str, source: str, line: int
) -> bool:
    """Whether ``worker``'s own lines in ``source`` show its process coming up
    after ``line`` (a gRPC server started, the coordination service joined)."""
    return any(
        kind in ("tf.server_started", "coord.agent_connected") and lg.line[k] > line
        for lg in logs
        if lg.source == source and identities[lg.id].worker == worker
        for k, kind in enumerate(lg.kind)
    )


# A wrapper script's own last words in the log it wraps: "[run.sh] python exited
# with status 0", "process exited with code 1", "exit status 137".
_OWN_END = re.compile(
    r"\b(?:exit(?:ed)?(?: with)?(?: exit| return)? (?:code|status)|exit status)[:=]?\s*(?P<code>-?\d+)\b(?!\s*/)",
    re.I,
)
# A wrapper saying, as it reports an end, that it runs the program again.
_RESTARTS = re.compile(r"(?i)\b(?:restarting|respawning|relaunching|retrying|will retry|trying again)\b")
OWN_END_LINES = 12  # a batch system's epilogue (PBS' resource usage) follows the script's last words

# A task runner's own record, in the log of the task it ran, that the task
# ended: as sure as an exit status (the runner caught the return or the raise).
# From the runners' source: Celery's celery/app/trace.py (LOG_SUCCESS "Task
# %(name)s[%(id)s] succeeded in %(runtime)ss: %(return_value)s", LOG_FAILURE
# "... raised unexpected: ..."), Airflow's models/taskinstance.py ("Marking task
# as SUCCESS." / "FAILED." / "UP_FOR_RETRY."), Prefect's engine ("Finished in
# state Completed()" / "Failed(...)" / "Crashed(...)"), Dagster's step events
# ('Finished execution of step "x" in 1.2s.' / 'Execution of step "x" failed.').
_RUNNER_ENDED = re.compile(
    r"\bTask [\w.:-]+\[[\w-]+\] (?:(?P<ok>succeeded in [\d.]+s)|(?P<bad>raised unexpected|INTERNAL ERROR))"
    r"|\bMarking task as (?:(?P<ok2>SUCCESS)|(?P<bad2>FAILED|UP_FOR_RETRY))\b"
    r"|\bFinished in state (?:(?P<ok3>Completed)|(?P<bad3>Failed|Crashed|Cancelled|TimedOut))\("
    r"|(?P<ok4>\bFinished execution of step \S+ in [\d.]+\s*m?s\b)|(?P<bad4>\bExecution of step \S+ failed\b)"
)


# IBM Spectrum LSF's job report, which it writes at the head of the job's output
# file (bsub -o) or mails: how the job ended, before the job's own output.
_LSF_REPORT = re.compile(r"^Sender: LSF System|^Job <[^>]+> was submitted from host")
_LSF_ENDED = re.compile(
    r"^(?:(?P<ok>Successfully completed)\.|Exited with exit code (?P<code>\d+)\.|"
    r"Exited with signal termination: (?P<sig>[\w ]+?)\.?)\s*$"
)
_LSF_SIGNALS = {"Killed": 9, "Terminated": 15, "Aborted": 6, "Segmentation fault": 11, "Interrupt": 2}
LSF_REPORT_LINES = 40  # the report's head: its subject, hosts, times, the script and the outcome


def _lsf_end(lg: ParsedLog) -> tuple[int, int, str] | None:
    """How an LSF job whose output file this is ended, from the report at its
    head: (exit status, the record that says it, LSF's TERM_ reason or "").
    None without such a report."""
    head = lg.text[:LSF_REPORT_LINES]
    if not any(_LSF_REPORT.search(t) for t in head[:5]):
        return None
    lines = [(i, ln.strip()) for i, text in enumerate(head) for ln in text.splitlines()]
    why = next((ln for _, ln in lines if ln.startswith("TERM_")), "")
    for i, ln in lines:
        if (m := _LSF_ENDED.match(ln)) is None:
            continue
        if m["ok"]:
            return 0, i, why
        if m["code"]:
            return int(m["code"]), i, why
        if (signo := _LSF_SIGNALS.get(m["sig"].strip())) is not None:
            return 128 + signo, i, why
    return None


# systemd's record of how a unit's main process ended, in the unit's journal
# (src/core/service.c, service_sigchld_event: "Main process exited,
# code=exited, status=1/FAILURE", code=killed or dumped with the signal).
# Not "Deactivated successfully." / "Succeeded.": a service stopped by
# SIGTERM ends so too (SIGTERM is a clean exit to systemd), finished or not.
_UNIT_ENDED = re.compile(r"\bMain process exited, code=(?P<how>exited|killed|dumped), status=(?P<status>\d+)")


def _exit_said(line: str) -> int | None:
    """The exit status a line of a worker's own log says it ended with: a
    wrapper's "exited with status N", a task runner's or systemd's record."""
    if (m := _OWN_END.search(line)) is not None:
        return int(m["code"])
    if (m := _OWN_SIGNAL.search(line)) is not None:
        return 128 + int(m["signo"])
    return _runner_end(line)


# A runner's word, in the task's own stream, on the signal that ended it
# (Metaflow's "Task failed: process killed by signal 11 (SIGSEGV).").
_OWN_SIGNAL = re.compile(r"\b(?:killed|terminated) by signal (?P<signo>\d{1,2})\b")


def _runner_end(line: str) -> int | None:
    """The exit status a task runner's record of its task's end stands for: 0
    when it says the task succeeded, 1 when it says it failed, systemd's code
    or signal (128+N) for a unit's main process, None when the line is no
    such record."""
    if (u := _UNIT_ENDED.search(line)) is not None:
        return int(u["status"]) if u["how"] == "exited" else 128 + int(u["status"])
    m = _RUNNER_ENDED.search(line)
    if m is None:
        return None
    return 0 if any(m[g] for g in ("ok", "ok2", "ok3", "ok4")) else 1


def _task_named_exits(
    logs: list[ParsedLog], identities: dict[str, Identity], tasks: set[str]
) -> dict[str, ExitStatus]:
    """How each worker ended, from a part no task is (a job manager's own log:
    TonY's application master, a launcher's console) whose line names one task
    of the cluster, in TensorFlow's own words, and an exit status ("Task
    worker:1 finished with exit code 0"). A task's last such line is its end
    (one it ran again ended an attempt)."""
    out: dict[str, ExitStatus] = {}
    for lg in logs:
        if not (lg.launcher or identities[lg.id].worker.startswith("?")):
            continue
        for i, text in enumerate(lg.text):
            if (m := _EXIT_WORDS.search(text)) is None:
                continue
            named = set(tasks_in(text[: m.start()], short=True)) & tasks
            if len(named) == 1:
                code = _code_of(m)
                note = f"{text.strip()} ({lg.source}:{lg.line[i]})"
                out[named.pop()] = ExitStatus(code, signal_of(code), note)
    return out


def _own_exits(logs: list[ParsedLog], identities: dict[str, Identity]) -> dict[str, ExitStatus]:
    """How a worker ended, in its own log's last lines: a wrapper that ran it
    printed its exit status there, naming no other task. A worker run more
    than once (a framework's retry, one run folder each) ended as its last
    run did: its files are read latest first."""
    out: dict[str, ExitStatus] = {}
    for lg in sorted(logs, key=_last_time, reverse=True):
        if lg.launcher or not len(lg):
            continue
        worker = identities[lg.id].worker
        if worker.startswith("?"):
            continue
        if (lsf := _lsf_end(lg)) is not None:
            code, i, why = lsf
            note = f"LSF job report{': ' + why if why else ''} ({lg.source}:{lg.line[i]})"
            out.setdefault(worker, ExitStatus(code, signal_of(code), note))
            continue
        for i in range(len(lg) - 1, max(len(lg) - 1 - OWN_END_LINES, -1), -1):
            text = lg.text[i]
            # The line that says it (a record may hold the error lines before it).
            said = next((ln.strip() for ln in reversed(text.splitlines()) if _exit_said(ln) is not None), "")
            if (said_code := _exit_said(said)) is None:
                continue
            ended = _ENDED.search(said)
            named = set(tasks_in(said)) | ({_who(ended)} if ended else set())
            if named and named != {worker}:
                continue  # it speaks of another worker's end: that worker's record, not this one's
            if _RESTARTS.search(said) or _started_after(logs, identities, worker, lg.source, lg.line[i]):
                break  # an attempt's end ("exited with status 1, restarting in 2s"): it ran again
            out.setdefault(
                worker, ExitStatus(said_code, signal_of(said_code), f"{said} ({lg.source}:{lg.line[i]})")
            )
            break
    return out


def _last_time(lg: ParsedLog) -> dt.datetime:
    """A log's latest own time (the earliest possible when it has none)."""
    return max((t for t in lg.ts if t is not None), default=dt.datetime.min.replace(tzinfo=dt.timezone.utc))


def _signal_name(number: str | None, name: str | None) -> str | None:
    with contextlib.suppress(ValueError, KeyError):
        if number is not None:
            return signal.Signals(int(number)).name
        if name is not None:
            return signal.Signals["SIG" + name.upper()].name
    return None


def _stem_worker(source: str) -> str:
    return "?" + source.rsplit("/", 1)[-1].split(".", 1)[0]


def _trace_table(job: JobInputs, skipped: list[tuple[str, str]]) -> pa.Table | None:
    """Profiler traces; None when the job has none (rules that need them are then
    "not evaluated"). A trace is attributed by the task its content names,
    else by its path (``worker-1/plugins/profile/...``)."""
    if not job.traces:
        return None
    items = []
    for item in job.traces:
        try:
            read = read_trace(item.path)
        except TraceError as exc:
            skipped.append((item.source, exc.message.removeprefix(f"{item.path}: ")))
            continue
        items.append((read.task or item.name_hint or _stem_worker(item.source), item.source, read))
    return trace_events_table(items)


def _cluster_from_env(cluster: Cluster, env_files: list[tuple[LogInput, EnvRead]]) -> None:
    """TF_CONFIG files beside the logs list the cluster too."""
    for _, read in env_files:
        for r in read.rows:
            key = str(r["key"])
            if r["kind"] != "tf_config" or not key.startswith("TF_CONFIG.cluster."):
                continue
            role = key.rsplit(".", 1)[1]
            try:
                addresses = json.loads(str(r["value"]))
            except ValueError:
                continue
            for idx, addr in enumerate(addresses if isinstance(addresses, list) else []):
                task = f"{'chief' if role == 'master' else role}:{idx}"
                cluster.addresses.setdefault(task, str(addr))
                cluster.tasks.add(task)


def _read_env_files(job: JobInputs, skipped: list[tuple[str, str]]) -> list[tuple[LogInput, EnvRead]]:
    out = []
    for item, kind in job.env_files:
        try:
            out.append((item, read_env_file(item.path, item.source, kind)))
        except OSError as exc:
            skipped.append((item.source, f"could not be read: {exc}"))
    return out


def _ranks_as_tasks(logs: list[ParsedLog], hints: dict[str, str | None], cluster: Cluster) -> None:
    """A launcher's bare ranks (``srun --label``'s "1: ") are the cluster's
    tasks in order, the chief first: with a chief, rank 0 is chief:0 and rank
    1 is worker:0. Only where the cluster's tasks are known and as many as the
    ranks could be (else rank N is read as worker:N)."""
    if "chief:0" not in cluster.tasks:
        return
    ranked = [lg for lg in logs if lg.key is not None and lg.key.isdigit()]
    order = sorted((t for t in cluster.tasks if t.startswith(("chief:", "worker:"))), key=sort_key)
    if not ranked or max(int(lg.key) for lg in ranked if lg.key) >= len(order):
        return
    for lg in ranked:
        hints[lg.id] = order[int(lg.key or 0)]


def _mapped(line_map: list[int], n: int) -> int:
    return line_map[n - 1] if 0 < n <= len(line_map) else n


def _env_table(
    env_files: list[tuple[LogInput, EnvRead]], events: pa.Table, keyed: dict[str, str] | None = None
) -> pa.Table | None:
    """Environment facts: dumps beside the logs, and what the logs print about
    versions. None when there are none at all. A dump that names no task
    belongs to the worker whose logs share its folder."""
    rows = env_rows_from_events(events)
    owners: dict[str, str] = {}
    # Each (source, worker) once, in order of first appearance (``unique``
    # keeps it): the first worker seen in a folder owns it.
    for source, worker in distinct_rows(events, ["source", "worker"]):
        folder = source.rsplit("/", 1)[0] if "/" in source else ""
        if folder and not worker.startswith("?"):
            owners.setdefault(folder, worker)
    units: dict[str, str] = dict(keyed or {})  # a process's id in file names (48121.2) -> its worker
    for source, worker in distinct_rows(events, ["source", "worker"]):
        if not worker.startswith("?"):
            for token in re.findall(r"(?<!\d)(\d+)\.(\d+)(?=\.[A-Za-z])", source.rsplit("/", 1)[-1]):
                units.setdefault(f"{UNIT}{token[0]}.{int(token[1])}", worker)
            # A multi-node job's node (AWS Batch's node index: cloudwatch/node-1.json).
            for token in re.findall(r"(?i)(?<![a-z])node[-_]?(\d{1,3})(?!\d)", source):
                units.setdefault(f"{UNIT}node:{int(token)}", worker)
            # A Slurm array task's id (slurm-5518204_1.out): sacct's 5518204_1.
            for token in re.findall(r"(?<!\d)(\d+)_(\d+)(?=\.[A-Za-z])", source.rsplit("/", 1)[-1]):
                units.setdefault(f"{UNIT}array:{token[0]}_{int(token[1])}", worker)
            # A Slurm job's id beside its task number in any form (train-48213-1.out).
            for token in re.findall(r"(?<!\d)(\d{4,})[-_.](\d{1,4})(?!\d)", source.rsplit("/", 1)[-1]):
                units.setdefault(f"{UNIT}jobfile:{token[0]}:{worker}", worker)
            # A pod's name as a folder or a file's stem (pods/<pod>/..., <pod>.log).
            for part in re.split(r"[/:]", source):
                units.setdefault(f"{POD_UNIT}{part}", worker)
                units.setdefault(f"{POD_UNIT}{part.split('.', 1)[0]}", worker)
    # A launcher's ranks are the cluster's tasks in order, the chief first.
    named = {w for _, w in distinct_rows(events, ["source", "worker"]) if not w.startswith("?")}
    for rank, worker in enumerate(sorted(named, key=sort_key)):
        units.setdefault(f"{RANK_UNIT}{rank}", worker)
    stepped: list[dict[str, object]] = []
    for item, read in env_files:
        folder = item.source.rsplit("/", 1)[0] if "/" in item.source else ""
        for row in read.for_worker(
            read.task or item.name_hint or owners.get(folder) or _stem_worker(item.source)
        ):
            if str(row["worker"]).startswith(UNIT):
                # A step of a plain Slurm job speaks for each of its tasks.
                for worker in step_tasks(str(row["worker"]), units):
                    stepped.append({**row, "worker": worker})
                if (worker := units.get(str(row["worker"]))) is None:
                    continue  # a process whose files the job does not hold
                row = {**row, "worker": worker}
            rows.append(row)
    # ... except a task whose own end srun said ("task 1: Segmentation fault"):
    # the step's one state (sacct's FAILED 1:0 for all) is no word on it.
    own = {r["worker"] for r in rows if r["key"] == "slurm.exit_code"}
    rows += [r for r in stepped if r["worker"] not in own]
    return env_table(rows) if rows else None


def _events_table(logs: list[ParsedLog], identities: dict[str, Identity]) -> pa.Table:
    batches = []
    for log in logs:
        n = len(log)
        if n == 0:
            continue
        worker = identities[log.id].worker
        cols = {
            "worker": pa.array([worker] * n, pa.string()).dictionary_encode(),
            "source": pa.array([log.source] * n, pa.string()).dictionary_encode(),
            "line": pa.array(log.line, pa.int32()),
            "end_line": pa.array(log.end_line, pa.int32()),
            "ts": pa.array(log.ts, EVENTS.field("ts").type),
            "ts_kind": pa.array(log.ts_kind, pa.string()).dictionary_encode(),
            "ts_bound_s": pa.array(log.ts_bound, pa.float64()),
            "severity": pa.array(log.severity, pa.string()).dictionary_encode(),
            "origin": pa.array(log.origin, pa.string()).dictionary_encode(),
            "pid": pa.nulls(n, pa.int64()),
            "tid": pa.array(log.tid, pa.int64()),
            "kind": pa.array(log.kind, pa.string()).dictionary_encode(),
            "text": pa.array(log.text, pa.string()),
            "fields": pa.array(log.fields, EVENTS.field("fields").type),
            "benign": pa.array(log.benign, pa.bool_()),
        }
        batches.append(pa.table(cols).cast(EVENTS))
    if not batches:
        return EVENTS.empty_table()
    return pa.concat_tables(batches).unify_dictionaries().combine_chunks()


# The most task indices a gap is filled with: TF's clusters are numbered from
# 0 without gaps, but a number read from elsewhere (a process id in a file
# name) is no task index, and no evidence names the tasks below it.
MAX_FILLED = 64


def _missing_indices(names: set[str]) -> set[str]:
    """Task indices are contiguous from 0: worker:2 means worker:0 and
    worker:1 exist too. Filled only where the gap is small beside the tasks
    named (a few silent workers), never up to a number that names no task."""
    by_role: dict[str, set[int]] = defaultdict(set)
    for name in names:
        role, _, idx = name.partition(":")
        if idx.isdigit() and not role.startswith("?"):
            by_role[role].add(int(idx))
    out: set[str] = set()
    for role, seen in by_role.items():
        top = max(seen)
        missing = top + 1 - len(seen)
        if missing <= max(len(seen), 2) and top < MAX_FILLED:
            out |= {f"{role}:{i}" for i in range(top + 1)}
    return out


def _workers_table(
    logs: list[ParsedLog],
    identities: dict[str, Identity],
    cluster: Cluster,
    exits: dict[str, ExitStatus],
    env: pa.Table | None,
    exited: dict[str, ExitStatus],
) -> pa.Table:
    facts = _env_facts(env)
    by_worker: dict[str, list[ParsedLog]] = defaultdict(list)
    for log in logs:
        if not log.launcher:
            by_worker[identities[log.id].worker].append(log)
    names = set(by_worker) | cluster.tasks
    if cluster.total and not cluster.addresses:
        # Without a spec, the tasks the leader waits for are the named chief
        # (if any) and workers numbered from 0 up to that count.
        chiefs = {n for n in names if n.startswith("chief:")}
        names |= {f"worker:{n}" for n in range(max(cluster.total - len(chiefs), 0))}
    names |= _missing_indices(names)
    pids = _pids_said(logs)
    rows = []
    for worker in sorted(names, key=sort_key):
        wlogs = by_worker.get(worker, [])
        role, _, idx = worker.partition(":")
        row: dict[str, object] = {
            "worker": worker,
            "task_type": role if not worker.startswith("?") else None,
            "task_index": int(idx) if idx.isdigit() else None,
            "identity_from": ", ".join(sorted({identities[lg.id].how for lg in wlogs}))
            or "cluster spec (no log)",
            "identity_note": "; ".join(n for lg in wlogs if (n := identities[lg.id].note)) or None,
            "claims_task": next((c for lg in wlogs if (c := identities[lg.id].claims)), None),
            "has_log": bool(wlogs),
            "sources": sorted({lg.source for lg in wlogs}),
            "keys": sorted({lg.key for lg in wlogs if lg.key is not None}),
            "n_records": sum(len(lg) for lg in wlogs),
            "n_errors": sum(
                1
                for lg in wlogs
                for sev, benign in zip(lg.severity, lg.benign, strict=True)
                if sev in _ERRORS and not benign
            ),
        }
        addr = cluster.addresses.get(worker)
        if addr:
            host, _, port = addr.rpartition(":")
            row["host"], row["port"] = host, int(port) if port.isdigit() else None
        row.update(_activity(wlogs, worker))
        row["n_lines"] = sum(lg.n_lines for lg in wlogs)
        row["log_bytes"] = sum(lg.n_bytes for lg in wlogs if lg.key is None)
        row["log_bytes_parsed"] = sum(lg.n_bytes_parsed for lg in wlogs if lg.key is None)
        mine = facts.get(worker, {})
        # The env table holds what the worker printed (banners win) and its pip dumps.
        row["tf_version"] = mine.get("tensorflow") or mine.get("tensorflow-cpu") or mine.get("tensorflow-gpu")
        row["python_version"] = mine.get("python")
        for lg in wlogs:
            if (st := exits.get(lg.source)) is not None:
                row["exit_code"], row["exit_signal"], row["exit_note"] = st.code, st.signal, st.note
        if row.get("exit_code") is None and (st := exited.get(worker)) is not None:
            row["exit_code"], row["exit_signal"], row["exit_note"] = st.code, st.signal, st.note
        _exit_from_env(row, mine, facts.get("?kernel", {}), pids.get(worker, set()))
        deadline = facts.get(JOB_WIDE, {}).get("k8s.job.deadline_exceeded")
        if deadline is not None and row.get("exit_code") is None and not row.get("exit_signal"):
            # The Job controller deleted the job's pods at its deadline (SIGTERM, then SIGKILL).
            row["exit_signal"] = "SIGTERM"
            row["exit_note"] = row.get("exit_note") or f"Kubernetes: DeadlineExceeded ({deadline})"
        rows.append(row)
    return pa.Table.from_pylist(rows, schema=WORKERS)


def _env_facts(env: pa.Table | None) -> dict[str, dict[str, str]]:
    """worker -> key -> value; a banner the worker printed wins over a package list.
    Host-wide kernel facts (an OOM kill names a pid, not a worker) go under ``?kernel``."""
    out: dict[str, dict[str, str]] = defaultdict(dict)
    if env is None:
        return out
    rank = {"banner": 0, "package": 1}
    best: dict[tuple[str, str], tuple[int, float, int]] = {}
    for r in env.select(["worker", "kind", "key", "value", "source"]).to_pylist():
        worker, kind, key, value = r["worker"], r["kind"], r["key"], r["value"]
        if value is None:
            continue
        if kind == "kernel":
            out["?kernel"].setdefault(f"{key}#{value}" if key == "oom_kill.pid" else key, value)
            continue
        # Of two records of how a worker ended, a later attempt's (attempt-2/) says it;
        # of two of one attempt, the one that says why (OOMKilled) over a status
        # table's bare "Error" or "Completed".
        bare = key.endswith(".reason") and str(value).startswith(("Error", "Completed"))
        prio = (rank.get(kind, 2), -attempt_of(str(r["source"] or "")) if kind == "exit" else 0, int(bare))
        if best.get((worker, key), (99, 0, 0)) > prio:
            best[(worker, key)] = prio
            out[worker][key] = value
    return out


_ATTEMPT = re.compile(r"(?i)(?:^|/)(?:attempt|retry|restart|rerun|try|run)[-_ ]?(\d{1,4})(?=/)")
# The previous container's log, as ``kubectl logs --previous`` (``-p``) is kept:
# ``worker-1.previous.log``, ``worker-1-prev.log``, ``previous/worker-1.log``.
_PREVIOUS = re.compile(r"(?i)(?:^|[/._-])(?:previous|prev)(?:[/._-]|$)")


def attempt_of(source: str) -> float:
    """The attempt a file is of: the number its folder gives
    (``job/attempt-2/status.json``; the numbers of nested ones in turn), else 0; half an attempt less for the
    previous container's log beside the current one (``kubectl logs
    --previous``), in whatever folder both are."""
    folder = 0
    # Folders of attempts inside another's (``job-1234/attempt-0/job-ranker/attempt-2/``)
    # order as their paths read, the outer first.
    for n in _ATTEMPT.findall(source):
        folder = folder * 10_000 + int(n)
    return folder - 0.5 if _PREVIOUS.search(source) else folder


# A launcher's or wrapper's line naming a task and the pid it started it as
# ("launcher: host=bm-gpu08 task=worker:0 cmd='python3 -m trainer' pid=4137").
_TASK_PID = re.compile(
    r"\btask[=: ]+(?P<task>(?:chief|worker|ps|evaluator|master):\d+)\b[^\n]*?\bpid[=: ]+(?P<pid>\d+)\b"
)


def _pids_said(logs: list[ParsedLog]) -> dict[str, set[int]]:
    """The pids the job's lines give each task, by name (a launcher's record of
    the process it started): the pid a kernel's OOM kill names may be that one,
    where the worker's own lines print another (a container's, a thread's)."""
    out: dict[str, set[int]] = defaultdict(set)
    for lg in logs:
        for text in lg.text:
            if "pid" in text:
                for m in _TASK_PID.finditer(text):
                    out[m["task"].replace("master:", "chief:")].add(int(m["pid"]))
    return out


def _exit_from_env(
    row: dict[str, object], mine: dict[str, str], kernel: dict[str, str], pids: Iterable[int] = ()
) -> None:
    """Exit facts from a ``kubectl describe pod`` or a kernel OOM kill, where no
    exit record said. The pod's current state wins; else its last state."""
    for state in ("k8s.state", "k8s.last_state"):
        if mine.get(state, "").lower() != "terminated":
            continue
        code = mine.get(f"{state}.exit_code")
        if row.get("exit_code") is None and code and code.lstrip("-").isdigit():
            row["exit_code"], row["exit_signal"] = int(code), signal_of(int(code))
        reason = mine.get(f"{state}.reason")
        if reason and not row.get("exit_note"):
            row["exit_note"] = reason
        elif reason and "OOMKilled" in reason and "OOMKilled" not in str(row["exit_note"]):
            # The platform says why, where a wrapper's line only said how it ended.
            row["exit_note"] = f"OOMKilled; {row['exit_note']}"
        break
    preempted = mine.get("k8s.preempted")
    if preempted and row.get("exit_code") is None and not row.get("exit_signal"):
        # Its node was taken away (a spot reclaim, a node shutdown): the kubelet stopped
        # its pod (SIGTERM, then SIGKILL after the grace period).
        row["exit_signal"] = "SIGTERM"
        row["exit_note"] = row.get("exit_note") or f"preempted: {preempted}"
    cancelled = mine.get("slurm.cancelled")
    if cancelled and row.get("exit_code") is None and not row.get("exit_signal"):
        # Slurm stopped the job's tasks from outside (SIGTERM, then SIGKILL after KillWait).
        row["exit_signal"] = "SIGTERM"
        row["exit_note"] = row.get("exit_note") or f"Slurm: CANCELLED {cancelled}".strip()
    code = mine.get("slurm.exit_code")
    if row.get("exit_code") is None and code and code.isdigit():
        row["exit_code"], row["exit_signal"] = int(code), signal_of(int(code))
        if not row.get("exit_note"):
            row["exit_note"] = f"srun: {mine.get('slurm.reason', '')}".strip()
    pid = row.get("pid")
    if pid is None or f"oom_kill.pid#{pid}" not in kernel:
        # (or the pid a launcher's line gave the task)
        pid = next((p for p in sorted(pids) if f"oom_kill.pid#{p}" in kernel), pid)
    if pid is not None and f"oom_kill.pid#{pid}" in kernel:
        row["exit_code"] = row.get("exit_code") or 137
        row["exit_signal"] = row.get("exit_signal") or "SIGKILL"
        # The kernel naming its pid says why, where a wrapper's line only said how it ended.
        note = row.get("exit_note")
        row["exit_note"] = "killed by the kernel's OOM killer" + (f" ({note})" if note else "")


def _activity(wlogs: list[ParsedLog], worker: str) -> dict[str, object]:
    """First/last activity, when it joined the cluster, how far it trained."""
    out: dict[str, object] = {}
    stamps = [ts for lg in wlogs for ts in lg.ts if ts is not None]
    if stamps:
        out["first_ts"], out["last_ts"] = min(stamps), max(stamps)
    connected: list[dt.datetime] = []
    last_epoch = epochs = None
    steps_done = 0
    saw_steps = False
    # Its files in the order they were written (a rotated worker-2.log.1 before
    # worker-2.log): what came last in time is how far it got.
    far = dt.datetime.max.replace(tzinfo=dt.timezone.utc)
    for lg in sorted(wlogs, key=lambda lg: min((t for t in lg.ts if t is not None), default=far)):
        for i, kind in enumerate(lg.kind):
            ts = lg.ts[i]
            if kind in PROGRESS_KINDS and ts is not None:
                before = out.get("last_progress_ts")
                if not isinstance(before, dt.datetime) or ts >= before:
                    out["last_progress_ts"], out["last_progress"] = ts, lg.text[i].split("\n", 1)[0][:200]
            if kind == "coord.agent_connected" and lg.ts[i] is not None:
                connected.append(lg.ts[i])  # type: ignore[arg-type]
            elif kind == "keras.epoch":
                last_epoch = int(lg.field_of(i, "epoch") or 0)
                epochs = int(lg.field_of(i, "epochs") or 0)
            elif kind == "keras.epoch_end":
                # Epoch lines in the middle of a long log may be left out
                # (logfile.Limits.max_frequent): count from the epoch number.
                step, steps = int(lg.field_of(i, "step") or 0), int(lg.field_of(i, "steps") or 0)
                steps_done = max(steps_done, ((last_epoch or 1) - 1) * steps + step)
                saw_steps = True
            elif kind == "tf.server_started" and "host" not in out:
                out["host"], out["port"] = lg.field_of(i, "host"), int(lg.field_of(i, "port") or 0)
            elif kind == "coord.service_started":
                out["is_leader"] = True
        if "pid" not in out and (tid := next((t for t in lg.tid if t is not None), None)) is not None:
            # absl prints the thread id; the first line comes from the main
            # thread, whose id is the process id on Linux. (A file of the same
            # worker without absl lines, a wrapper's, says nothing of it.)
            out["pid"] = tid
    if connected:
        out["connected_ts"] = min(connected)
    out["last_epoch"], out["epochs"] = last_epoch, epochs
    out["last_step"] = steps_done if saw_steps else None
    out.setdefault("is_leader", False)
    return out

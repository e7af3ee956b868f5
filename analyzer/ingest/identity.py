"""Which worker wrote each log: content first, file name second.

Evidence, strongest first:

1. what the worker says about itself: MWMS's ``cluster_spec = ..., task_type =
   'worker', task_id = 1`` line, a TF_CONFIG dump, its local device names
   (``Using MirroredStrategy with devices ('/job:worker/task:1/device:CPU:0',)``);
2. the address its server listens on (``Started server with target:
   grpc://host:port``) looked up in a cluster spec that *any* worker printed;
3. the file's name or folder (``worker-1.log``, ``chief-0/stdout.txt``);
4. running the coordination service (``Initializing CoordinationService``):
   TF runs it on the first task of the cluster.

The cluster itself (every task that should exist, with or without a log) is
gathered from cluster specs, ``Waiting for N/M tasks`` totals and every task
name that any log mentions.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field

from ..tables import sort_key
from ..tasks import tasks_in
from .env import load_tf_config
from .worker_log import ParsedLog


@dataclass
class Identity:
    worker: str
    how: str  # content | cluster spec | file name | coordination leader | unresolved
    note: str = ""  # e.g. a conflict between the file name and the content
    claims: str = ""  # the task its content claims, when another log's content claims it too


@dataclass
class Cluster:
    addresses: dict[str, str] = field(default_factory=dict)  # "worker:1" -> "host:port"
    tasks: set[str] = field(default_factory=set)
    # How many tasks the coordination service waits for ("Waiting for 1/5
    # tasks"): without a spec, the workers are numbered to make up that count.
    total: int | None = None

    def task_at(self, host: str, port: str) -> str | None:
        wanted = f"{host}:{port}"
        for task, addr in self.addresses.items():
            if addr == wanted:
                return task
        # The same port under another name for this host (localhost vs 127.0.0.1).
        by_port = [t for t, a in self.addresses.items() if a.rsplit(":", 1)[-1] == port]
        return by_port[0] if len(by_port) == 1 else None


def _spec_from(text: str) -> dict[str, list[str]] | None:
    for loader in (json.loads, ast.literal_eval):
        try:
            value = loader(text)
        except (ValueError, SyntaxError):
            continue
        if isinstance(value, dict):
            spec = value.get("cluster", value)
            if isinstance(spec, dict) and all(isinstance(v, list) for v in spec.values()):
                return {str(k): [str(a) for a in v] for k, v in spec.items()}
    return None


def gather_cluster(logs: list[ParsedLog]) -> Cluster:
    cluster = Cluster()
    for log in logs:
        for i, kind in enumerate(log.kind):
            if kind == "mwms.cluster_spec" or kind == "tf_config.dump":
                raw = log.field_of(i, "cluster_spec") or log.field_of(i, "tf_config") or ""
                _add_spec(cluster, _spec_from(raw))
            elif kind == "coord.waiting_for_tasks":
                total = log.field_of(i, "total")
                if total and total.isdigit():
                    cluster.total = max(cluster.total or 0, int(total))
            if kind is not None and kind.startswith(("coord.", "collective.", "mwms.")):
                cluster.tasks.update(tasks_in(log.text[i]))
        # A script's own print of the cluster ("task worker:1, cluster {"worker": [...]}").
        for text in log.text[:_STARTING_WITHIN]:
            if "cluster" in text and (m := _CLUSTER_SAID.search(text)):
                _add_spec(cluster, _spec_from(m["spec"]))
    return cluster


def _add_spec(cluster: Cluster, spec: dict[str, list[str]] | None) -> None:
    """A cluster spec's tasks and addresses (the first said of each kept)."""
    for role, addrs in (spec or {}).items():
        for idx, addr in enumerate(addrs):
            task = f"{'chief' if role == 'master' else role}:{idx}"
            cluster.addresses.setdefault(task, addr)
            cluster.tasks.add(task)


_CLUSTER_SAID = re.compile(
    r"cluster(?:[_ ]?spec)?\W{0,3}(?P<spec>\{\s*[\"']?(?:worker|chief|master|ps|evaluator)[\"']?\s*:\s*\[[^{}]*\]\s*\})"
)


# A script naming its own task as TF names it: "on chief:0 (rank 0 of 3)",
# "as worker:2", "task=chief:0"; not a task it speaks of ("waiting for chief:0").
_TASK_NAMED = re.compile(
    r"(?i)(?:\b(?:on|as|is|am|task|role)\s*[=:]?\s*|^\W*)(chief|master|worker):(\d{1,4})\b"
)


def self_described(log: ParsedLog) -> str | None:
    i = log.first("mwms.cluster_spec")
    if i is not None:
        return f"{log.field_of(i, 'task_type')}:{log.field_of(i, 'task_index')}"
    i = log.first("tf_config.dump")
    if i is not None:
        try:
            task = (load_tf_config(log.field_of(i, "tf_config") or "") or {}).get("task", {})
            return f"{task['type']}:{int(task['index'])}"  # type: ignore[index]
        except (ValueError, KeyError, TypeError, AttributeError):
            pass
    i = log.first("mwms.local_devices")
    if i is not None and (local := tasks_in(log.field_of(i, "devices") or "", replica_optional=True)):
        return local[0]
    i = log.first("script.whoami")
    by_rank: str | None = None
    if i is not None:
        index = log.field_of(i, "index") or log.field_of(i, "index2")
        said = (log.field_of(i, "role") or "").lower()
        lines = log.text[i].splitlines() or [""]
        line = next((ln for ln in lines if said and re.search(rf"(?i)\b{re.escape(said)}\b", ln)), lines[0])
        if said not in ("chief", "worker") and (named := _TASK_NAMED.search(line)):
            # "on chief:0 (rank 0 of 3)": a rank is no task index (with a chief,
            # the chief is rank 0); the task the line names is who it is.
            return f"{'chief' if named[1].lower() in ('chief', 'master') else 'worker'}:{int(named[2])}"
        if said in ("chief", "worker"):
            return f"{said}:{int(index)}" if index else None
        # A rank alone ("3 replicas in sync (rank 0 of 3)"): worker:N only where
        # the script names no task of its own below (with a chief, rank 0 is it).
        by_rank = f"worker:{int(index)}" if index else None
    # A script's first words naming its task ("starting worker:2 pid=9010
    # tensorflow=2.21.0": the line is read as its version, the task is here;
    # "TensorFlow 2.21.0, task worker:1, cluster {...}").
    # A file whose first words name several tasks so is a launcher's report of
    # them ("Launching task worker:0 in container ...", then worker:1 ...): no one's.
    first_words: dict[str, None] = {}
    for text in log.text[:_STARTING_WITHIN]:
        # (a print can be read as the tail of the record before it: each line on its own)
        for line in text.splitlines():
            if m := _STARTING.match(line) or _TASK_SAID.search(line) or _TYPE_AND_ID.search(line):
                first_words.setdefault(
                    f"{'chief' if m['role'].lower() in ('chief', 'master') else 'worker'}:{int(m['index'])}",
                    None,
                )
    return next(iter(first_words)) if len(first_words) == 1 else by_rank


_STARTING = re.compile(
    r"^\s*(?:starting|started|launching|launched|running|booting|initiali[sz]ing)\s+"
    r"(?P<role>worker|chief|master)[ :_#-]?(?P<index>\d+)\b(?!\s*(?:of|/)\s*\d)",
    re.I,
)
_STARTING_WITHIN = 200
# The task in TF's own attribute names, as a script logs its cluster resolver's
# ("task_type=worker task_id=3", "task_type: 'chief', task_id: 0").
# (or in a logger's own field names: "role=worker idx=1", "job_name: worker, task_index: 2")
_TYPE_AND_ID = re.compile(
    r"\b(?:task_type|role|job_name|job)[\"']?\s*[=:]\s*[\"']?(?P<role>chief|worker|master)[\"']?[,;\s]+"
    r"[\"']?(?:task_id|task_index|index|idx)[\"']?\s*[=:]\s*(?P<index>\d+)\b"
)
# "task worker:1", "task=chief:0", "task: worker:2" in a script's line about itself.
_TASK_SAID = re.compile(
    r"\b(?:task\s*[:=]?\s*[\"']?|(?:starting|started|running|launched) as )(?P<role>chief|worker|master):(?P<index>\d+)\b"
)


# File names that say which stream a file holds, not which process: the
# folder they are in is the process (``host-a/stdout.log`` + ``host-a/stderr.log``).
_STREAM_NAMES = {
    "stdout", "stderr", "output", "out", "err", "log", "logs", "console", "combined", "std", "main",
    "train", "training", "run", "job", "container", "0",
    # A host wrapper's own log beside the process it ran (host-a/runner.log).
    "runner", "wrapper",
}  # fmt: skip
# A file's suffixes that name no process: compression, a rotation's number
# after a log's extension (worker-0.log.1), the extension. A number before the
# extension is the process's (HTCondor's job.48512.1.out, proc 1).
_COMPRESSED = re.compile(r"\.(?:gz|bz2|xz|zst|zstd)$", re.I)
_ROTATED = re.compile(r"(\.(?:log|txt|out|err|stdout|stderr))(?:\.\d+)+$", re.I)
_EXTENSION = re.compile(r"(?:\.(?:log|txt|out|err|stdout|stderr))+$", re.I)


# A stream named at the end of a process's file name (pm2's <app>-out.log and
# <app>-error.log, <name>_stdout.txt): the process is the name before it.
_STREAM_SUFFIX = re.compile(r"(?<=[^\W_])[-_.](?:stdout|stderr|out|err|error)$", re.I)
# supervisord's automatic child logs (supervisor/options.py, get_autochildlog_name):
# "<program>-<channel>---<identifier>-<random>.log", one program, two channels.
_SUPERVISOR_CHILD = re.compile(r"-(?:stdout|stderr)---[\w.-]*$", re.I)
# PBS, SGE and LSF name a job's two streams <name>.o<job id> and <name>.e<job id>
# (an array task's index after it): one process, two files.
_BATCH_STREAM = re.compile(r"\.[oe](?=\d+(?:[.\[-]\d+\]?)?$)")


def _stem(name: str) -> str:
    n = name
    while _COMPRESSED.search(n):
        n = _COMPRESSED.sub("", n)
    n = _EXTENSION.sub("", _ROTATED.sub(r"\1", n))
    n = _BATCH_STREAM.sub(".", n)
    n = _SUPERVISOR_CHILD.sub("", n)
    n = _STREAM_SUFFIX.sub("", n)
    return n or name


# How sure each way of knowing a log's task is (see the module docstring).
STRONG = ("content", "TF_CONFIG beside it", "cluster spec")


def unit_of(source: str) -> str:
    """The process a file belongs to, as a path: its folder when its name only
    names a stream (``node-2/stdout.txt`` -> ``node-2``), else the file
    without its suffixes (``logs/rank2.log`` -> ``logs/rank2``)."""
    parts = source.split("/")
    stem = _stem(parts[-1])
    # A file named by a number alone (an export's 000000.gz, a rotation) names no process either.
    if len(parts) > 1 and (stem.lower() in _STREAM_NAMES or stem.isdigit()):
        return "/".join(parts[:-1])
    # One folder per stream, one file per process in each (parallel-ssh's -o out -e err:
    # out/10.1.4.21 and err/10.1.4.21): the process is the file's name, in either folder.
    if len(parts) > 1 and parts[-2].lower() in _STREAM_FOLDERS:
        return "/".join([*parts[:-2], stem])
    return "/".join([*parts[:-1], stem])


_STREAM_FOLDERS = {"out", "err", "stdout", "stderr", "output", "outputs", "error", "errors"}


_IDS = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{8,}",
    re.I,
)


def _ordinals(units: list[str]) -> dict[str, int]:
    """Units named alike but for one number (``node-0``, ``node-1``; ``rank0``,
    ``rank1``; ``trainer-3``): unit -> that number. Empty when no one number
    tells them apart."""
    # Random ids (a UUID, a hex hash) are masked first: job-<uuid>-parallel-3 is numbered by its 3.
    plain = {u: _IDS.sub(lambda m: "#" * len(m[0]), u) for u in units}
    numbered = {u: [(m.start(), m.end(), int(m[0])) for m in re.finditer(r"\d+", plain[u])] for u in units}
    if len(units) < 2:
        return {}
    counts = {len(v) for v in numbered.values()}
    if len(counts) != 1 or 0 in counts:
        return {}
    for pos in range(counts.pop()):
        masked = {plain[u][: v[pos][0]] + "#" + plain[u][v[pos][1] :] for u, v in numbered.items()}
        values = [v[pos][2] for v in numbered.values()]
        if len(masked) == 1 and len(set(values)) == len(values):
            return {u: v[pos][2] for u, v in numbered.items()}
    return {}


def resolve(
    logs: list[ParsedLog],
    hints: dict[str, str | None],
    cluster: Cluster,
    beside: dict[str, str] | None = None,
    ranks: dict[int, str] | None = None,
) -> dict[str, Identity]:
    """Map each log (by ``ParsedLog.id``) to the worker that wrote it.

    ``beside``: folder -> task, from a TF_CONFIG file found in that folder;
    ``ranks``: rank -> task, as a launcher said (``ranks_said``)."""
    beside = beside or {}
    out: dict[str, Identity] = {}
    for log in logs:
        hint = hints.get(log.id)
        if ranks and log.key is None and (m := _RANK_FILE.search(log.source.rsplit("/", 1)[-1])):
            # A launcher that said which task each rank runs ("rank 3 (worker:2) started"):
            # rank-3.txt is worker:2's, whatever its number alone would say.
            hint = ranks.get(int(m[1]), hint)
        folder = log.source.rsplit("/", 1)[0] if "/" in log.source else ""
        found: tuple[str, str] | None = None
        if (me := self_described(log)) is not None:
            found = (me, "content")
        elif log.key is None and folder in beside:
            found = (beside[folder], "TF_CONFIG beside it")
        elif (i := log.first("tf.server_started")) is not None and (
            task := cluster.task_at(log.field_of(i, "host") or "", log.field_of(i, "port") or "")
        ):
            found = (task, "cluster spec")
        if found is None and hint:
            found = (hint, "file name")
        if found is None and log.first("coord.service_started") is not None:
            first = min(cluster.tasks, key=sort_key) if cluster.tasks else "worker:0"
            found = (first, "coordination leader")
        if found is None:
            out[log.id] = Identity(f"?{_unnamed(log, logs)}", "unresolved")
            continue
        note = ""
        if hint and found[1] != "file name" and hint != found[0]:
            note = f"the file name suggests {hint}, but its content says {found[0]}"
        if found[1] in STRONG and _outside(found[0], cluster):
            # A task the cluster does not have (a TF_CONFIG index out of range):
            # what it claims is the fault, not who it is; the layout may say.
            note = f"it claims {found[0]}, which is not in the cluster spec"
            out[log.id] = Identity(
                hint or found[0], "file name" if hint else "claim outside the cluster", note
            )
            continue
        out[log.id] = Identity(found[0], found[1], note)
    out = _by_layout(logs, out, cluster)
    out = _split_by_start(logs, _split_duplicate_claims(logs, hints, out), cluster)
    return _by_elimination(logs, out, cluster)


# A launcher's line pairing a rank with the task it runs: "rank 3 (worker:2) started",
# "task 1 -> chief:0", "process 2 [worker/1]".
_RANK_SAID = re.compile(
    r"(?i)\b(?:rank|proc(?:ess)?|task)[ #:=]*(?P<n>\d{1,4})\s*(?:[(\[]|->|=>|is|as)\s*"
    r"(?P<role>chief|master|worker|ps|evaluator)[:/ _-]?(?P<i>\d{1,4})\b"
)
_RANK_FILE = re.compile(r"(?i)(?:^|[^a-z])(?:rank|proc|process)[-_ .]?(\d{1,4})(?!\d)")


def ranks_said(logs: list[ParsedLog]) -> dict[int, str]:
    """rank -> task, where a log pairs them, each rank with one task."""
    said: dict[int, set[str]] = {}
    for log in logs:
        for text in log.text[:_STARTING_WITHIN]:
            for m in _RANK_SAID.finditer(text):
                role = "chief" if m["role"].lower() in ("chief", "master") else m["role"].lower()
                said.setdefault(int(m["n"]), set()).add(f"{role}:{int(m['i'])}")
    return {n: next(iter(t)) for n, t in said.items() if len(t) == 1}


def _by_elimination(logs: list[ParsedLog], out: dict[str, Identity], cluster: Cluster) -> dict[str, Identity]:
    """One process whose files name no task, in a cluster where exactly one
    task has no log: that process is that task (``lsf.o771231`` beside the
    leader's, in a cluster of worker:0 and worker:1)."""
    units: dict[str, list[ParsedLog]] = {}
    for lg in logs:
        # (a process that claims a task the cluster lacks, a TF_CONFIG index past
        # its end, is no more named than one that names none: its claim is the fault)
        if out[lg.id].how in ("unresolved", "claim outside the cluster") and not lg.launcher:
            units.setdefault(lg.key or unit_of(lg.source), []).append(lg)
    # Only processes that ran TensorFlow, or whose lines are a training
    # script's, are candidates (a scheduler's status file beside the logs,
    # oarstat's, a support bundle's collected-at.txt, is no task).
    units = {
        u: g
        for u, g in units.items()
        if any(o for lg in g for o in lg.origin) or any(k for lg in g for k in lg.kind)
    }
    if len(units) != 1 or not cluster.tasks:
        return out
    taken = {i.worker for i in out.values() if not i.worker.startswith("?")}
    missing = sorted(t for t in cluster.tasks - taken if not t.startswith("localhost"))
    if not taken or len(missing) != 1:
        return out  # a lone excerpt's tasks are the peers it names, not itself
    (group,) = units.values()
    for lg in group:
        was = out[lg.id]
        note = was.note or (
            f"it claims {was.worker}, which is not in the cluster spec" if was.how != "unresolved" else ""
        )
        out[lg.id] = Identity(missing[0], "the one task of the cluster without another log", note)
    return out


def _unnamed(log: ParsedLog, logs: list[ParsedLog]) -> str:
    """An unresolved process's name: its tag, else its file's (or folder's)
    name, with the folders above it where two processes' names alike
    (container-1/step-04.txt and container-2/step-04.txt are two workers)."""
    if log.key:
        return log.key
    unit = unit_of(log.source)
    short = unit.rsplit("/", 1)[-1]
    alike = {
        unit_of(lg.source) for lg in logs if lg.key is None and unit_of(lg.source).rsplit("/", 1)[-1] == short
    }
    return unit if len(alike) > 1 else short


def _outside(task: str, cluster: Cluster) -> bool:
    """A task index beyond the cluster spec's list for its role."""
    role, _, idx = task.partition(":")
    listed = [t for t in cluster.addresses if t.partition(":")[0] == role]
    return bool(listed) and idx.isdigit() and int(idx) >= len(listed)


def _by_layout(logs: list[ParsedLog], out: dict[str, Identity], cluster: Cluster) -> dict[str, Identity]:
    """What the job's layout says, where the content says nothing.

    * The files of one process (``host-a/stdout.log`` and ``stderr.log``; a
      log and the TF_CONFIG beside it) are one worker: a member whose content
      names its task names it for the others.
    * Units named alike but for one number (``node-0``..``node-2``,
      ``rank0.log``.., ``trainer-0.log``..) are numbered by task index when
      the content of those that say agrees with their numbers (or no content
      says, and the cluster has no chief to shift the numbering)."""
    files = [lg for lg in logs if lg.key is None and not lg.launcher]
    units = {lg.id: unit_of(lg.source) for lg in files}
    by_unit: dict[str, list[ParsedLog]] = {}
    for lg in files:
        by_unit.setdefault(units[lg.id], []).append(lg)
    # A file whose every line one tag names ("[worker:1] step 3" on a script's
    # stdout) is one process too: it names its unit's other files (its stderr).
    parts: dict[str, list[ParsedLog]] = {}
    for lg in logs:
        if lg.key is not None and not lg.launcher:
            parts.setdefault(lg.source, []).append(lg)
    whole: dict[str, list[ParsedLog]] = {}
    for src, one in parts.items():
        if len(one) == 1:
            whole.setdefault(unit_of(src), []).append(one[0])
    for unit, group in by_unit.items():
        members = group + whole.get(unit, [])
        strong = [out[lg.id] for lg in members if out[lg.id].how in STRONG]
        known = strong or [out[lg.id] for lg in members if out[lg.id].how != "unresolved"]
        if not known or len({i.worker for i in known}) != 1:
            continue
        for lg in group:
            if out[lg.id].how not in STRONG and out[lg.id].worker != known[0].worker:
                out[lg.id] = Identity(known[0].worker, "same process as its other files", out[lg.id].note)
    out = _number(by_unit, out, cluster)
    # The parts of one file a launcher tagged by worker ([w0] ..., node3: ...)
    # are numbered by their tags the same way.
    keyed: dict[str, dict[str, list[ParsedLog]]] = {}
    for lg in logs:
        if lg.key is not None and not lg.launcher:
            keyed.setdefault(lg.source, {}).setdefault(lg.key, []).append(lg)
    for parts in keyed.values():
        out = _number(parts, out, cluster)
    return out


def _number(
    groups: dict[str, list[ParsedLog]], out: dict[str, Identity], cluster: Cluster
) -> dict[str, Identity]:
    """Groups named alike but for one number are numbered by task index, when
    the content of those that say agrees with their numbers (or no content
    says, and the cluster has no chief to shift the numbering)."""
    ordinal = _ordinals(sorted(groups))
    if not ordinal:
        return out
    has_chief = any(t.startswith(("chief", "master")) for t in cluster.tasks)
    if has_chief and (numbered := _chief_first(groups, ordinal, out, cluster)) is not None:
        return numbered
    shift = _one_based(ordinal, cluster, has_chief)
    agree = disagree = 0
    first = min(cluster.tasks, key=sort_key) if cluster.tasks else "worker:0"
    for unit, n in ordinal.items():
        for lg in groups[unit]:
            said = out[lg.id].worker if out[lg.id].how in (*STRONG, "coordination leader") else None
            if (
                said is None
                and out[lg.id].how == "file name"
                and lg.first("coord.service_started") is not None
            ):
                said = first  # the leader, whatever its name's number says (dyno worker.1 is task 0)
            if said is not None:
                role, _, idx = said.partition(":")
                if role == "worker" and idx == str(n - shift):
                    # The leader is the first task: with hosts counted from 1 it is what settles the count.
                    agree += out[lg.id].how in STRONG or bool(shift)
                else:
                    disagree += 1
    if disagree or (not agree and (has_chief or shift)):
        return out
    how = "layout (numbered like its siblings)" if agree else "file name"
    for unit, n in ordinal.items():
        for lg in groups[unit]:
            if out[lg.id].how in ("unresolved", "coordination leader", "claim outside the cluster") or (
                out[lg.id].how == "file name" and agree
            ):
                out[lg.id] = Identity(f"worker:{n - shift}", how, out[lg.id].note, out[lg.id].claims)
    return out


def _chief_first(
    groups: dict[str, list[ParsedLog]], ordinal: dict[str, int], out: dict[str, Identity], cluster: Cluster
) -> dict[str, Identity] | None:
    """Units numbered like their siblings in a cluster with a chief, the first
    of them the chief's (its content or the coordination service says so), as
    many as the cluster's tasks: the chief first, then worker:0, worker:1 ...
    (container-0, container-1, container-2). None when the layout is not so."""
    first = min(ordinal, key=lambda u: ordinal[u])
    if not any(out[lg.id].worker.startswith(("chief", "master")) for lg in groups[first]):
        return None
    workers = sorted(t for t in cluster.tasks if t.startswith("worker:"))
    rest = sorted((u for u in ordinal if u != first), key=lambda u: ordinal[u])
    if len(rest) != len(workers) or sorted(ordinal.values()) != list(
        range(ordinal[first], ordinal[first] + len(ordinal))
    ):
        return None
    for k, unit in enumerate(rest):
        for lg in groups[unit]:
            known = out[lg.id]
            if known.how in STRONG and known.worker != f"worker:{k}":
                return None  # the content says otherwise: not this layout
    out = dict(out)
    for k, unit in enumerate(rest):
        for lg in groups[unit]:
            if out[lg.id].how in (
                "unresolved",
                "coordination leader",
                "claim outside the cluster",
                "file name",
            ):
                out[lg.id] = Identity(
                    f"worker:{k}", "layout (the chief first, then the workers)", out[lg.id].note
                )
    return out


def _one_based(ordinal: dict[str, int], cluster: Cluster, has_chief: bool) -> int:
    """1 when the units are counted from one (``ml1``..``ml3``, ``gpu01``..)
    in a cluster of as many workers counted from zero: their numbers are one
    past the task indices (checked against what the content says); else 0."""
    numbers = sorted(ordinal.values())
    workers = sorted(
        int(t.partition(":")[2]) for t in cluster.tasks if t.startswith("worker:") and t[7:].isdigit()
    )
    size = len(workers) or cluster.total or 0
    if has_chief or not size or numbers[0] != 1 or 0 in numbers:
        return 0
    return 1 if numbers[-1] == size and (not workers or workers == list(range(size))) else 0


def _split_by_start(logs: list[ParsedLog], out: dict[str, Identity], cluster: Cluster) -> dict[str, Identity]:
    """Two processes (two hosts' parts of one file, two folders) whose content
    claims the same task, where no name tells them apart: the one that
    started its server or joined the coordination service is that task; the
    other, which did neither and failed, is the one task of the cluster
    without a log (a TF_CONFIG copied from another host's), its claim noted."""
    by_worker: dict[str, dict[str, list[ParsedLog]]] = {}
    for lg in logs:
        if out[lg.id].how == "content" and not lg.launcher:
            by_worker.setdefault(out[lg.id].worker, {}).setdefault(lg.key or unit_of(lg.source), []).append(
                lg
            )
    taken = {i.worker for i in out.values()}
    missing = sorted(t for t in cluster.tasks - taken if not t.startswith("localhost"))
    for worker, procs in by_worker.items():
        if len(procs) != 2 or len(missing) != 1:
            continue
        failed = {
            name
            for name, group in procs.items()
            if any(
                s in ("error", "fatal") and not b
                for lg in group
                for s, b in zip(lg.severity, lg.benign, strict=True)
            )
        }
        started = {
            name
            for name, group in procs.items()
            if any(
                lg.first(k) is not None
                for lg in group
                for k in ("tf.server_started", "coord.agent_connected")
            )
        }
        if len(started) != 1 or not failed - started:
            continue  # the other must have failed (its server could not start): else one process's two files
        (other,) = set(procs) - started
        for lg in procs[other]:
            out[lg.id] = Identity(
                missing[0],
                "the one task of the cluster without another log",
                f"its content claims {worker}, which another process that started as {worker} claims too",
                claims=worker,
            )
        missing = []
    return out


def _split_duplicate_claims(
    logs: list[ParsedLog], hints: dict[str, str | None], out: dict[str, Identity]
) -> dict[str, Identity]:
    """Two processes whose content claims the same task (two TF_CONFIGs with
    the same index) are two workers, not one: the one whose file name names
    another task is filed under that task, with the task it claims noted.

    Logs of one process (stdout and stderr, rotated parts) share a file-name
    hint, so they are never split; without hints the claim cannot be told
    apart from one worker's several files and is left as it is."""
    by_worker: dict[str, list[ParsedLog]] = {}
    for log in logs:
        if out[log.id].how == "content":
            by_worker.setdefault(out[log.id].worker, []).append(log)
    taken = {i.worker for i in out.values()}
    for worker, group in by_worker.items():
        named = {hints.get(lg.id) for lg in group}
        if len(named) < 2 or worker not in named:
            continue  # one process's files, or no file says which is the real one
        for lg in group:
            hint = hints.get(lg.id)
            if not hint or hint == worker or hint in taken:
                continue
            out[lg.id] = Identity(
                hint,
                "file name",
                f"its content claims {worker}, which another worker's log claims too; filed under its file name",
                claims=worker,
            )
    return out

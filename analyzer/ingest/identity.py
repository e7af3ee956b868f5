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

from .templates import tasks_in
from .worker_log import ParsedLog

_LOCAL_DEVICE = re.compile(r"/job:(\w+)/(?:replica:\d+/)?task:(\d+)")
ROLE_ORDER = {"chief": 0, "master": 0, "worker": 1, "ps": 2, "evaluator": 3}


def sort_key(worker: str) -> tuple[int, str, int]:
    role, _, idx = worker.partition(":")
    return (ROLE_ORDER.get(role, 9), role, int(idx) if idx.isdigit() else 1 << 30)


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
                spec = _spec_from(raw)
                for role, addrs in (spec or {}).items():
                    for idx, addr in enumerate(addrs):
                        task = f"{'chief' if role == 'master' else role}:{idx}"
                        cluster.addresses.setdefault(task, addr)
                        cluster.tasks.add(task)
            elif kind == "coord.waiting_for_tasks":
                total = log.field_of(i, "total")
                if total and total.isdigit() and not cluster.addresses:
                    # Without a spec, M tasks of a worker-only job are worker:0..M-1.
                    cluster.tasks.update(f"worker:{n}" for n in range(int(total)))
            if kind is not None and kind.startswith(("coord.", "collective.", "mwms.")):
                cluster.tasks.update(tasks_in(log.text[i]))
    return cluster


def _self_described(log: ParsedLog) -> str | None:
    i = log.first("mwms.cluster_spec")
    if i is not None:
        return f"{log.field_of(i, 'task_type')}:{log.field_of(i, 'task_index')}"
    i = log.first("tf_config.dump")
    if i is not None:
        try:
            task = json.loads(log.field_of(i, "tf_config") or "").get("task", {})
            return f"{task['type']}:{int(task['index'])}"
        except (ValueError, KeyError, TypeError, AttributeError):
            pass
    i = log.first("mwms.local_devices")
    if i is not None and (m := _LOCAL_DEVICE.search(log.field_of(i, "devices") or "")):
        return f"{m[1]}:{m[2]}"
    return None


def resolve(logs: list[ParsedLog], hints: dict[str, str | None], cluster: Cluster) -> dict[str, Identity]:
    """Map each log (by ``ParsedLog.id``) to the worker that wrote it."""
    out: dict[str, Identity] = {}
    for log in logs:
        hint = hints.get(log.id)
        found: tuple[str, str] | None = None
        if (me := _self_described(log)) is not None:
            found = (me, "content")
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
            stem = log.key or log.source.rsplit("/", 1)[-1].split(".", 1)[0]
            out[log.id] = Identity(f"?{stem}", "unresolved")
            continue
        note = ""
        if hint and found[1] != "file name" and hint != found[0]:
            note = f"the file name suggests {hint}, but its content says {found[0]}"
        out[log.id] = Identity(found[0], found[1], note)
    return _split_duplicate_claims(logs, hints, out)


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

"""TensorFlow's names of tasks and devices, read in one place.

TF names a task ``/job:worker/replica:0/task:1`` (devices add
``/device:CPU:0``; TF1 sometimes leaves the replica out); this tool names it
``worker:1``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# A task as TF prints it, for use inside other patterns.
TASK = r"/job:\w+/replica:\d+/task:\d+"
_TASK = re.compile(r"/job:(\w+)/replica:\d+/task:(\d+)")
# Local device names: the replica is left out by some TF1 paths.
_TASK_ANY = re.compile(r"/job:(\w+)/(?:replica:\d+/)?task:(\d+)")
# A task in this tool's short form, which scripts and job managers print too
# ("worker:1", "chief:0"; TonY's "Task worker:1 finished with exit code 0").
SHORT_TASK = r"\b(chief|master|worker|ps|evaluator):(\d+)\b"
_SHORT = re.compile(r"(?<![\w/:])(chief|master|worker|ps|evaluator):(\d+)(?![\w:])")


def task_id(text: str) -> str:
    """The first task named in ``text``: ``/job:worker/replica:0/task:1`` → ``worker:1``; "" when none."""
    m = _TASK.search(text)
    return f"{m[1]}:{m[2]}" if m else ""


def tasks_in(text: str, replica_optional: bool = False, short: bool = False) -> list[str]:
    """Every distinct task named in ``text``, in order of first mention; with
    ``short``, named in the short form too ("worker:1")."""
    seen: dict[str, None] = {}
    for m in (_TASK_ANY if replica_optional else _TASK).finditer(text):
        seen.setdefault(f"{m[1]}:{m[2]}", None)
    if short:
        for m in _SHORT.finditer(text):
            seen.setdefault(f"{m[1]}:{m[2]}", None)
    return list(seen)


def task_mentions(text: str) -> list[str]:
    """Every task named in ``text``, each time it is named (to count mentions)."""
    return [f"{m[1]}:{m[2]}" for m in _TASK.finditer(text)]


def remote_task(text: str) -> str:
    """The task a gRPC error names as its remote target (``remote target /job:...``); "" when none."""
    m = re.search(r"remote target (" + TASK + ")", text)
    return task_id(m[1]) if m else ""


ROLE_ORDER = {"chief": 0, "master": 0, "worker": 1, "ps": 2, "evaluator": 3}


def sort_key(worker: str) -> tuple[int, str, int]:
    """Workers in the order a person reads them: chief, workers by index, ps, evaluator."""
    role, _, idx = worker.partition(":")
    return (ROLE_ORDER.get(role, 9), role, int(idx) if idx.isdigit() else 1 << 30)


def listed(workers: Iterable[str], limit: int = 8) -> str:
    """Workers named in a sentence, in reading order ("worker:2" before
    "worker:10"); past ``limit`` the first ones and how many more, so a
    64-worker job's summary stays a sentence."""
    names = sorted(set(workers), key=sort_key)
    if len(names) <= limit:
        return ", ".join(names)
    return f"{', '.join(names[: limit - 2])} and {len(names) - (limit - 2)} others"

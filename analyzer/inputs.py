"""What discovery hands to ingestion: a job's files, sorted by what they hold,
and what their paths hint about which worker wrote them.

Plain data and path arithmetic only: both ``discover`` (which fills these)
and the ingesters (which read them) import this module, never each other.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field
from pathlib import Path

_ROLE = re.compile(
    r"(?i)(?:^|[^a-z0-9])(worker|chief|master|ps|evaluator|task|rank)[-_.]?(\d{1,5})(?![0-9a-z])"
)
_SLURM = re.compile(r"slurm-\d+_(\d+)\.(?:out|err)")


@dataclass(frozen=True)
class LogInput:
    path: Path
    source: str  # relative to the job dir, with '/'
    name_hint: str | None  # worker id the path suggests, e.g. "worker:1"
    mtime: dt.datetime


@dataclass
class JobInputs:
    root: Path
    logs: list[LogInput] = field(default_factory=list)
    exits: dict[str, Path] = field(default_factory=dict)  # log source -> exit record
    # Exit records that name their worker but sit beside no log of theirs
    # (``worker-2.exit`` beside one combined, tagged log): worker -> record.
    named_exits: dict[str, Path] = field(default_factory=dict)
    traces: list[LogInput] = field(default_factory=list)  # profiler traces (xplane.pb, trace.json.gz)
    env_files: list[tuple[LogInput, str]] = field(default_factory=list)  # (file, kind): pip freeze, dmesg ...
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (source, why)
    # Files unpacked from an archive -> their name as the job has them ("logs.tar.gz:a.log").
    unpacked: dict[Path, str] = field(default_factory=dict)
    # A converted export's lines -> each one's line in the export as the user has it
    # (by the export's name in every output), where the conversion kept them in order.
    line_maps: dict[str, list[int]] = field(default_factory=dict)

    def source_of(self, path: Path) -> str:
        """A file's name relative to the job, also for one unpacked from an archive."""
        if path in self.unpacked:
            return self.unpacked[path]
        return display(path.relative_to(self.root).as_posix())


def name_hint(rel: str) -> str | None:
    """The worker a path names, the file's own name winning over its folders.
    A Slurm array's ``slurm-<job>_<task>.out`` names its task index."""
    matches = list(_ROLE.finditer(rel))
    if not matches:
        if m := _SLURM.search(rel):
            return f"worker:{int(m[1])}"
        return None
    role, idx = matches[-1][1].lower(), int(matches[-1][2])
    # A launcher's rank or task number is the worker index (MWMS jobs without a chief).
    role = {"master": "chief", "task": "worker", "rank": "worker"}.get(role, role)
    return f"{role}:{idx}"


def key_hint(key: str) -> str | None:
    """The worker a wrapper's source name suggests: a pod or service name
    (``tfjob-mnist-worker-1``), or the bare rank ``srun --label`` prints."""
    if key.isdigit():
        return f"worker:{int(key)}"
    if key.lower() in ("chief", "master", "evaluator"):
        return "evaluator:0" if key.lower() == "evaluator" else "chief:0"  # one of its kind: index 0
    # A tag is no path: "worker/1" (a launcher's task id) names worker:1; nor
    # is TF's own "worker:1" a host and port.
    if m := re.fullmatch(r"(?i)(chief|master|worker|ps|evaluator):(\d{1,4})", key.strip()):
        return f"{'chief' if m[1].lower() == 'master' else m[1].lower()}:{int(m[2])}"
    return name_hint(key.replace("/", "-"))


def display(name: str) -> str:
    """A path as text that every output can hold: bytes of a file name that
    are not UTF-8 (kept by Python as surrogates) are shown as \\xNN."""
    try:
        name.encode("utf-8")
        return name
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")

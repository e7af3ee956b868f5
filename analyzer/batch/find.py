"""Finding the jobs of a triage: under local folders, in a list file, or on
object storage (fsspec URLs); and copying a remote job to local disk."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..discover import is_archive, unpack_archive


@dataclass(frozen=True)
class JobRef:
    path: str  # a local folder, or an fsspec URL (s3://bucket/nightly/job-17)
    name: str  # how the job is shown: its path under the root, the root's name first
    storage_options: tuple[tuple[str, Any], ...] = ()  # for fsspec (an endpoint, credentials)

    @property
    def remote(self) -> bool:
        return is_url(self.path)


def is_url(text: str) -> bool:
    return "://" in text and not text.startswith("file://")


def find_jobs(
    roots: Iterable[str | Path], depth: int = 1, storage_options: dict[str, Any] | None = None
) -> list[JobRef]:
    """The jobs under each root: its folders ``depth`` levels down (1: each
    immediate subfolder is a job), or the paths listed in a text file given
    as a root. A root may be an fsspec URL (``s3://``, ``gs://``,
    ``memory://``). Hidden folders are not jobs."""
    out: list[JobRef] = []
    opts = tuple(sorted((storage_options or {}).items()))
    for root in roots:
        text = str(root)
        if is_url(text):
            out += _remote_jobs(text, depth, storage_options or {}, opts)
            continue
        local = Path(text.removeprefix("file://"))
        if local.is_file() and is_archive(local):
            # An archive of jobs: its folders (depth levels down) and archives are the jobs.
            folder, _ = unpack_archive(local)
            out += [
                JobRef(str(p), f"{local.name}:{p.relative_to(folder).as_posix()}", opts)
                for p in _levels(folder, depth)
            ]
            continue
        if local.is_file():
            base = local.parent
            for line in local.read_text(encoding="utf-8", errors="replace").splitlines():
                line = line.strip()
                if line and not line.startswith("#"):
                    target = line if is_url(line) or Path(line).is_absolute() else str(base / line)
                    out.append(JobRef(target, line, opts))
            continue
        out += [
            JobRef(str(p), f"{local.name}/{p.relative_to(local).as_posix()}", opts)
            for p in _levels(local, depth)
        ]
    return out


def _levels(root: Path, depth: int) -> list[Path]:
    """The jobs ``depth`` levels under ``root``: folders, and at the last
    level archives too (one archive a job: ``nightly/job-17.tar.gz``)."""
    level = [root]
    for i in range(max(depth, 1)):
        last = i == max(depth, 1) - 1
        level = [
            c
            for d in level
            for c in sorted(d.iterdir())
            if not c.is_symlink()
            and not c.name.startswith(".")
            and (c.is_dir() or (last and c.is_file() and is_archive(c)))
        ]
    return level


def _remote_jobs(
    url: str, depth: int, options: dict[str, Any], opts: tuple[tuple[str, Any], ...]
) -> list[JobRef]:
    import fsspec

    fs, base = fsspec.core.url_to_fs(url, **options)
    base = base.rstrip("/")
    protocol = url.split("://", 1)[0]
    level = [base]
    for _ in range(max(depth, 1)):
        level = sorted(
            e["name"].rstrip("/")
            for d in level
            for e in fs.ls(d, detail=True)
            if e["type"] == "directory" and not e["name"].rstrip("/").rsplit("/", 1)[-1].startswith(".")
        )
    root_name = base.rsplit("/", 1)[-1]
    return [JobRef(f"{protocol}://{p}", f"{root_name}/{p[len(base) + 1 :]}", opts) for p in level]


def fetch(ref: JobRef, into: Path) -> Path:
    """Copy a job from object storage into a local folder, file by file."""
    import fsspec

    fs, base = fsspec.core.url_to_fs(ref.path, **dict(ref.storage_options))
    base = base.rstrip("/")
    job = into / "job"
    job.mkdir()
    for name in fs.find(base):
        rel = name[len(base) + 1 :]
        if not rel or any(part in ("", ".", "..") for part in rel.split("/")):
            continue
        target = job / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        fs.get_file(name, str(target))
    return job

"""Render the view model: one self-contained HTML file, JSON, Markdown."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path

from .viewmodel import ReportModel

FORMATS = ("html", "json", "md")


def render(model: ReportModel, fmt: str, back: str = "") -> str:
    """A report in one format; ``back``: the HTML page's link to where it belongs (a triage's index)."""
    if fmt == "html":
        from .html import render_html

        return render_html(model, back)
    if fmt == "json":
        from .jsonfile import render_json

        return render_json(model)
    if fmt == "md":
        from .markdown import render_markdown

        return render_markdown(model)
    raise ValueError(f"unknown report format {fmt!r}; choose from {', '.join(FORMATS)}")


def write_reports(
    model: ReportModel, out_dir: Path, formats: tuple[str, ...] = FORMATS, stem: str | None = None
) -> dict[str, Path]:
    """Write each format as ``<stem>.<fmt>`` in ``out_dir`` (``stem``: a name
    from ``claim_name``; default the job's name, made safe). Each file appears
    whole or not at all (written beside, then renamed)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = stem or safe_name(model.job)
    written = {}
    for fmt in formats:
        path = out_dir / f"{stem}.{fmt}"
        write_atomic(path, render(model, fmt))
        written[fmt] = path
    return written


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a reader never sees half a file:
    a temporary file in the same folder, then a rename over ``path``."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        # mkstemp makes it 0600: give it the mode any new file gets here (the
        # umask's), so a report published on a share or a web server can be read.
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_name(name: str) -> str:
    """A file name made from a job's name: no folders (``../x`` is ``x``), no
    characters a shell or a file system trips on, not hidden, not empty."""
    name = _UNSAFE.sub("-", name.replace("/", "-").replace("\\", "-")).strip(".-")
    return name[:100] or "job"


_NAMES = ".mwms-doctor-names"


def claim_name(out_dir: Path, name: str, job_path: Path) -> str:
    """A report name in ``out_dir`` for the job at ``job_path``: ``name`` made
    safe, and unique per job path (two jobs both called ``run1/logs`` do not
    overwrite each other: the second gets a suffix from its path). The names
    given are kept in a small registry in ``out_dir``."""
    stem = safe_name(name)
    where = str(job_path.resolve())
    registry = out_dir / _NAMES
    try:
        names = json.loads(registry.read_text(encoding="utf-8"))
        if not isinstance(names, dict):
            names = {}
    except (OSError, ValueError):
        names = {}
    if names.get(stem, where) != where:
        stem = f"{stem}-{hashlib.sha256(where.encode('utf-8', 'surrogateescape')).hexdigest()[:8]}"
    if names.get(stem) != where:
        names[stem] = where
        out_dir.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            write_atomic(registry, json.dumps(names, indent=1, sort_keys=True) + "\n")
    return stem

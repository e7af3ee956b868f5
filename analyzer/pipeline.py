"""The one place that wires every stage: discover → ingest → rules → report."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

from .discover import discover
from .engine import analyze
from .findings import Analysis
from .ingest.job import ingest_job
from .report import write_reports
from .report.viewmodel import ReportModel, build_model
from .tables import JobTables

GENERIC_DIR_NAMES = {"logs", "log", "output", "outputs", "evidence", "artifacts", "job"}


@dataclass
class JobResult:
    name: str
    path: Path
    tables: JobTables
    analysis: Analysis
    model: ReportModel
    outputs: dict[str, Path] = field(default_factory=dict)


def job_name(path: Path) -> str:
    """A readable name for a job dir: ``runs/oom/logs`` is ``oom-logs``, not ``logs``."""
    path = path.resolve()
    if path.is_file():
        return path.name.split(".", 1)[0]
    if path.name.lower() in GENERIC_DIR_NAMES and path.parent.name:
        return f"{path.parent.name}-{path.name}"
    return path.name or "job"


def run_job(
    path: Path,
    out_dir: Path | None = None,
    formats: tuple[str, ...] = ("html", "json", "md"),
    name: str | None = None,
    now: dt.datetime | None = None,
) -> JobResult:
    inputs = discover(path)
    tables = ingest_job(inputs)
    analysis = analyze(tables)
    name = name or job_name(path)
    model = build_model(name, tables, analysis, generated_at=now or dt.datetime.now(dt.timezone.utc))
    result = JobResult(name, path, tables, analysis, model)
    if out_dir is not None:
        result.outputs = write_reports(model, out_dir, formats)
    return result

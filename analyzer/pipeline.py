"""The one place that wires every stage: discover → ingest → align → facts → rules → report."""

from __future__ import annotations

import datetime as dt
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .clock import Clock, align
from .discover import discover
from .engine import Analysis, run_rules
from .errors import UserError
from .facts import Job, establish
from .ingest.job import ingest_job
from .ingest.logfile import Progress
from .ingest.source import DEFAULT_LIMITS, ReadLimits
from .redact import redact_table, redact_value, text_redactor
from .report import claim_name, write_atomic, write_reports
from .report.viewmodel import ReportModel, build_model
from .tables import JobTables

GENERIC_DIR_NAMES = {"logs", "log", "output", "outputs", "evidence", "artifacts", "job"}


@dataclass
class JobResult:
    name: str
    path: Path
    job: Job
    analysis: Analysis
    model: ReportModel
    outputs: dict[str, Path] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage

    @property
    def tables(self) -> JobTables:
        """The job's tables, as read and aligned."""
        return self.job.tables

    @property
    def verdict(self) -> dict[str, Any]:
        """The verdict as in the JSON report."""
        return self.model.verdict

    @property
    def findings(self) -> list[Any]:
        """The findings as shown in the reports, root cause first."""
        return list(self.model.findings)


def job_name(path: Path) -> str:
    """A readable name for a job dir: ``runs/oom/logs`` is ``oom-logs``, not ``logs``."""
    path = path.resolve()
    if path.is_file():
        return path.name.split(".", 1)[0]
    if path.name.lower() in GENERIC_DIR_NAMES and path.parent.name:
        return f"{path.parent.name}-{path.name}"
    return path.name or "job"


def load_tables(
    path: Path, processes: int | None = None, progress: Progress | None = None
) -> tuple[JobTables, Clock]:
    """Discover, ingest and align a job's evidence: the tables the rules read.
    ``processes``: how many read the logs (default: one per core)."""
    return align(ingest_job(discover(path), processes, progress))


def load_job(path: Path, processes: int | None = None, progress: Progress | None = None) -> tuple[Job, Clock]:
    """``load_tables``, then the facts stage: the job as the rules read it."""
    tables, clock = load_tables(path, processes, progress)
    return establish(tables), clock


TABLE_NAMES = ("events", "workers", "rpc", "env", "trace_events")


def write_tables(tables: JobTables, clock: Clock, out_dir: Path, redact: str = "secrets") -> dict[str, Path]:
    """Every table as Parquet (schema and metadata kept, so they read back
    identical), and ``manifest.json``: what was written, what was skipped, the clock."""
    import json

    import pyarrow.parquet as pq

    from .tables import SCHEMA_VERSION

    out_dir.mkdir(parents=True, exist_ok=True)
    fn = text_redactor(redact)
    written: dict[str, Path] = {}
    manifest: dict[str, object] = {"schema_version": SCHEMA_VERSION, "tables": {}, "absent": []}
    for name in TABLE_NAMES:
        table = tables.get(name)
        if table is None:
            manifest["absent"].append(name)  # type: ignore[attr-defined]
            continue
        path = out_dir / f"{name}.parquet"
        if redact != "none":
            table = redact_table(table, fn)
        tmp = path.with_name(f".{path.name}.tmp")
        pq.write_table(table, tmp)
        os.replace(tmp, path)
        written[name] = path
        manifest["tables"][name] = {"file": path.name, "rows": table.num_rows}  # type: ignore[index]
    manifest["skipped"] = [{"source": fn(s), "reason": fn(r)} for s, r in tables.skipped]
    manifest["clock"] = {
        "reference": clock.reference,
        "offsets_s": clock.offsets,
        "bounds_s": clock.bounds,
        "inconsistent": clock.inconsistent,
    }
    write_atomic(out_dir / "manifest.json", json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    written["manifest"] = out_dir / "manifest.json"
    return written


def run_job(
    path: Path,
    out_dir: Path | None = None,
    formats: tuple[str, ...] = ("html", "json", "md"),
    name: str | None = None,
    now: dt.datetime | None = None,
    processes: int | None = None,
    progress: Progress | None = None,
    redact: str = "secrets",
    read_limits: ReadLimits = DEFAULT_LIMITS,
    as_one_job: bool = True,
) -> JobResult:
    """Analyse one job and write its reports. ``redact``: what is kept out of
    the report model every output is rendered from (``secrets``, ``hosts``,
    ``none``; see ``redact.py``). ``result.tables`` are the tables as read.
    ``as_one_job=False``: a folder that holds several jobs is a UserError
    naming them, not one blended analysis."""
    timings: dict[str, float] = {}
    clock = time.perf_counter
    t0 = clock()
    inputs = discover(path)
    t1 = clock()
    raw = ingest_job(inputs, processes, progress, read_limits)
    t2 = clock()
    tables, _clock = align(raw)
    t3 = clock()
    job = establish(tables)
    if not as_one_job and job.facts.several_jobs:
        jobs = job.facts.several_jobs
        shown = ", ".join(jobs[:6]) + (", ..." if len(jobs) > 6 else "")
        raise UserError(
            f"{path}: holds {len(jobs)} jobs ({shown}), each with its own workers; read as one they would blend",
            f"run `mwms-doctor triage {path}` to analyse each (or --as-one-job to read them as one anyway)",
        )
    t4 = clock()
    analysis = run_rules(job)
    t5 = clock()
    name = name or job_name(path)
    model = build_model(name, job, analysis, generated_at=now or dt.datetime.now(dt.timezone.utc))
    model = redact_value(model, text_redactor(redact))
    result = JobResult(name, path, job, analysis, model, timings=timings)
    t6 = clock()
    if out_dir is not None:
        result.outputs = write_reports(model, out_dir, formats, claim_name(out_dir, name, path))
    t7 = clock()
    stages = ("discover", "read logs", "align clocks", "facts", "rules", "report model", "write reports")
    marks = (t0, t1, t2, t3, t4, t5, t6, t7)
    timings.update({stage: marks[i + 1] - marks[i] for i, stage in enumerate(stages)})
    return result

"""mwms-doctor: diagnose failed TensorFlow MultiWorkerMirroredStrategy jobs.

The Python API (imports are lazy: ``import mwms_doctor`` stays cheap)::

    import mwms_doctor
    report = mwms_doctor.analyze("runs/job-17/logs")      # one job
    report.verdict["class"], report.tables.events.to_pandas()
    table = mwms_doctor.triage(["nightly/2026-11-23"], out="triage/")   # many jobs
    table.to_pandas().groupby("class").size()
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["__version__", "analyze", "triage"]


def __dir__() -> list[str]:
    """``dir(mwms_doctor)`` shows the API, not the names it imports (PEP 562)."""
    return list(__all__)


if TYPE_CHECKING:
    from .pipeline import JobResult


def analyze(path: str | Path, out: str | Path | None = None, redact: str = "secrets") -> JobResult:
    """Analyse one job folder (or file). The result has ``verdict`` (a dict,
    as in the JSON report), ``findings``, ``model`` (what the reports show),
    ``tables`` (the evidence as pyarrow tables) and ``analysis``. Reports are
    written to ``out`` when it is given."""
    from .pipeline import run_job

    return run_job(Path(path), Path(out) if out is not None else None, redact=redact)


def triage(
    paths: list[str | Path] | str | Path,
    out: str | Path = "triage",
    depth: int = 1,
    processes: int | None = None,
    since: str | Path | None = None,
    redact: str = "secrets",
    history: str | Path | None = None,
) -> Any:
    """Triage every job under ``paths`` (each immediate subfolder is a job;
    ``depth`` for deeper layouts) into ``out``; the rows as a pyarrow Table
    (the schema of ``triage.parquet``). ``history``: a folder that keeps
    every night's rows, against which each failure is new, recurring,
    regressed or gone (this night is added to it)."""
    from .batch import arrow_table, run_triage

    roots = [Path(p) for p in ([paths] if isinstance(paths, (str, Path)) else paths)]
    rows = run_triage(
        roots,
        Path(out),
        depth,
        processes,
        Path(since) if since is not None else None,
        redact,
        history=Path(history) if history is not None else None,
    )
    return arrow_table(rows)

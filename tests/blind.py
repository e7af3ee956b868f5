"""What the blind batches' mechanism tests ask of one recorded run."""

from __future__ import annotations

from pathlib import Path

from mwms_doctor.pipeline import run_job


def verdict(logs: Path) -> tuple[str, list[str], str]:
    """The run's verdict: (class, root workers, status)."""
    v = run_job(logs, formats=()).model.verdict
    return v["class"], v["root_workers"], v["status"]

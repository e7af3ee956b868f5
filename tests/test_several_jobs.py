"""A folder of several jobs given to ``analyze`` is said to be one (issue
23): never blended silently. Built from real recordings laid out as users
hand them over."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mwms_doctor.pipeline import run_job

from .paths import RUNS


def _copy(src: str, dest: Path) -> None:
    shutil.copytree(RUNS / src / "logs", dest)


def test_a_folder_of_jobs_is_said_to_be_one_and_points_to_triage(tmp_path: Path) -> None:
    night = tmp_path / "nightly"
    for name in ("oom", "healthy", "peer_killed"):
        _copy(name, night / f"job-{name}")

    def cli(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "mwms_doctor", "analyze", str(night), "--no-files", *extra],
            capture_output=True,
            text=True,
            check=False,
        )

    # Refused by default (exit 2), naming the jobs and the command for them.
    r = cli()
    assert r.returncode == 2 and r.stdout == "", r.stdout
    assert "holds 3 jobs (job-healthy, job-oom, job-peer_killed)" in r.stderr, r.stderr
    assert f"mwms-doctor triage {night}" in r.stderr and "--as-one-job" in r.stderr
    # Read as one on request: said on stderr and in the verdict, its confidence low.
    r = cli("--as-one-job")
    assert "holds 3 jobs" in r.stderr and f"mwms-doctor triage {night}" in r.stderr, r.stderr
    assert "confidence lowered: the folder holds 3 jobs" in r.stdout and "(low)" in r.stdout
    result = run_job(night)  # the Python API reads what it is given
    assert result.job.facts.several_jobs == ("job-healthy", "job-oom", "job-peer_killed")
    v = result.model.verdict
    assert v["confidence"] < 0.5 and any("holds 3 jobs" in m for m in v["missing"])


@pytest.mark.parametrize(
    "layout",
    [
        ("attempt-1", "attempt-2"),  # an orchestrator's attempts of one job
        ("previous", "current"),  # a pod's logs before and after its restart
        ("0", "1"),  # attempt numbers
        ("stdout", "stderr"),  # one job's streams in two folders
    ],
)
def test_one_jobs_own_parts_are_not_several_jobs(tmp_path: Path, layout: tuple[str, str]) -> None:
    job = tmp_path / "job"
    for part in layout:
        _copy("peer_killed", job / part)
    assert run_job(job).job.facts.several_jobs == ()


def test_host_folders_of_one_job_are_one_job(tmp_path: Path) -> None:
    job = tmp_path / "job"
    for i in range(3):
        (job / f"host-{i}").mkdir(parents=True)
        for f in (RUNS / "oom" / "logs").glob(f"worker-{i}.*"):
            shutil.copy(f, job / f"host-{i}" / f.name)
    result = run_job(job)
    assert result.job.facts.several_jobs == () and result.model.verdict["class"] == "oom"


def test_triage_says_a_job_folder_that_holds_several_jobs_is_an_error(tmp_path: Path) -> None:
    """--depth too shallow: each date folder holds several jobs; its row is
    an error that names them, not one blended verdict."""
    from mwms_doctor.batch import run_triage

    for name in ("oom", "healthy"):
        _copy(name, tmp_path / "nightly" / "2026-11-23" / f"job-{name}")
    (row,) = run_triage([tmp_path / "nightly"], tmp_path / "t", processes=1)
    assert row["status"] == "error" and "holds 2 jobs" in row["error"]

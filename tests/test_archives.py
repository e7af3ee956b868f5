"""Evidence as users hold it: a job packed as each archive kind reads as its
folder does (issue 23), and triage takes one archive a job or an archive of
jobs. Built from real recordings."""

from __future__ import annotations

import io
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest
import zstandard
from mwms_doctor.batch import run_triage
from mwms_doctor.pipeline import run_job

from .paths import RUNS


def _tar_bytes(folder: Path, arcname: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        tf.add(folder, arcname=arcname)
    return buf.getvalue()


def pack(folder: Path, dest: Path) -> Path:
    """``folder`` packed as ``dest``'s suffix says, under ``logs/`` inside."""
    name = dest.name
    if name.endswith(".zip"):
        with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
            for p in sorted(folder.rglob("*")):
                if p.is_file():
                    zf.write(p, f"logs/{p.relative_to(folder).as_posix()}")
    elif name.endswith((".tar.zst", ".tzst")):
        dest.write_bytes(zstandard.ZstdCompressor().compress(_tar_bytes(folder, "logs")))
    else:
        mode = {".tar": "w", ".tar.gz": "w:gz", ".tgz": "w:gz", ".tar.xz": "w:xz", ".tar.bz2": "w:bz2"}
        suffix = next(s for s in mode if name.endswith(s))
        with tarfile.open(dest, mode[suffix]) as tf:
            tf.add(folder, arcname="logs")
    return dest


def _what_it_says(result) -> tuple:  # type: ignore[no-untyped-def]
    v = result.model.verdict
    root = result.model.findings[0] if result.model.findings else None
    where = [(e.location.rsplit("/", 1)[-1], e.text) for e in root.evidence] if root else []
    return v["status"], v["class"], tuple(v["root_workers"]), where


@pytest.mark.parametrize("kind", [".tar", ".tar.gz", ".tgz", ".tar.xz", ".tar.bz2", ".tar.zst", ".zip"])
@pytest.mark.parametrize("run", ["peer_killed", "oom"])
def test_an_archive_reads_as_its_folder(tmp_path: Path, kind: str, run: str) -> None:
    folder = RUNS / run / "logs"
    archive = pack(folder, tmp_path / f"{run}{kind}")
    packed, plain = run_job(archive), run_job(folder)
    assert _what_it_says(packed) == _what_it_says(plain)
    evidence = packed.model.findings[0].evidence
    assert evidence and all(e.location.startswith(f"{archive.name}:logs/") for e in evidence)


def test_triage_takes_one_archive_a_job_and_an_archive_of_jobs(tmp_path: Path) -> None:
    night = tmp_path / "nightly"
    night.mkdir()
    pack(RUNS / "oom" / "logs", night / "job-1.tar.gz")
    pack(RUNS / "healthy" / "logs", night / "job-2.zip")
    shutil.copytree(RUNS / "peer_killed" / "logs", night / "job-3")
    rows = {r["job"]: r for r in run_triage([night], tmp_path / "t1", processes=1)}
    assert {k: r["class"] for k, r in rows.items()} == {
        "nightly/job-1.tar.gz": "oom",
        "nightly/job-2.zip": "healthy",
        "nightly/job-3": "peer_died",
    }
    # The same night as one archive, its jobs two levels down (nightly/<job>).
    whole = pack(night, tmp_path / "night.tar.xz")  # packed under logs/
    rows2 = {r["job"]: r for r in run_triage([whole], tmp_path / "t2", depth=2, processes=1)}
    assert {k: r["class"] for k, r in rows2.items()} == {
        "night.tar.xz:logs/job-1.tar.gz": "oom",
        "night.tar.xz:logs/job-2.zip": "healthy",
        "night.tar.xz:logs/job-3": "peer_died",
    }


def test_an_archive_of_several_jobs_given_to_analyze_is_named_so(tmp_path: Path) -> None:
    from mwms_doctor.errors import UserError

    night = tmp_path / "nightly"
    for name in ("oom", "peer_killed"):
        shutil.copytree(RUNS / name / "logs", night / f"job-{name}")
    archive = pack(night, tmp_path / "night.tar.gz")  # logs/job-oom/..., logs/job-peer_killed/...
    with pytest.raises(UserError, match=r"holds 2 jobs \(job-oom, job-peer_killed\)"):
        run_job(archive, as_one_job=False)

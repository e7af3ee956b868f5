"""Hostile, broken and odd input (issue 14): each case was a crash, a hang or
evidence lost silently before its fix. The rest of the job is still analysed,
and whatever was not read is named with the reason."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import resource
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from mwms_doctor.discover import discover
from mwms_doctor.ingest.logfile import read_log
from mwms_doctor.ingest.xplane import TraceError, read_trace

from .paths import ROOT, RUNS

OOM = RUNS / "oom" / "logs"


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mwms_doctor", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
        timeout=300,
    )


def _oom_job(tmp_path: Path) -> Path:
    job = tmp_path / "job"
    shutil.copytree(OOM, job)
    return job


def test_a_file_name_that_is_not_utf8_is_shown_not_crashed_on(tmp_path: Path) -> None:
    job = _oom_job(tmp_path)
    odd = os.fsdecode(b"worker-0-\xff\xfe.log")
    os.replace(job / "worker-0.log", job / odd)
    out = tmp_path / "out"
    r = _cli("analyze", str(job), "--out", str(out))
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    report = json.loads(next(out.glob("*.json")).read_text(encoding="utf-8"))
    assert report["verdict"]["class"] == "oom"
    shown = "worker-0-\\xff\\xfe.log"  # the bytes that are not UTF-8, as \xNN
    assert shown in {src for w in report["workers"] for src in w["sources"]}
    assert "worker-0-\\xff\\xfe.log" in next(out.glob("*.html")).read_text(encoding="utf-8")


def test_special_files_and_odd_links_are_skipped_with_a_note(tmp_path: Path) -> None:
    job = _oom_job(tmp_path)
    os.mkfifo(job / "worker-7.log")
    os.symlink("/dev/zero", job / "worker-8.log")
    outside = tmp_path / "secret.txt"
    outside.write_text("outside the job folder\n")
    os.symlink(outside, job / "worker-9.log")
    os.symlink(job / "loop-b.log", job / "loop-a.log")
    os.symlink(job / "loop-a.log", job / "loop-b.log")
    os.symlink(job / "gone.log", job / "broken.log")
    os.symlink(tmp_path, job / "up")
    os.symlink(job / "worker-1.log", job / "alias.log")  # inside the folder: read
    found = discover(job)
    why = dict(found.skipped)
    assert "FIFO" in why["worker-7.log"]
    assert "outside the job folder" in why["worker-8.log"]
    assert "outside the job folder" in why["worker-9.log"]
    assert "loop" in why["loop-a.log"] and "loop" in why["loop-b.log"]
    assert "broken" in why["broken.log"]
    assert "not followed" in why["up"]
    assert {"worker-0.log", "worker-1.log", "alias.log"} <= {lg.source for lg in found.logs}


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_device_inside_the_folder_is_never_opened(tmp_path: Path) -> None:
    job = _oom_job(tmp_path)
    os.mknod(
        job / "worker-6.log", 0o600 | 0o020000, os.makedev(1, 5)
    )  # a character device: /dev/zero's numbers
    why = dict(discover(job).skipped)
    assert "character device" in why["worker-6.log"]


def test_a_folder_that_cannot_be_listed_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = _oom_job(tmp_path)
    (job / "private").mkdir()
    (job / "private" / "worker-5.log").write_text("hidden\n")
    real_scandir = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]
        if Path(path).name == "private":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    found = discover(job)
    assert dict(found.skipped)["private"] == "could not be listed: Permission denied"
    assert {"worker-0.log", "worker-1.log"} <= {lg.source for lg in found.logs}


def test_a_gzip_bomb_beside_a_real_job_is_cut_short(tmp_path: Path) -> None:
    """2 GB of zeros compressed to 2 MB: decompression stops at the ratio cap,
    in seconds, in little memory, with no temporary file left behind."""
    job = _oom_job(tmp_path)
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1 << 20)
    with open(job / "worker-2.log.gz", "wb") as fh:
        fh.write(c.compress((OOM / "worker-0.log").read_bytes()))  # a log, then 2 GB of zeros
        for _ in range(2048):
            fh.write(c.compress(zeros))
        fh.write(c.flush())
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "out"
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    r = _cli("analyze", str(job), "--out", str(out), env={"TMPDIR": str(tmp)})
    peak_kib = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    assert r.returncode == 1, r.stderr
    assert "class=oom" in r.stdout
    assert "worker-2.log.gz: not read:" in r.stderr and "decompression bomb" in r.stderr
    assert list(tmp.iterdir()) == []
    assert peak_kib < 1 << 20  # under 1 GiB


def _copy_as(tmp_path: Path, name: str, pack) -> Path:  # type: ignore[no-untyped-def]
    job = tmp_path / "job"
    job.mkdir(exist_ok=True)
    (job / name).write_bytes(pack((OOM / "worker-1.log").read_bytes()))
    return job / name


@pytest.mark.parametrize(
    ("name", "pack"),
    [
        ("worker-1.log", gzip.compress),  # gzip without .gz
        ("worker-1.log.gz", lambda b: b),  # .gz that is plain text
        ("worker-1.log", bz2.compress),
        ("worker-1.log.xz", lzma.compress),
        ("worker-1.txt", lambda b: b.decode().encode("utf-16")),  # UTF-16 with its mark
        ("worker-1.out", lambda b: b.decode().encode("utf-16-le")),  # ... and without
        ("worker-1.log", lambda b: b"\xef\xbb\xbf" + b),  # UTF-8 with a byte-order mark
    ],
    ids=["gzip-no-suffix", "gz-plain", "bzip2", "xz", "utf16-bom", "utf16le", "utf8-bom"],
)
def test_compression_and_encoding_are_told_by_content(tmp_path: Path, name: str, pack) -> None:  # type: ignore[no-untyped-def]
    path = _copy_as(tmp_path, name, pack)
    found = discover(path.parent)
    assert [lg.source for lg in found.logs] == [name], found.skipped
    (log,) = read_log(path, name, 2026, None)
    (want,) = read_log(OOM / "worker-1.log", name, 2026, None)
    assert (log.line, log.text, log.kind) == (want.line, want.text, want.kind)
    assert not log.notes


def test_latin1_bytes_stay_readable(tmp_path: Path) -> None:
    text = (OOM / "worker-1.log").read_bytes() + "Fehler beim Lesen der Datei für Müller\n".encode("latin-1")
    path = tmp_path / "worker-1.log"
    path.write_bytes(text)
    (log,) = read_log(path, path.name, 2026, None)
    assert any("für Müller" in t for t in log.text)


def test_a_compressed_trace_that_expands_too_far_is_refused(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from mwms_doctor.ingest import xplane

    monkeypatch.setattr(xplane, "MAX_TRACE_BYTES", 1 << 20)
    path = tmp_path / "host.trace.json.gz"
    path.write_bytes(gzip.compress(b'{"traceEvents": [' + b" " * (4 << 20) + b"]}"))
    with pytest.raises(TraceError, match="expand"):
        read_trace(path)

"""The mechanisms blind batch E's first score showed missing (issue 21), each
on the batch's real recordings or on files built from them: archives unpacked,
a launcher's own clock and tag before each line, a launcher's words for how a
worker ended, an exit record beside a folder's two streams, a script naming
itself in a sentence, ``kubectl get events`` read as the platform's record."""

from __future__ import annotations

import io
import shutil
import tarfile
import zipfile
from pathlib import Path

from mwms_doctor.discover import discover
from mwms_doctor.ingest.env import sniff_env
from mwms_doctor.ingest.wrappers import detect, unwrap
from mwms_doctor.pipeline import load_tables

from .paths import FIXTURES

BATCH_E = FIXTURES / "blind" / "batch_e" / "runs"


def _workers(path: Path) -> dict[str, dict]:  # type: ignore[type-arg]
    tables, _ = load_tables(path)
    return {r["worker"]: r for r in tables.workers.to_pylist() if r["has_log"]}


def test_a_tar_gz_of_plain_files_is_read_file_by_file() -> None:
    """run_logs.tar.gz holds a.log, b.log, c.log: three workers, each named by
    its own content, each file named inside the archive (it was one log)."""
    w = _workers(BATCH_E / "e13_same_data_everywhere" / "logs")
    assert {k: v["sources"] for k, v in w.items()} == {
        f"worker:{i}": [f"run_logs.tar.gz:run_logs/{n}.log"] for i, n in enumerate("abc")
    }


def test_an_archive_of_pod_folders_keeps_the_folders_and_their_describe() -> None:
    w = _workers(BATCH_E / "e11_oom_killed" / "logs")
    assert sorted(w) == ["worker:0", "worker:1", "worker:2"]
    assert (w["worker:0"]["exit_code"], w["worker:0"]["exit_note"]) == (137, "OOMKilled")


def test_archives_never_write_outside_their_folder_and_a_bad_one_is_said(tmp_path: Path) -> None:
    log = (BATCH_E / "e08_tfconfig_stale_cluster" / "logs" / "10.0.7.21" / "stderr.log").read_bytes()
    with zipfile.ZipFile(tmp_path / "job.zip", "w") as zf:
        zf.writestr("w0/stderr.log", log)
        zf.writestr("../escape.log", log)
        zf.writestr(".git/x.log", log)
        zf.writestr(".apptainer/logs/x.log", log)  # a tool's hidden log folder: read, as on disk
    (tmp_path / "broken.tar.gz").write_bytes(b"\x1f\x8b\x08\x00" + b"not a tar" * 10)
    job = discover(tmp_path)
    assert sorted(lg.source for lg in job.logs) == ["job.zip:.apptainer/logs/x.log", "job.zip:w0/stderr.log"]
    skipped = dict(job.skipped)
    assert "job.zip:../escape.log" in skipped and "job.zip:.git/x.log" in skipped
    assert skipped["broken.tar.gz"].startswith("archive could not be unpacked")
    assert not (tmp_path.parent / "escape.log").exists()


def test_a_tar_inside_a_tar_is_read(tmp_path: Path) -> None:
    inner = io.BytesIO()
    src = BATCH_E / "e08_tfconfig_stale_cluster" / "logs"
    with tarfile.open(fileobj=inner, mode="w:gz") as tf:
        tf.add(src / "10.0.7.21", arcname="10.0.7.21")
    with tarfile.open(tmp_path / "all.tar", "w") as tf:
        info = tarfile.TarInfo("host-a.tar.gz")
        info.size = len(inner.getvalue())
        tf.addfile(info, io.BytesIO(inner.getvalue()))
    job = discover(tmp_path)
    assert sorted(lg.source for lg in job.logs) == [
        "all.tar:host-a.tar.gz:10.0.7.21/stderr.log",
        "all.tar:host-a.tar.gz:10.0.7.21/stdout.log",
    ]


def test_a_launchers_clock_and_tag_before_each_line_split_the_workers() -> None:
    """``2026-11-24 17:09:14.051 w1 <line>``: the time is the launcher's, the
    tag names the worker; lines it printed itself (``launcher ...``) are its own."""
    lines = [
        "2026-11-24 17:09:14.051 launcher started worker:0 (pid 1081)",
        *[
            f"2026-11-24 17:09:1{i}.863 w{i % 3} I0000 00:00:1795540154.862997 1084 x.cc:31] hello"
            for i in range(9)
        ],
    ]
    assert detect(lines) == ("stamp_tag",)
    u = unwrap(lines[2], ("stamp_tag",))
    assert (u.key, u.ts.isoformat() if u.ts else None) == ("w1", "2026-11-24T17:09:11.863000+00:00")
    # Python logging's own time and level are no launcher's tag.
    assert detect([f"2026-11-24 17:09:1{i},051 INFO starting step {i}" for i in range(9)]) == ()


def test_a_launchers_words_for_how_each_worker_ended_are_its_exit_records() -> None:
    """e22's launcher: 'worker:0 terminated by signal 9 (SIGKILL)' for each worker
    after the deadline: exit 137, SIGKILL, for each; the launcher is no worker."""
    w = _workers(BATCH_E / "e22_stats_writer_deadlock" / "logs")
    assert sorted(w) == ["worker:0", "worker:1", "worker:2"]
    assert {(r["exit_code"], r["exit_signal"]) for r in w.values()} == {(137, "SIGKILL")}


def test_an_exit_record_beside_a_folders_stdout_and_stderr_is_that_process(tmp_path: Path) -> None:
    w = _workers(BATCH_E / "e08_tfconfig_stale_cluster" / "logs")
    assert sorted(w) == ["worker:0", "worker:1", "worker:2"]
    assert {r["exit_code"] for r in w.values()} == {1}


def test_a_script_naming_itself_in_a_sentence_after_a_tf_line() -> None:
    """'replicas in sync: 2 (this is worker 1)' printed right after a TF line of
    the other stream: its own record, and it names the file's worker."""
    w = _workers(BATCH_E / "e20_chief_only_validation" / "logs")
    assert {k: v["sources"] for k, v in w.items()} == {"worker:0": ["a.log"], "worker:1": ["b.log"]}


def test_kubectl_get_events_is_the_platforms_record_not_a_worker(tmp_path: Path) -> None:
    events = (BATCH_E / "e01_healthy_fit_k8s" / "logs" / "events.txt").read_text()
    assert sniff_env(events, "events.txt") == "k8s_events"
    shutil.copytree(BATCH_E / "e01_healthy_fit_k8s" / "logs", tmp_path / "logs")
    tables, _ = load_tables(tmp_path / "logs")
    assert ("events.txt", "environment (k8s_events)") in tables.other_inputs
    rows = [r for r in tables.env.to_pylist() if r["key"].startswith("k8s.event.")]
    assert any(r["key"] == "k8s.event.Completed" for r in rows)
    assert not [w for w in tables.workers.column("worker").to_pylist() if "events" in w]

"""Finding worker logs in any layout, identity from content first."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from mwms_doctor.discover import discover
from mwms_doctor.engine import run_rules
from mwms_doctor.errors import UserError
from mwms_doctor.facts import establish
from mwms_doctor.ingest.job import ingest_job
from mwms_doctor.inputs import name_hint
from mwms_doctor.pipeline import load_tables, run_job

from .paths import RUNS


@pytest.mark.parametrize(
    ("path", "worker"),
    [
        ("worker-1.log", "worker:1"),
        ("tfjob-mnist-worker-3.log", "worker:3"),
        ("logs/chief-0/stdout.txt", "chief:0"),
        ("master_0.txt", "chief:0"),
        ("worker-2/ps-0.log", "ps:0"),  # the file's own name wins over its folder
        ("node-a/stdout.txt", None),
        ("worker-12.log", "worker:12"),
    ],
)
def test_name_hints(path: str, worker: str | None) -> None:
    assert name_hint(path) == worker


def _workers(job: Path) -> dict[str, dict[str, object]]:
    return {r["worker"]: r for r in ingest_job(discover(job)).workers.to_pylist()}


def test_identity_from_content_beats_misleading_names(tmp_path: Path) -> None:
    # The oom run logs MWMS's own "task_type = 'worker', task_id = N" lines.
    # Host folders say nothing; one file name even lies.
    src = RUNS / "oom" / "logs"
    (tmp_path / "node-a").mkdir()
    (tmp_path / "node-b").mkdir()
    shutil.copy(src / "worker-0.log", tmp_path / "node-a" / "stdout.txt")
    shutil.copy(src / "worker-1.log", tmp_path / "node-b" / "stdout.txt")
    shutil.copy(src / "worker-2.log", tmp_path / "worker-0.log")
    workers = _workers(tmp_path)
    assert workers["worker:0"]["sources"] == ["node-a/stdout.txt"]
    assert workers["worker:1"]["sources"] == ["node-b/stdout.txt"]
    assert workers["worker:2"]["sources"] == ["worker-0.log"]
    assert workers["worker:2"]["identity_from"] == "content"
    assert "file name suggests worker:0" in str(workers["worker:2"]["identity_note"])


def test_identity_from_server_address_and_a_peer_s_cluster_spec(tmp_path: Path) -> None:
    # Only worker-1's log says who it is; the others are found by the port they
    # listen on (Started server with target: grpc://localhost:2345N) in its spec.
    src = RUNS / "oom" / "logs"
    for i, name in enumerate(["alpha.txt", "beta.txt", "gamma.txt"]):
        text = (src / f"worker-{i}.log").read_text()
        if i != 1:
            text = "\n".join(line for line in text.splitlines() if not line.startswith("INFO:tensorflow:"))
        (tmp_path / name).write_text(text)
    workers = _workers(tmp_path)
    assert workers["worker:0"]["sources"] == ["alpha.txt"]
    assert workers["worker:0"]["identity_from"] == "cluster spec"
    assert workers["worker:2"]["sources"] == ["gamma.txt"]


def test_gzip_logs_and_exit_records_pair_up(tmp_path: Path) -> None:
    src = RUNS / "peer_killed" / "logs"
    for i in range(3):
        with gzip.open(tmp_path / f"worker-{i}.log.gz", "wb") as fh:
            fh.write((src / f"worker-{i}.log").read_bytes())
        shutil.copy(src / f"worker-{i}.exit", tmp_path / f"worker-{i}.exit")
    workers = _workers(tmp_path)
    assert workers["worker:1"]["exit_code"] == 137
    assert workers["worker:1"]["exit_signal"] == "SIGKILL"
    assert workers["worker:0"]["exit_code"] == 1


def test_missing_worker_still_appears_without_evidence() -> None:
    workers = _workers(RUNS / "never_started" / "logs")
    assert workers["worker:2"]["has_log"] is False
    assert workers["worker:2"]["sources"] == []


def test_unreadable_and_foreign_files_are_reported_not_dropped(tmp_path: Path) -> None:
    shutil.copy(RUNS / "healthy" / "logs" / "worker-0.log", tmp_path / "worker-0.log")
    (tmp_path / "broken.log.gz").write_bytes(b"\x1f\x8b\x08\x00 this is not gzip")
    (tmp_path / "notes.txt").write_text("meeting notes, nothing from TensorFlow\n")
    (tmp_path / "empty.log").write_text("")
    job = discover(tmp_path)
    reasons = dict(job.skipped)
    assert [lg.source for lg in job.logs] == ["worker-0.log"]
    assert "could not be read" in reasons["broken.log.gz"]
    assert "not a log, trace or environment dump" in reasons["notes.txt"]
    assert reasons["empty.log"] == "empty file"


def test_invalid_utf8_is_read(tmp_path: Path) -> None:
    data = (RUNS / "healthy" / "logs" / "worker-0.log").read_bytes()
    (tmp_path / "worker-0.log").write_bytes(data.replace(b"Epoch 2/3", b"Epoch 2/3\n\xff\xfe bad bytes"))
    workers = _workers(tmp_path)
    assert workers["worker:0"]["last_epoch"] == 3


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing", "no such file or directory"),
        (lambda p: p, "the directory is empty"),
    ],
)
def test_bad_input_is_a_user_error(tmp_path: Path, make, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(UserError, match=message):
        discover(make(tmp_path))


def test_unrecognised_text_is_read_not_refused_and_decides_nothing(tmp_path: Path) -> None:
    """Any non-empty text is someone's evidence: it is read, and a verdict
    says that nothing in it was recognised (never "healthy")."""
    (tmp_path / "readme.md").write_text("# hello\n")
    job = discover(tmp_path)
    assert [lg.source for lg in job.logs] == ["readme.md"]
    verdict = run_rules(establish(load_tables(tmp_path)[0])).verdict
    assert (verdict.status, verdict.cls) == ("warning", "unknown")
    assert "Nothing in this evidence was recognised" in verdict.summary


def test_only_binary_or_empty_files_are_a_user_error(tmp_path: Path) -> None:
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    (tmp_path / "empty.log").write_text("")
    with pytest.raises(UserError, match="no worker log found"):
        discover(tmp_path)


def test_tf_version_from_a_script_banner(tmp_path: Path) -> None:
    text = (RUNS / "healthy" / "logs" / "worker-0.log").read_text()
    (tmp_path / "worker-0.log").write_text("TensorFlow version: 2.21.0\n" + text)
    (tmp_path / "worker-1.log").write_text(text.replace("Epoch 1/3", "tensorflow-cpu==2.15.1\nEpoch 1/3"))
    workers = _workers(tmp_path)
    assert workers["worker:0"]["tf_version"] == "2.21.0"
    assert workers["worker:1"]["tf_version"] == "2.15.1"


def test_a_worker_log_without_tf_lines_is_kept_beside_other_workers(tmp_path: Path) -> None:
    # A worker stuck before TensorFlow starts prints only its script's lines.
    shutil.copytree(RUNS / "healthy" / "logs", tmp_path / "job")
    (tmp_path / "job" / "worker-3.log").write_text("loading feature map from /data/featmap\n")
    (tmp_path / "job" / "worker-4.json").write_text('{"loss": 0.5}\n')
    (tmp_path / "job" / "notes.txt").write_text("remember to rerun\n")
    job = discover(tmp_path / "job")
    assert "worker-3.log" in {lg.source for lg in job.logs}
    skipped = {s for s, _ in job.skipped}
    assert {"worker-4.json", "notes.txt"} <= skipped


def test_two_processes_claiming_one_task_are_split_by_file_name() -> None:
    tables, _ = load_tables(RUNS / "tf_config_duplicate_index" / "logs")
    rows = {r["worker"]: r for r in tables.workers.to_pylist()}
    assert rows["worker:2"]["sources"] == ["worker-2.log"] and rows["worker:2"]["claims_task"] == "worker:1"
    assert rows["worker:1"]["sources"] == ["worker-1.log"] and rows["worker:1"]["claims_task"] is None


def test_a_json_document_beside_the_logs_is_not_a_log(tmp_path: Path) -> None:
    """The JSON report of an earlier run left beside the logs, or a job's
    metadata that mentions ResourceExhaustedError, is no worker's log: before,
    the earlier report's OOM evidence made a phantom root worker
    (``class=oom root=?previous-report.json`` on a job where worker:1 died)."""
    job = tmp_path / "job"
    shutil.copytree(RUNS / "peer_killed" / "logs", job)
    earlier = run_job(RUNS / "oom" / "logs", tmp_path / "earlier", formats=("json",))
    shutil.copy(earlier.outputs["json"], job / "previous-report.json")
    (job / "job-meta.json").write_text(
        '{"job": "nightly-17", "status": "failed", "error": "ResourceExhaustedError: OOM when allocating"}\n'
    )
    result = run_job(job)
    assert (result.verdict["class"], result.verdict["root_workers"]) == ("peer_died", ["worker:1"])
    skipped = dict(result.tables.skipped)
    assert "a JSON document" in skipped["previous-report.json"]
    assert "a JSON document" in skipped["job-meta.json"]


def test_log_viewer_exports_in_json_are_still_logs(tmp_path: Path) -> None:
    """A log viewer's export is a log in either JSON form: one entry per line,
    or one document holding the entries (Cloud Logging's ``--format=json``)."""
    lines = (RUNS / "oom" / "logs" / "worker-1.log").read_text().splitlines()
    entries = [{"textPayload": ln, "resource": {"labels": {"pod_name": "job-worker-1"}}} for ln in lines]
    (tmp_path / "lines").mkdir()
    (tmp_path / "lines" / "export.json").write_text("\n".join(json.dumps(e) for e in entries) + "\n")
    (tmp_path / "doc").mkdir()
    (tmp_path / "doc" / "export.json").write_text(json.dumps(entries, indent=2))
    for folder in ("lines", "doc"):
        found = discover(tmp_path / folder)
        assert [lg.source for lg in found.logs] == ["export.json"], (folder, found.skipped)


def test_a_json_document_carrying_what_a_program_printed_is_read(tmp_path: Path) -> None:
    """A notebook's or a job API's JSON that holds the job's output in its
    string values (TF's lines inside strings of many lines) is read as that
    output; the cell's code beside its results is not. A document naming one
    TF line in one field stays unread."""
    lines = (RUNS / "oom" / "logs" / "worker-1.log").read_text()
    doc = {
        "paragraphs": [
            {
                "text": "%sh\npython train.py --fail-on worker:0\nsleep 1",
                "results": {"msg": [{"data": lines}]},
            }
        ]
    }
    (tmp_path / "job").mkdir()
    (tmp_path / "job" / "note.zpln").write_text(json.dumps(doc, indent=2))
    found = discover(tmp_path / "job")
    assert [lg.source for lg in found.logs] == ["note.zpln"], found.skipped
    text = found.logs[0].path.read_text()
    assert text.startswith(lines.splitlines()[0]) and "train.py --fail-on" not in text
    (tmp_path / "meta").mkdir()
    one = lines.splitlines()[-1]
    (tmp_path / "meta" / "meta.json").write_text(
        json.dumps({"job": "n-17", "last_line": one, "note": "a\nb"})
    )
    with pytest.raises(UserError, match="meta.json: a JSON document that no reader"):
        discover(tmp_path / "meta")

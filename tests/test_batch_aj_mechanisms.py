"""What blind batch AJ's first score (81.2% class, 92.9% root, one healthy job
called failed) missed, on the batch's own recordings (fixtures/blind/batch_aj,
labels committed before recording). Verdicts are held by
tests/test_blind_runs.py; these hold how the evidence is read."""

from __future__ import annotations

from mwms_doctor.pipeline import load_tables, run_job
from mwms_doctor.series import local_loss

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_aj" / "runs"


def test_a_local_loss_in_brackets_after_the_all_reduced_one_is_the_workers_own() -> None:
    row = {"text": "INFO:tensorflow:global_step = 1, loss = 12.84307 (local 12.24049)", "fields": {}}
    assert local_loss(row, named=True) == "12.24049"


def test_a_healthy_job_whose_all_reduced_loss_is_the_same_everywhere_is_healthy() -> None:
    # aj04: chief and worker print "loss = <all-reduced> (local <own>)"; their own losses differ.
    assert run_job(RUNS / "aj04" / "logs", formats=()).model.verdict["status"] == "healthy"


def test_a_csv_export_reads_its_columns_in_any_case() -> None:
    # aj12: Datadog's log explorer CSV: Date, Host, Service, Status, Tags, Message.
    tables, _ = load_tables(RUNS / "aj12" / "logs")
    named = {r["worker"] for r in tables.workers.to_pylist() if r["has_log"]}
    assert named == {"worker:0", "worker:1", "worker:2"}
    assert run_job(RUNS / "aj12" / "logs", formats=()).model.verdict["class"] == "identical_data"


def test_one_describe_file_of_several_pods_is_each_pods_own() -> None:
    # aj10: kubectl describe pods of three pods in one file: worker-2 OOMKilled (137), the others Error (1).
    tables, _ = load_tables(RUNS / "aj10" / "logs")
    exits = {r["worker"]: (r["exit_code"], r["exit_note"]) for r in tables.workers.to_pylist()}
    assert exits == {"worker:0": (1, "Error"), "worker:1": (1, "Error"), "worker:2": (137, "OOMKilled")}
    verdict = run_job(RUNS / "aj10" / "logs", formats=()).model.verdict
    assert (verdict["class"], verdict["root_workers"]) == ("oom", ["worker:2"])

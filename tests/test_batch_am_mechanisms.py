"""What blind batch AM's first score (100% class, 86.7% root, no false alarm)
missed, on the batch's own recording (fixtures/blind/batch_am, labels
committed before recording). Verdicts are held by tests/test_blind_runs.py;
this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_am" / "runs"


def test_a_print_glued_after_a_progress_bar_is_a_line_of_its_own() -> None:
    # am05: '3/8 [====>...] - ETA: 0s - loss: 12.3225[2026-11-28 03:14:30,179] train:INFO:
    # reading next shard ...' (Keras' bar ends in no newline).
    tables, _ = load_tables(RUNS / "am05" / "logs")
    texts = [r["text"] for r in tables.events.to_pylist() if r["worker"] == "worker:1"]
    assert any(t.startswith("reading next shard") for t in texts)


def test_the_worker_that_went_on_to_its_own_work_and_stopped_is_where_a_hang_began() -> None:
    # am05: worker:1 printed 'reading next shard' (its FIFO read never returned) after the
    # bar both reached; worker:0's last word is that bar. The launcher's 'worker:1 exited:
    # signal 9' is its kill.
    tables, _ = load_tables(RUNS / "am05" / "logs")
    assert {r["worker"]: r["exit_signal"] for r in tables.workers.to_pylist()} == {
        "worker:0": "SIGKILL",
        "worker:1": "SIGKILL",
    }
    v = run_job(RUNS / "am05" / "logs", formats=()).model.verdict
    assert (v["class"], v["root_workers"]) == ("hang", ["worker:1"])


def test_a_claim_outside_the_cluster_is_the_one_task_without_a_log() -> None:
    # am07: worker:2's TF_CONFIG says index 3 of workers 0-2; no other log is worker:2's.
    tables, _ = load_tables(RUNS / "am07" / "logs")
    rows = {r["worker"]: r for r in tables.workers.to_pylist() if r["has_log"]}
    assert set(rows) == {"worker:0", "worker:1", "worker:2"}
    assert "claims worker:3" in str(rows["worker:2"]["identity_note"])

"""What blind batch G's first score showed unread, on the batch's own
recordings (fixtures/blind/batch_g, labels committed before recording).
Verdicts are held by tests/test_blind_runs.py; these hold how the evidence
is read."""

from __future__ import annotations

from typing import Any

from mwms_doctor.pipeline import load_tables

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_g" / "runs"


def _workers(name: str) -> tuple[Any, dict[str, dict[str, Any]]]:
    tables, _ = load_tables(RUNS / name / "logs")
    return tables, {r["worker"]: r for r in tables.workers.to_pylist()}


def test_an_airflow_task_log_is_unwrapped_and_its_exit_line_read() -> None:
    """[2026-11-24, 20:10:11 UTC] {subprocess.py:93} INFO - <the command's line>:
    TF's own lines and the script's epochs are read inside, and Airflow's
    'Command exited with return code 0' is the task's exit."""
    tables, workers = _workers("g04_healthy_fit_quiet_airflow")
    assert all(workers[f"worker:{i}"]["exit_code"] == 0 for i in range(4))
    kinds = {r["kind"] for r in tables.events.to_pylist()}
    assert {"coord.agent_connected", "train.epoch"} <= kinds


def test_an_epoch_line_with_its_loss_and_no_total_is_progress() -> None:
    tables, _ = _workers("g04_healthy_fit_quiet_airflow")
    epochs = [r for r in tables.events.to_pylist() if r["kind"] == "train.epoch"]
    assert epochs and all("loss=" in r["text"] for r in epochs)


def test_a_ci_consoles_bracketed_times_and_tags_split_the_workers() -> None:
    """Jenkins' Timestamper and a per-shard tag: [2026-11-24T20:14:40.464Z] [shard-1] <line>."""
    _, workers = _workers("g12_uneven_shards_jenkins")
    assert sorted(w for w, r in workers.items() if r["has_log"]) == ["worker:0", "worker:1", "worker:2"]


def test_docker_inspect_says_which_container_was_killed_for_memory() -> None:
    tables, workers = _workers("g09_oom_compose")
    assert workers["worker:1"]["exit_code"] == 137 and workers["worker:1"]["exit_note"] == "OOMKilled"
    assert workers["worker:0"]["exit_code"] == 1


def test_a_journal_export_is_unwrapped_with_its_times() -> None:
    """journalctl's short format (``Nov 24 20:14:52 ml1 python3[7830]: <line>``):
    the line inside is read as the program printed it, its time (the year from
    the file) where the line has none of its own. Read after batch G's score."""
    tables, _ = _workers("g13_class_hist_mismatch_journal")
    rows = tables.events.to_pylist()
    assert all(not r["text"].startswith("Nov 24") for r in rows)
    assert all(r["ts"] is not None for r in rows)
    assert {r["ts_kind"] for r in rows} >= {"absl_epoch", "collector"}
    assert min(r["ts"] for r in rows).year == 2026


def test_hosts_counted_from_one_are_the_workers_counted_from_zero() -> None:
    """ml1..ml3 in a cluster of worker:0..2 whose leader is on ml1: ml2 and ml3
    are worker:1 and worker:2 (they were two unnamed '?' workers beside two
    empty ones)."""
    _, workers = _workers("g13_class_hist_mismatch_journal")
    assert sorted(workers) == ["worker:0", "worker:1", "worker:2"]
    assert [workers[f"worker:{i}"]["sources"] for i in range(3)] == [
        ["ml1_journal.txt"],
        ["ml2_journal.txt"],
        ["ml3_journal.txt"],
    ]


def test_a_collector_stamp_to_the_second_never_goes_before_the_record_it_follows() -> None:
    """A traceback timed only by the journal's whole second comes after the
    error timed to the microsecond before it: the first failure is the
    error's time, on the worker whose shape differed."""
    from mwms_doctor.pipeline import run_job

    v = run_job(RUNS / "g13_class_hist_mismatch_journal" / "logs").model.verdict
    assert v["root_workers"] == ["worker:2"] and v["first_failure_ts"].endswith("52.895Z")

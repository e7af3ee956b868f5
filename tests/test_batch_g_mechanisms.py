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

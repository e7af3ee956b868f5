"""What blind batch O's first score showed unread, on the batch's own
recordings (fixtures/blind/batch_o, labels committed before recording).
Verdicts are held by tests/test_blind_runs.py; these hold how the evidence
is read, each mechanism on the run that showed it."""

from __future__ import annotations

from typing import Any

from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_o" / "runs"


def _workers(name: str) -> dict[str, dict[str, Any]]:
    tables, _ = load_tables(RUNS / name / "logs")
    return {r["worker"]: r for r in tables.workers.to_pylist() if r["has_log"]}


def _verdict(name: str) -> dict[str, Any]:
    return run_job(RUNS / name / "logs").model.verdict


def test_docker_service_logs_task_at_node_tags_split_the_workers() -> None:
    # "mwms_worker1.1.<task id>@gpu-node-b    | <line>"; worker:1's first task failed, swarm ran it again.
    assert sorted(_workers("o03")) == ["worker:0", "worker:1", "worker:2"]
    assert _verdict("o03")["status"] == "healthy"


def test_closing_words_folded_into_the_last_epochs_record_count() -> None:
    # absl lines from one file:line within moments are folded into one record.
    assert _verdict("o04")["status"] == "healthy"


def test_skypilots_rank_prefixes_split_the_workers() -> None:
    assert sorted(_workers("o06")) == ["worker:0", "worker:1", "worker:2"]
    assert _verdict("o06")["root_workers"] == ["worker:2"]


def test_a_tools_hidden_log_folder_is_read() -> None:
    # Apptainer's ~/.apptainer/instances/logs/<host>/<user>/<instance>.out/.err
    assert sorted(_workers("o07")) == ["worker:0", "worker:1"]
    assert _verdict("o07")["class"] == "firewall_blocked"


def test_a_schedulers_status_file_is_no_candidate_for_the_task_without_a_log() -> None:
    # OAR: OAR.mwms_w1.81235.stdout/.stderr beside oarstat-81235.txt.
    assert _verdict("o09")["root_workers"] == ["worker:1"]


def test_a_config_line_with_shard_policy_off_and_an_input_time_by_its_unit() -> None:
    assert _verdict("o11")["class"] == "identical_data"  # "shard_policy": "OFF"
    assert _verdict("o12")["root_workers"] == ["worker:2"]  # "(input 1.002s, step 0.01s)"


def test_ctrl_c_in_every_terminal_is_the_job_stopped_not_a_crash_or_a_dead_peer() -> None:
    v = _verdict("o18")
    assert v["class"] == "hang"

"""What blind batch H's first score showed unread, on the batch's own
recordings (fixtures/blind/batch_h, labels committed before recording).
Verdicts are held by tests/test_blind_runs.py; these hold how the evidence
is read, each mechanism on the run that showed it."""

from __future__ import annotations

from typing import Any

from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_h" / "runs"


def _workers(name: str) -> tuple[Any, dict[str, dict[str, Any]]]:
    tables, _ = load_tables(RUNS / name / "logs")
    return tables, {r["worker"]: r for r in tables.workers.to_pylist()}


def test_an_error_that_ended_a_retried_attempt_is_not_the_jobs() -> None:
    """A wrapper ran worker:1 again after its FileNotFoundError; it came up
    anew, and every worker exited 0 (PBS' epilogue: Exit Status: 0)."""
    _, workers = _workers("h03_pbs_array_fit")
    assert all(r["exit_code"] == 0 for r in workers.values())
    assert run_job(RUNS / "h03_pbs_array_fit" / "logs").model.verdict["status"] == "healthy"


def test_a_batch_systems_o_and_e_files_are_one_process() -> None:
    """PBS' mwms_train.o9120.1 and mwms_train.e9120.1 (LSF's lsf.o771231 /
    lsf.e771231 alike) are one worker's two streams."""
    _, workers = _workers("h06_pbs_split")
    assert workers["worker:1"]["sources"] == ["mwms_train.e9120.1", "mwms_train.o9120.1"]


def test_the_one_process_left_is_the_one_task_without_a_log() -> None:
    _, workers = _workers("h09_lsf_loop")
    assert workers["worker:1"]["sources"] == ["lsf.e771231", "lsf.o771231"]


def test_lsfs_memory_limit_is_a_kill_for_memory() -> None:
    v = run_job(RUNS / "h09_lsf_loop" / "logs").model.verdict
    assert v["class"] == "oom" and v["root_workers"] == ["worker:1"] and "TERM_MEMLIMIT" in v["summary"]


def test_a_group_registered_with_more_tasks_than_ran_names_its_registrar() -> None:
    v = run_job(RUNS / "h06_pbs_split" / "logs").model.verdict
    assert v["class"] == "tf_config_mismatch" and v["root_workers"] == ["worker:1"]


def test_a_chain_of_losses_starts_at_the_peer_lost_first() -> None:
    """worker:2 killed (its log not collected); worker:0 loses it and exits;
    worker:1 then loses worker:0: the dead peer is worker:2."""
    v = run_job(RUNS / "h08_nohup_partial" / "logs").model.verdict
    assert v["class"] == "peer_died" and v["root_workers"] == ["worker:2"]


def test_gitlab_runner_timestamps_and_stream_tags_are_peeled_and_versions_read() -> None:
    _, workers = _workers("h10_gitlab_ts")
    assert workers["worker:0"]["tf_version"] == "2.21.0" and workers["worker:1"]["tf_version"] == "2.18.1"


def test_a_checkpoint_failing_on_the_chief_names_the_other_writer() -> None:
    v = run_job(RUNS / "h15_srun_steps_loop" / "logs").model.verdict
    assert v["class"] == "checkpoint_conflict" and v["root_workers"] == ["worker:1"]


def test_a_worker_still_in_an_epoch_the_others_ended_is_where_a_hang_began() -> None:
    v = run_job(RUNS / "h18_nohup_chief_fit" / "logs").model.verdict
    assert v["class"] == "hang" and v["root_workers"] == ["chief:0"]

"""What blind batch M's first score showed unread, on the batch's own
recordings (fixtures/blind/batch_m, labels committed before recording).
Verdicts are held by tests/test_blind_runs.py; these hold how the evidence
is read, each mechanism on the run that showed it."""

from __future__ import annotations

from typing import Any

from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_m" / "runs"


def _workers(name: str) -> dict[str, dict[str, Any]]:
    tables, _ = load_tables(RUNS / name / "logs")
    return {r["worker"]: r for r in tables.workers.to_pylist() if r["has_log"]}


def _verdict(name: str) -> dict[str, Any]:
    return run_job(RUNS / name / "logs").model.verdict


def test_tektons_task_and_step_tags_split_the_workers() -> None:
    workers = _workers("m04")
    assert sorted(workers) == ["worker:0", "worker:1", "worker:2"]
    assert workers["worker:2"]["tf_version"] == "2.19.0"


def test_every_worker_saying_auto_sharding_is_off_is_identical_data() -> None:
    v = _verdict("m05")
    assert (v["status"], v["class"]) == ("warning", "identical_data")


def test_an_input_wait_printed_as_name_and_number_shows_the_straggler() -> None:
    # "data_wait 7.03s" (a space, no '='); and the worker whose peer left at
    # shutdown still printed its closing line after that peer's error.
    v = _verdict("m06")
    assert (v["class"], v["root_workers"]) == ("straggler", ["worker:3"])


def test_the_chiefs_failed_save_names_every_other_writer_when_nothing_says_which() -> None:
    assert _verdict("m09")["root_workers"] == ["worker:1", "worker:2"]


def test_the_worker_whose_last_words_no_other_said_is_where_a_hang_began() -> None:
    assert _verdict("m12")["root_workers"] == ["worker:1"]


def test_ad_hoc_ansibles_host_sections_are_the_hosts_logs() -> None:
    v = _verdict("m14")
    assert (v["class"], v["root_workers"]) == ("handshake_deadlock", ["worker:2"])


def test_a_retried_run_in_its_own_folder_ends_the_worker_as_its_last_run_did() -> None:
    # Mesos: runs/<first>/ ended with status 1, runs/<second>/ with 0.
    assert _workers("m17")["worker:1"]["exit_code"] == 0
    assert _verdict("m17")["status"] == "healthy"


def test_an_experiment_trackers_run_record_says_how_the_run_ended() -> None:
    # Sacred's run.json ("status": "COMPLETED") beside each worker's cout.txt.
    workers = _workers("m18")
    assert {r["exit_code"] for r in workers.values()} == {0}
    assert _verdict("m18")["status"] == "healthy"

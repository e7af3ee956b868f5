"""What blind batch L's first score showed unread, on the batch's own
recordings (fixtures/blind/batch_l, labels committed before recording).
Verdicts are held by tests/test_blind_runs.py; these hold how the evidence
is read, each mechanism on the run that showed it."""

from __future__ import annotations

from typing import Any

from mwms_doctor.discover import discover
from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_l" / "runs"


def _workers(name: str) -> dict[str, dict[str, Any]]:
    tables, _ = load_tables(RUNS / name / "logs")
    return {r["worker"]: r for r in tables.workers.to_pylist() if r["has_log"]}


def _verdict(name: str) -> dict[str, Any]:
    return run_job(RUNS / name / "logs").model.verdict


def test_a_process_managers_out_and_error_logs_are_one_worker_and_its_config_no_log() -> None:
    # pm2: <app>-out.log and <app>-error.log, "2026-11-25T00:07:12: " stamps, ecosystem.config.js.
    workers = _workers("l03")
    assert sorted(workers) == ["worker:0", "worker:1", "worker:2"]
    assert all(len(r["sources"]) == 2 for r in workers.values())
    skipped = dict(discover(RUNS / "l03" / "logs").skipped)
    assert skipped["ecosystem.config.js"] == "a program or configuration file, not a log"
    # worker:1's first attempt failed, pm2 ran it again and it finished: no failure.
    assert _verdict("l03")["status"] == "healthy"


def test_an_export_names_its_writers_by_host_not_by_the_file_every_host_wrote() -> None:
    # Splunk: source=/var/log/mwms/trainer.{out,err} on every host, host=ml-train-0N.
    assert sorted(_workers("l04")) == ["chief:0", "worker:0", "worker:1", "worker:2"]
    assert _verdict("l04")["status"] == "healthy"


def test_sterns_pod_container_and_time_split_the_pods() -> None:
    assert sorted(_workers("l05")) == ["worker:0", "worker:1", "worker:2"]
    assert _verdict("l05")["root_workers"] == ["worker:2"]


def test_ansibles_registered_output_is_each_hosts_log_and_a_second_claimant_is_the_missing_task() -> None:
    workers = _workers("l06")
    assert sorted(workers) == ["worker:0", "worker:1", "worker:2"]
    assert workers["worker:2"]["claims_task"] == "worker:1"  # the host that could not bind worker:1's port
    assert workers["worker:2"]["exit_code"] == 1  # the task's rc
    assert _verdict("l06")["class"] == "tf_config_mismatch"


def test_a_spark_drivers_lost_executors_make_it_a_launcher_not_a_worker() -> None:
    workers = _workers("l08")
    assert "driver/driver.log" not in {s for r in workers.values() for s in r["sources"]}
    assert _verdict("l08")["class"] == "peer_died"


def test_fluent_bits_stdout_records_are_read_by_their_tags() -> None:
    assert sorted(_workers("l11")) == ["worker:0", "worker:1", "worker:2"]
    assert _verdict("l11")["status"] != "failure"  # it finished (slowly)


def test_prefects_task_runs_are_the_workers() -> None:
    assert sorted(_workers("l15")) == ["chief:0", "worker:0", "worker:1", "worker:2"]
    assert _verdict("l15")["root_workers"] == ["worker:2"]


def test_nextflows_hidden_command_logs_are_read_and_a_hang_is_measured() -> None:
    assert sorted(_workers("l16")) == [
        "worker:0",
        "worker:1",
        "worker:2",
    ]  # "starting worker:N" in .command.out
    v = _verdict("l16")
    assert v["class"] == "hang" and v["root_workers"] == ["worker:0"]
    assert "no progress for 0 s" not in v["summary"]


def test_a_batch_services_task_record_gives_the_tasks_exit_code() -> None:
    # Azure Batch's task.json beside each task's stdout.txt/stderr.txt: "executionInfo": {"exitCode": 137}.
    workers = _workers("l09")
    assert workers["worker:1"]["exit_code"] == 137
    assert {workers[w]["exit_code"] for w in ("chief:0", "worker:0")} == {1}

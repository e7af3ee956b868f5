"""What blind batch N's first score showed unread, on the batch's own
recordings (fixtures/blind/batch_n, labels committed before recording).
Verdicts are held by tests/test_blind_runs.py; these hold how the evidence
is read, each mechanism on the run that showed it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_n" / "runs"


def _workers(name: str) -> dict[str, dict[str, Any]]:
    tables, _ = load_tables(RUNS / name / "logs")
    return {r["worker"]: r for r in tables.workers.to_pylist() if r["has_log"]}


def _verdict(name: str) -> dict[str, Any]:
    return run_job(RUNS / name / "logs").model.verdict


def test_a_log_behind_iso_stamps_is_no_kernel_log_and_inspect_false_is_no_oom() -> None:
    # podman logs --timestamps ("2026-...+00:00 I0000 ..."), podman inspect's "OOMKilled": false.
    assert sorted(_workers("n03")) == ["chief:0", "worker:0", "worker:1"]
    assert _verdict("n03")["root_workers"] == ["worker:1"]


def test_a_console_that_merged_several_processes_is_no_ones_log() -> None:
    # Hydra multirun: each job's train.log names its task; the console merged every
    # process's stderr (two gRPC servers in one untagged stream).
    workers = _workers("n05")
    assert all("console.log" not in r["sources"] for r in workers.values())
    v = _verdict("n05")
    assert (v["class"], v["root_workers"]) == ("handshake_deadlock", ["worker:2"])


def test_an_opentelemetry_file_export_is_read_by_host() -> None:
    assert sorted(_workers("n09")) == ["worker:0", "worker:1", "worker:2"]


def test_a_lone_chief_tag_and_a_print_folded_into_a_record_name_their_workers() -> None:
    # npm concurrently: "[chief] ...", "[w0] ..."; "starting worker:1" after a TF record.
    assert sorted(_workers("n11")) == ["chief:0", "worker:0", "worker:1"]
    assert _verdict("n11")["status"] == "healthy"


def test_cron_mails_are_each_hosts_log_and_reading_all_records_is_identical_data() -> None:
    workers = _workers("n14")
    assert sorted(workers) == ["worker:0", "worker:1", "worker:3"]  # worker:2's mail is missing
    assert _verdict("n14")["class"] == "identical_data"


def test_a_peer_lost_when_the_whole_job_was_stopped_is_no_death() -> None:
    # bazel test shards timed out: SIGTERM on most workers at once.
    assert _verdict("n15")["class"] == "hang"


def test_a_junit_reports_test_cases_are_the_processes_output() -> None:
    assert sorted(_workers("n16")) == ["chief:0", "worker:0", "worker:1"]
    assert _verdict("n16")["root_workers"] == ["worker:1"]


def test_a_sectioned_log_is_split_and_a_failed_attempt_outside_the_cluster_fails_nothing() -> None:
    # pueue: "--- Task 1: Failed (1) ---" was worker:1's first attempt, run again as task 2.
    assert {"worker:0", "worker:1"} <= set(_workers("n19"))
    assert _verdict("n19")["status"] == "healthy"


def test_a_junit_report_cut_short_is_read_as_text_not_a_crash(tmp_path: Path) -> None:
    report = (RUNS / "n16" / "logs" / "reports" / "junit-e2e.xml").read_text()
    (tmp_path / "junit.xml").write_text(report[: len(report) // 2])  # a CI step killed mid-write
    v = run_job(tmp_path).model.verdict
    assert v["status"] in ("failure", "warning", "healthy")  # an answer, no traceback

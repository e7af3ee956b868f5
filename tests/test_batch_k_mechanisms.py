"""What blind batch K's first score showed unread, on the batch's own
recordings (fixtures/blind/batch_k, labels committed before recording).
Verdicts are held by tests/test_blind_runs.py; these hold how the evidence
is read, each mechanism on the run that showed it."""

from __future__ import annotations

from typing import Any

from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_k" / "runs"


def _workers(name: str) -> dict[str, dict[str, Any]]:
    tables, _ = load_tables(RUNS / name / "logs")
    return {r["worker"]: r for r in tables.workers.to_pylist() if r["has_log"]}


def _verdict(name: str) -> dict[str, Any]:
    return run_job(RUNS / name / "logs").model.verdict


def test_a_notebooks_outputs_are_its_workers_logs() -> None:
    assert sorted(_workers("k02")) == ["chief:0", "worker:0", "worker:1"]
    assert _verdict("k02")["status"] == "healthy"


def test_an_ssh_fan_outs_user_at_host_tags_are_workers_never_a_pip_freeze() -> None:
    assert sorted(_workers("k03")) == ["worker:0", "worker:1", "worker:2"]
    assert _verdict("k03")["status"] == "healthy"  # a retried start-up, every host exit=0


def test_structlogs_event_and_nested_fields_are_read() -> None:
    assert _verdict("k04")["status"] == "healthy"  # every worker's last epoch, together


def test_a_ci_consoles_launcher_lines_around_tagged_workers() -> None:
    """TeamCity ([22:36:58]W:\\t [Step 2/2] [w0] ...): the workers split though a
    third of the lines are the CI's own; the never-started worker is found."""
    v = _verdict("k05")
    assert sorted(_workers("k05")) == ["worker:0", "worker:1"]
    assert v["class"] == "handshake_deadlock" and v["root_workers"] == ["worker:2"]


def test_gnu_parallels_tab_tags_split_the_workers() -> None:
    assert sorted(_workers("k06")) == ["worker:0", "worker:1", "worker:2"]


def test_an_epoch_line_with_steps_is_an_epoch() -> None:
    assert _verdict("k10")["class"] == "version_skew"


def test_polyaxon_entries_value_and_pod() -> None:
    assert sorted(_workers("k11")) == ["worker:0", "worker:1"]


def test_tai64n_stamps_are_peeled() -> None:
    v = _verdict("k17")
    assert v["class"] == "worker_exception" and v["root_workers"] == ["chief:0"]


def test_determined_rank_tags_and_bamboo_build_logs() -> None:
    assert sorted(_workers("k09")) == ["worker:0", "worker:1"]
    v = _verdict("k13")
    assert v["class"] == "data_exhaustion" and v["root_workers"] == ["worker:2"]

"""What blind batch AR's first score (93.8% class, 80.0% root, no false
alarm) missed, on the batch's own recording (fixtures/blind/batch_ar, labels
committed before recording). Verdicts are held by tests/test_blind_runs.py;
this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.pipeline import load_tables

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_ar" / "runs"


def _verdict(run: str) -> tuple[str, list[str], str]:
    return verdict(RUNS / run / "logs")


def test_an_export_whose_message_lies_inside_an_envelope_is_read() -> None:
    # ar16: OCI Logging's search export: [{"datetime", "logContent": {"data": {"message",
    # "tags": {"task"}}, "source": "regress-worker-0"}}]; its events' resourceName names each.
    tables, _ = load_tables(RUNS / "ar16" / "logs")
    named = {r["worker"] for r in tables.workers.to_pylist() if r["has_log"]}
    assert named == {"chief:0", "worker:0", "worker:1"}
    assert _verdict("ar16")[:2] == ("preemption", ["worker:0"])


def test_a_file_with_no_line_of_a_training_job_is_no_task_by_elimination() -> None:
    # ar06: a support bundle's collected-at.txt ('2026-11-28T04:08:48Z') was taken for the
    # one task without a log (worker:2, whose pod stayed Pending).
    tables, _ = load_tables(RUNS / "ar06" / "logs")
    rows = {r["worker"]: r for r in tables.workers.to_pylist()}
    assert not rows["worker:2"]["has_log"]
    assert _verdict("ar06")[:2] == ("handshake_deadlock", ["worker:2"])


def test_compose_ps_after_the_command_that_printed_it() -> None:
    # ar05: '$ docker compose -p regress ps -a' then the table: each service 'Exited (137)'.
    tables, _ = load_tables(RUNS / "ar05" / "logs")
    assert {r["worker"]: r["exit_code"] for r in tables.workers.to_pylist()} == {
        "chief:0": 137,
        "worker:0": 137,
        "worker:1": 137,
    }

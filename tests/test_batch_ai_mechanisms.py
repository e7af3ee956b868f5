"""What blind batch AI's first score (93.8% class, 93.3% root) missed, on the
batch's own recording (fixtures/blind/batch_ai, labels committed before
recording). Verdicts are held by tests/test_blind_runs.py; these hold how the
evidence is read."""

from __future__ import annotations

from mwms_doctor.ingest.grpc import rpc_rows_from_text
from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_ai" / "runs"


def test_a_scripts_own_connection_check_is_a_connection_to_that_address() -> None:
    rows = rpc_rows_from_text(
        "2026-11-28 01:14:02,156 [16396] WARNING  peer check 127.0.0.1:65075 failed: [Errno 111] Connection refused"
    )
    assert [(r["peer"], r["reason"], r["via"]) for r in rows] == [
        ("127.0.0.1:65075", "connection_refused", "script")
    ]


def test_a_scripts_connection_to_no_task_of_the_cluster_is_no_rpc_row() -> None:
    # ab01's metrics push to 127.0.0.1:58039, refused: no task listens there.
    tables, _ = load_tables(FIXTURES / "blind" / "batch_ab" / "runs" / "ab01" / "logs")
    assert [r for r in tables.rpc.to_pylist() if r["via"] == "script"] == []


def test_a_launchers_kill_at_its_deadline_is_each_workers_end() -> None:
    # ai06: "launch: chief-0 on 10.12.0.5: killed by launcher (no progress for 30s, deadline reached)".
    tables, _ = load_tables(RUNS / "ai06" / "logs")
    assert {r["worker"]: r["exit_signal"] for r in tables.workers.to_pylist()} == {
        "chief:0": "SIGKILL",
        "worker:0": "SIGKILL",
    }


def test_a_worker_refused_by_a_listening_leader_is_a_blocked_path_not_a_missing_task() -> None:
    # ai06: worker:0 (in a network namespace of its own) is refused by the chief's port
    # five times while the chief listens and waits for it; both killed at the deadline.
    verdict = run_job(RUNS / "ai06" / "logs", formats=()).model.verdict
    assert (verdict["status"], verdict["class"]) == ("failure", "firewall_blocked")

"""What blind batch AZ's first score (87.5% class, 78.6% root, no false
alarm) missed, on the batch's own recording (fixtures/blind/batch_az, labels
committed before recording). Verdicts are held by tests/test_blind_runs.py;
this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.pipeline import load_tables

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_az" / "runs"


def test_a_kernel_logs_entries_each_one_printed_line_are_all_read() -> None:
    # az10: a Kaggle kernel log export, a JSON list of {"stream_name", "time", "data":
    # "[worker-1] ...\n"}: the script's own lines (worker:1's FileNotFoundError traceback)
    # were dropped where only TF's lines were taken.
    tables, _ = load_tables(RUNS / "az10" / "logs")
    assert any(
        "FileNotFoundError" in r["text"] and r["worker"] == "worker:1" for r in tables.events.to_pylist()
    )
    assert verdict(RUNS / "az10" / "logs") == ("worker_exception", ["worker:1"], "failure")


def test_azure_monitors_container_log_export_is_read_by_pod() -> None:
    # az12: Log Analytics' ContainerLogV2 CSV ('TimeGenerated [UTC]', 'PodName',
    # 'LogMessage', "11/28/2026, 6:59:25.105 AM"), newest first.
    tables, _ = load_tables(RUNS / "az12" / "logs")
    named = {
        r["worker"] for r in tables.workers.to_pylist() if r["has_log"] and not r["worker"].startswith("?")
    }
    assert named == {"chief:0", "worker:0", "worker:1"}
    assert all(r["ts"] is not None for r in tables.events.to_pylist() if r["worker"] == "worker:0")
    assert verdict(RUNS / "az12" / "logs") == ("preemption", ["worker:0"], "failure")

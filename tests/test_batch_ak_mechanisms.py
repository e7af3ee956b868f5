"""What blind batch AK's first score (87.5% class, 80.0% root, one healthy job
called failed) missed, on the batch's own recording (fixtures/blind/batch_ak,
labels committed before recording). Verdicts are held by
tests/test_blind_runs.py; this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_ak" / "runs"


def test_honchos_instances_of_one_procfile_name_are_three_workers() -> None:
    # ak15: a Procfile of three lines named "worker": honcho tags them worker.1, worker.2,
    # worker.3, and its own "system | worker.3 stopped (rc=0)" says how each ended.
    tables, _ = load_tables(RUNS / "ak15" / "logs")
    exits = {r["worker"]: r["exit_code"] for r in tables.workers.to_pylist()}
    assert exits == {"worker:0": 0, "worker:1": 0, "worker:2": 0}
    assert run_job(RUNS / "ak15" / "logs", formats=()).model.verdict["status"] == "healthy"

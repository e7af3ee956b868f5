"""What blind batch AG's first score (93.8% class, 92.9% root, one stuck job
called healthy) missed, on the batch's own recording (fixtures/blind/batch_ag,
labels committed before recording). Verdicts are held by
tests/test_blind_runs.py; this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.pipeline import run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_ag" / "runs"


def test_a_worker_left_mid_epoch_by_a_peer_with_shorter_epochs_is_no_healthy_job() -> None:
    # ag11: worker:1's epochs are 7 steps, worker:0's 16; worker:1 says "training complete"
    # and waits (alive, its connections open), worker:0's log ends in epoch 2 with no
    # error. No time stamps, no kill record: nothing shows that it failed, but it is no
    # healthy job either: uneven input, said inconclusive, naming the short worker.
    verdict = run_job(RUNS / "ag11" / "logs", formats=()).model.verdict
    assert (verdict["status"], verdict["class"], verdict["root_workers"]) == (
        "warning",
        "data_exhaustion",
        ["worker:1"],
    )
    assert "worker:0 never completed its own training" in verdict["summary"]

"""What blind batch Y's first score (87.5% class, 78.6% root) missed, on the
batch's own recordings (fixtures/blind/batch_y, labels committed before
recording). Verdicts are held by tests/test_blind_runs.py; these hold how the
evidence is read, each mechanism on the run that showed it."""

from __future__ import annotations

from mwms_doctor.pipeline import run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_y" / "runs"


def test_an_error_its_worker_trained_on_after_was_survived() -> None:
    # y01: worker:1 logs "metrics push to http://pushgateway... failed: [Errno 111]
    # Connection refused; will retry at next epoch" at ERROR in epoch 2, then trains
    # epochs 3 and 4 with the others; every worker reaches Epoch 4/4.
    result = run_job(RUNS / "y01" / "logs", formats=())
    assert result.model.verdict["status"] == "healthy"
    roles = {e.role for e in result.model.unexplained}
    assert "the worker trained on after it and finished" in roles


def test_a_connection_reset_its_worker_trained_on_after_lost_no_peer() -> None:
    # y04: worker:3's shard read fails with "[Errno 104] Connection reset by peer;
    # retrying step 7" and succeeds on retry; all four workers train to the end. Under
    # MultiWorkerMirroredStrategy no step completes without every worker: no peer died.
    v = run_job(RUNS / "y04" / "logs", formats=()).model.verdict
    assert v["status"] == "healthy"


def test_what_is_said_as_the_job_is_stopped_is_no_ones_last_words() -> None:
    # y05: every host's journal ends in systemd's "Service reached runtime time limit.
    # Stopping." and its kill; before that, worker:2 alone went on to "flushing metric
    # sink before continuing" after the "Epoch 3/5" every worker printed last.
    v = run_job(RUNS / "y05" / "logs", formats=()).model.verdict
    assert (v["class"], v["root_workers"]) == ("hang", ["worker:2"])

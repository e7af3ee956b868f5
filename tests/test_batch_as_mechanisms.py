"""What blind batch AS's first score (93.8% class, 92.9% root, no false
alarm) missed, on the batch's own recording (fixtures/blind/batch_as, labels
committed before recording). Verdicts are held by tests/test_blind_runs.py;
this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.pipeline import run_job

from .paths import FIXTURES

BLIND = FIXTURES / "blind"


def test_the_worker_whose_script_counted_the_groups_other_size_registered_it() -> None:
    # as06 (and AN's an07): 'Device .../task:1 ... is joining a group with size3, but that
    # group has size 4'; worker:2's script said 'strategy ready replicas=4', the others 3.
    for run in (BLIND / "batch_as" / "runs" / "as06", BLIND / "batch_an" / "runs" / "an07"):
        v = run_job(run / "logs", formats=()).model.verdict
        assert (v["class"], v["root_workers"]) == ("tf_config_mismatch", ["worker:2"])

"""What looking at batch AE's reports showed (its first score, 100% class and
93.3% root, missed one root of the known kind): on the batch's own recordings."""

from __future__ import annotations

from mwms_doctor.ingest.identity import unit_of
from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_ae" / "runs"


def test_a_host_wrappers_log_is_its_folders_workers() -> None:
    # ae10: each host folder holds train.log and the host wrapper's runner.log ("run.sh[901]:
    # train.py exited with status 137"). The report showed three unnamed parts beside the
    # three workers; the wrapper's exit lines are its worker's exit.
    assert unit_of("ml-c03/runner.log") == unit_of("ml-c03/train.log")
    tables, _ = load_tables(RUNS / "ae10" / "logs")
    workers = {r["worker"]: r for r in tables.workers.to_pylist()}
    assert not any(w.startswith("?") for w in workers)
    assert {w: r["exit_code"] for w, r in workers.items()} == {"chief:0": 1, "worker:0": 1, "worker:1": 137}
    assert workers["worker:1"]["pid"] == 29274  # absl's, though the wrapper's file comes first


def test_the_kernels_oom_kill_of_its_pid_says_why_beside_a_wrappers_exit() -> None:
    # ae10: kern.log "Killed process 29274 (python)"; the wrapper's "exited with status 137".
    model = run_job(RUNS / "ae10" / "logs", formats=()).model
    assert (model.verdict["class"], model.verdict["root_workers"]) == ("oom", ["worker:1"])
    assert model.verdict["confidence"] >= 0.85

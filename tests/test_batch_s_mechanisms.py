"""What blind batch S's first score showed unread, on the batch's own
recordings (fixtures/blind/batch_s, labels committed before recording).
Verdicts are held by tests/test_blind_runs.py; these hold how the evidence
is read, each mechanism on the run that showed it."""

from __future__ import annotations

from typing import Any

from mwms_doctor.facts import establish
from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_s" / "runs"


def _verdict(name: str) -> dict[str, Any]:
    return run_job(RUNS / name / "logs").model.verdict


def test_pods_running_when_their_status_was_taken_had_not_finished() -> None:
    # s07: an OpenShift must-gather while the job hung: every pod's yaml says state running;
    # every worker's log ends at "epoch 1 step 10" within moments of the others'.
    tables, _ = load_tables(RUNS / "s07" / "logs")
    states = {r["worker"]: r["value"] for r in tables.env.to_pylist() if r["key"] == "k8s.state"}
    assert states == {"chief:0": "Running", "worker:0": "Running", "worker:1": "Running"}
    assert not establish(tables).facts.finished
    assert _verdict("s07")["class"] == "hang"


def test_a_later_attempts_record_says_how_a_worker_ended() -> None:
    # s14: attempt-1/status.json says exit 1 for both, attempt-2/status.json exit 0; attempt 2 finished.
    w = {r["worker"]: r for r in load_tables(RUNS / "s14" / "logs")[0].workers.to_pylist()}
    assert (w["worker:0"]["exit_code"], w["worker:1"]["exit_code"]) == (0, 0)
    assert _verdict("s14")["status"] == "healthy"


def test_a_launcher_that_pairs_ranks_and_tasks_names_each_rank_file() -> None:
    # s13: "rank 3 (worker:2) started on spot-9fadb"; ranks/rank-3.txt caught the SIGTERM.
    v = _verdict("s13")
    assert (v["class"], v["root_workers"]) == ("preemption", ["worker:2"])


def test_bolts_per_target_sections_are_dedented_and_split() -> None:
    # s05: "Finished on gpu-12.lab.internal:" then "  STDOUT:" and each line indented by four spaces.
    tables, _ = load_tables(RUNS / "s05" / "logs")
    named = sorted(r["worker"] for r in tables.workers.to_pylist() if r["has_log"])
    assert named == ["worker:0", "worker:1", "worker:2"]


def test_a_launchers_rank_exits_name_their_tasks_and_a_negative_code_is_a_signal() -> None:
    # s13: "rank 3 exited rc=-9" (Python's subprocess: killed by signal 9) is worker:2's end.
    w = {r["worker"]: r for r in load_tables(RUNS / "s13" / "logs")[0].workers.to_pylist()}
    assert (w["worker:2"]["exit_code"], w["worker:2"]["exit_signal"]) == (137, "SIGKILL")
    assert w["chief:0"]["exit_code"] == 1 and "rank 0" in w["chief:0"]["exit_note"]

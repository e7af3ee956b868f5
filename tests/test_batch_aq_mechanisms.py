"""What blind batch AQ's first score (87.5% class, 86.7% root, no false
alarm) missed, on the batch's own recording (fixtures/blind/batch_aq, labels
committed before recording). Verdicts are held by tests/test_blind_runs.py;
this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_aq" / "runs"


def test_a_wrappers_clock_steadily_apart_from_the_process_is_put_on_the_process_clock() -> None:
    # aq15: each line stamped by the host ('2026-11-28 04:04:40.179 Epoch 3/8'), the host's
    # clock 5.2 s ahead of the TF records' own; worker:1's last words were read as after
    # the others' errors, so it looked alive when they lost it.
    tables, _ = load_tables(RUNS / "aq15" / "logs")
    rows = {r["worker"]: r for r in tables.workers.to_pylist()}
    errors = [
        r["ts"] for r in tables.events.to_pylist() if r["worker"] == "chief:0" and r["kind"] == "peer.lost"
    ]
    assert rows["worker:1"]["last_ts"] < min(errors)


def test_a_runners_status_file_gives_the_exit_and_the_task() -> None:
    # aq15: each host's run-status: 'task=worker:1', 'exit=143', 'ended=...'.
    tables, _ = load_tables(RUNS / "aq15" / "logs")
    assert {r["worker"]: r["exit_code"] for r in tables.workers.to_pylist()} == {
        "chief:0": 1,
        "worker:0": 1,
        "worker:1": 143,
    }


def test_one_worker_ended_by_sigterm_before_the_others_failed_was_preempted() -> None:
    # aq15: worker:1 alone exits 143, its log stopping without an error; the others then lose it.
    v = run_job(RUNS / "aq15" / "logs", formats=()).model.verdict
    assert (v["class"], v["root_workers"]) == ("preemption", ["worker:1"])

"""What blind batch BE's first score (93.8% class, 85.7% root, no false
alarm) missed, on the batch's own recording (fixtures/blind/batch_be, labels
committed before recording). Verdicts are held by tests/test_blind_runs.py;
this holds how the evidence is read."""

from __future__ import annotations

from pathlib import Path

from mwms_doctor.pipeline import load_tables

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_be" / "runs"


def test_one_workers_own_compute_time_standing_apart_is_the_straggler() -> None:
    # be08: VictoriaLogs JSON lines; each worker's step records carry 'compute_s' (its
    # own part of the step) and 'step_s' (with the wait for the others): worker:2's
    # compute_s is ~0.6 against ~0.1, while every step_s is alike.
    assert verdict(RUNS / "be08" / "logs") == ("straggler", ["worker:2"], "warning")


def test_a_ci_steps_console_is_the_runners_and_no_worker(tmp_path: Path) -> None:
    # be03: ci-step.txt holds '$ timeout 36 docker compose up', the runner's 'sending
    # signal KILL' and 'exit status 137': it was read as a third, unnamed worker.
    tables, _ = load_tables(RUNS / "be03" / "logs")
    named = {r["worker"] for r in tables.workers.to_pylist() if r["has_log"]}
    assert named == {"chief:0", "worker:0"}
    assert "?ci-step" not in {r["worker"] for r in tables.events.to_pylist()}
    assert verdict(RUNS / "be03" / "logs") == ("hang", ["worker:0"], "failure")


def test_of_two_workers_the_one_that_began_work_of_its_own_is_where_the_hang_began(tmp_path: Path) -> None:
    # be03 without its CI console: both workers' last progress is 'epoch end epoch=2'; then
    # worker:0 alone logs 'fetching next shard from object store ... timeout=none', a line
    # the chief never printed. The chief did not stop 'behind' it: it waited for worker:0.
    for f in (RUNS / "be03" / "logs").iterdir():
        if f.name != "ci-step.txt":
            (tmp_path / f.name).write_bytes(f.read_bytes())
    assert verdict(tmp_path) == ("hang", ["worker:0"], "failure")

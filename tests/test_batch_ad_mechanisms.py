"""What blind batch AD's first score (81.2% class, 86.7% root) missed, on the
batch's own recordings (fixtures/blind/batch_ad, labels committed before
recording). Verdicts are held by tests/test_blind_runs.py; these hold how the
evidence is read, each mechanism on the run that showed it."""

from __future__ import annotations

from mwms_doctor.ingest.templates import classify
from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_ad" / "runs"


def _exits(run: str) -> dict[str, int | None]:
    tables, _ = load_tables(RUNS / run / "logs")
    return {
        r["worker"]: r["exit_code"] for r in tables.workers.to_pylist() if not r["worker"].startswith("?")
    }


def test_a_job_managers_line_naming_a_task_and_its_exit_is_that_tasks_end() -> None:
    # ad13: TonY's application master: "Task worker:1 finished with exit code 0"; its
    # "Launching task worker:0 in container ..." lines name several tasks: it is no task.
    assert _exits("ad13") == {"worker:0": 0, "worker:1": 0, "worker:2": 0}


def test_a_traceback_the_script_logged_and_went_on_from_is_no_death() -> None:
    # ad13: worker:0 logs "metrics push failed (step 18), will retry next epoch" with
    # its URLError traceback, then "training finished in 5.7s": a healthy job.
    assert run_job(RUNS / "ad13" / "logs", formats=()).model.verdict["status"] == "healthy"


def test_several_containers_inspected_at_once_are_each_their_tasks() -> None:
    # ad07: one `docker inspect` of both containers; worker0's State says OOMKilled, 137.
    assert _exits("ad07") == {"chief:0": 1, "worker:0": 137}
    verdict = run_job(RUNS / "ad07" / "logs", formats=()).model.verdict
    assert (verdict["class"], verdict["root_workers"]) == ("oom", ["worker:0"])


def test_a_scripts_own_sigterm_handler_saying_so_is_a_sigterm_caught() -> None:
    # ad15: "[...] WARNING received SIGTERM, shutting down" on the spot node's worker.
    assert classify("received SIGTERM, shutting down")[0] == "tf.sigterm_caught"
    verdict = run_job(RUNS / "ad15" / "logs", formats=()).model.verdict
    assert (verdict["class"], verdict["root_workers"]) == ("preemption", ["worker:1"])

"""What blind batch I's first score showed unread, on the batch's own
recordings (fixtures/blind/batch_i, labels committed before recording).
Verdicts are held by tests/test_blind_runs.py; these hold how the evidence
is read, each mechanism on the run that showed it."""

from __future__ import annotations

from typing import Any

from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_i" / "runs"


def _workers(name: str) -> tuple[Any, dict[str, dict[str, Any]]]:
    tables, _ = load_tables(RUNS / name / "logs")
    return tables, {r["worker"]: r for r in tables.workers.to_pylist()}


def test_a_process_number_before_the_extension_names_the_process() -> None:
    """HTCondor's job.<cluster>.<proc>.err: proc 1's and proc 2's stderr are
    two workers (they were one unnamed '?job')."""
    _, workers = _workers("i16")
    assert sorted(workers) == ["worker:0", "worker:1", "worker:2"]
    assert workers["worker:1"]["sources"] == ["job.48512.1.err", "job.48512.1.out"]


def test_htcondors_event_log_says_how_each_process_ended() -> None:
    """'005 (48121.002.000) ... Job terminated. (1) Normal termination (return
    value 0)': the process whose files carry 48121.2 exited 0; a process run
    twice ended as its last run did."""
    tables, workers = _workers("i03")
    assert {w: r["exit_code"] for w, r in workers.items()} == {f"worker:{i}": 0 for i in range(4)}
    assert run_job(RUNS / "i03" / "logs").model.verdict["status"] == "healthy"


def test_a_log_that_reports_several_workers_ends_is_a_launchers() -> None:
    """Azure ML's lifecycler ('process worker:2 exited with code -9') is no
    worker: its lines are the workers' exit records."""
    _, workers = _workers("i08")
    assert "?lifecycler" not in workers
    # -9 is Python's subprocess convention for a child killed by signal 9: the shell's 137.
    assert (workers["worker:2"]["exit_code"], workers["worker:2"]["exit_signal"]) == (137, "SIGKILL")
    assert workers["worker:0"]["exit_code"] == 1


def test_a_drivers_report_of_its_childrens_end_is_no_workers_exception() -> None:
    """Spark's driver ('python process exited with code 1' in a
    SparkException) runs no TensorFlow: a launcher, whose exception is not
    the cause; the worker with the stale cluster size is."""
    v = run_job(RUNS / "i06" / "logs").model.verdict
    assert v["class"] == "tf_config_mismatch" and v["root_workers"] == ["worker:1"]


def test_a_platform_table_row_names_its_pod() -> None:
    """kubectl get pods: 'seqrec-train-worker-1 0/1 OOMKilled' is worker:1's, not a launcher's."""
    v = run_job(RUNS / "i09" / "logs").model.verdict
    assert v["class"] == "oom" and v["root_workers"] == ["worker:1"]


def test_a_leaders_earlier_run_is_a_restart_of_the_job_not_a_preemption() -> None:
    """A TFJob restarted by its operator: every pod's .previous.log beside its
    log, each task registered once per run of the coordination service."""
    v = run_job(RUNS / "i17" / "logs").model.verdict
    assert v["class"] == "worker_exception" and v["root_workers"] == ["worker:3"]


def test_a_clock_and_a_rank_stream_tag_split_the_workers_and_the_launchers_exits() -> None:
    """'21:43:45.863 w0.o| <line>' and the launcher's '--  | rank w1 exited status=1'."""
    _, workers = _workers("i13")
    assert sorted(workers) == ["worker:0", "worker:1", "worker:2"]
    assert all(workers[w]["exit_code"] == 1 for w in workers)


def test_untimed_progress_finished_before_the_first_error() -> None:
    """Keras prints on stdout without times, TF on stderr with them: a worker
    that printed Epoch 3/3 and 15/15 finished, at the latest before its first
    error; what it said of the leader after that is shutdown noise."""
    job = run_job(RUNS / "i12" / "logs").job
    assert all(job.facts.finished[w] is not None for w in ("worker:0", "worker:1", "worker:2"))


def test_two_workers_on_two_builds_take_the_leaders_as_the_jobs() -> None:
    v = run_job(RUNS / "i10" / "logs").model.verdict
    assert v["root_workers"] == ["worker:1"] and "leader's is taken as the job's own" in v["summary"]

"""What blind batch BK's first score (81.2% class, 100% root, no false alarm)
missed, on the batch's own recording (fixtures/blind/batch_bk, labels
committed before recording). Verdicts are held by tests/test_blind_runs.py;
this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.ingest.templates import classify
from mwms_doctor.pipeline import load_tables

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_bk" / "runs"


def test_the_pid_a_launcher_gave_a_task_matches_the_kernels_oom_kill() -> None:
    # bk06: bm-gpu08/launcher.log 'task=worker:0 cmd=... pid=4137' and kern.log 'Memory cgroup
    # out of memory: Killed process 4137'; the worker's own lines print another number (its
    # container's). peer_died before: nothing tied the kill to worker:0.
    tables, _ = load_tables(RUNS / "bk06" / "logs")
    w0 = next(r for r in tables.workers.to_pylist() if r["worker"] == "worker:0")
    assert (w0["exit_signal"], w0["exit_note"]) == ("SIGKILL", "killed by the kernel's OOM killer")
    assert verdict(RUNS / "bk06" / "logs") == ("oom", ["worker:0"], "failure")


def test_an_input_declared_endless_that_ran_out_is_the_input_running_out() -> None:
    # bk10: tf.data's assert_cardinality on worker:1: 'Input dataset was expected to contain an
    # infinite number of elements but contained only 500 elements.' (FAILED_PRECONDITION).
    kind, _, _ = classify(
        "Local rendezvous is aborting with status: FAILED_PRECONDITION: Input dataset was expected to "
        "contain an infinite number of elements but contained only 500 elements."
    )
    assert kind == "tf.end_of_sequence"
    assert verdict(RUNS / "bk10" / "logs") == ("data_exhaustion", ["worker:1"], "failure")

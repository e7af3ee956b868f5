"""Thread dumps in the logs (analyzer/stacks.py): where each worker's main
thread was while the job hung, from Python's faulthandler or a person's
py-spy dump, on real recordings."""

from __future__ import annotations

from mwms_doctor.ingest.templates import classify
from mwms_doctor.pipeline import load_job, run_job
from mwms_doctor.stacks import INPUT, OWN, TF, main_threads

from .paths import FIXTURES

PYSPY = FIXTURES / "evidence" / "pyspy_hang"  # fixtures/harness/pyspy/record.sh
FAULTHANDLER = FIXTURES / "blind" / "batch_ab" / "runs" / "ab02" / "logs"


def test_py_spy_dumps_say_where_each_main_thread_was() -> None:
    # worker:2 blocks in its own flush_metrics (an Event nobody sets), printing nothing;
    # the others wait in the next step's function. py-spy dump of each, pasted below
    # each worker's log, is the only evidence of who stopped first.
    job, _ = load_job(PYSPY)
    threads = main_threads(job)
    assert {w: t.where for w, t in threads.items()} == {"worker:0": TF, "worker:1": TF, "worker:2": OWN}
    assert threads["worker:2"].frame == "train.py:38 flush_metrics"


def test_a_hang_whose_stacks_were_dumped_is_no_finished_job() -> None:
    # Every worker's log ends in the same lines ("$ py-spy dump --pid N", "Process N:
    # ...", "Python v3.11.7 (...)"): a dump taken while it hung, no closing words.
    verdict = run_job(PYSPY, formats=()).model.verdict
    assert (verdict["class"], verdict["root_workers"]) == ("hang", ["worker:2"])
    assert verdict["status"] != "healthy"


def test_faulthandlers_dump_names_the_input_wait() -> None:
    job, _ = load_job(FAULTHANDLER)
    assert main_threads(job)["worker:1"].where == INPUT


def test_a_dumps_lines_are_its_own_kind_not_a_tracebacks() -> None:
    assert classify('  File "/app/train.py", line 193 in <module>')[0] == "py.thread_dump"
    assert classify('Thread 29401 (idle): "MainThread"')[0] == "py.thread_dump"
    assert classify("    quick_execute (tensorflow/python/eager/execute.py:53)")[0] == "py.thread_dump"
    assert classify('  File "/app/train.py", line 193, in <module>')[0] != "py.thread_dump"

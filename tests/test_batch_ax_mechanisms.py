"""What blind batch AX's first score (81.2% class, 92.9% root, no false
alarm) missed, on the batch's own recording (fixtures/blind/batch_ax, labels
committed before recording). Verdicts are held by tests/test_blind_runs.py;
this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.facts import establish
from mwms_doctor.pipeline import load_tables
from mwms_doctor.series import same_fingerprint, uneven_epochs
from mwms_doctor.stacks import OWN, TF, main_threads

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_ax" / "runs"


def _job(run: str):  # type: ignore[no-untyped-def]
    tables, _ = load_tables(RUNS / run / "logs")
    return establish(tables)


def test_a_thread_dump_interleaved_with_another_workers_in_one_stream_is_read() -> None:
    # ax02: srun --label; worker:1's 'Current thread ...' header, then worker:2's whole
    # dump, then worker:1's frames (threading.wait in the script's run_ctl).
    threads = main_threads(_job("ax02"))
    assert threads["worker:1"].where == OWN
    assert {threads[w].where for w in ("worker:0", "worker:2")} == {TF}
    assert verdict(RUNS / "ax02" / "logs") == ("hang", ["worker:1"], "failure")


def test_a_terminal_capture_repeating_a_workers_sigterm_is_no_second_worker_stopped() -> None:
    # ax07: Modal's terminal capture (the launcher's stream) repeats worker:1's
    # 'received signal 15' line; only worker:1 was stopped: a preemption, not a job stopped.
    job = _job("ax07")
    assert not job.facts.stopped_together
    assert verdict(RUNS / "ax07" / "logs") == ("preemption", ["worker:1"], "failure")


def test_the_same_sample_ids_on_every_worker_whatever_time_and_task_the_line_names() -> None:
    # ax08: 'ts=1795847182.849 ... role=chief-0 event="first batch sample ids" epoch=1
    # ids=[133,148,...]' on all three, each line with its own time and role.
    assert same_fingerprint(_job("ax08")) is not None
    assert verdict(RUNS / "ax08" / "logs")[::2] == ("identical_data", "warning")


def test_a_scripts_epoch_n_of_m_line_names_its_epoch() -> None:
    # ax10: at global step 4 the chief's last epoch line is 'epoch 1/2', worker:0's
    # 'epoch 2/2': worker:0's epochs were shorter (it ran out and left).
    uneven = uneven_epochs(_job("ax10"))
    assert uneven is not None and uneven.ahead == ["worker:0"]
    assert verdict(RUNS / "ax10" / "logs") == ("data_exhaustion", ["worker:0"], "failure")


def test_a_platforms_task_record_names_its_task_by_the_tf_config_it_was_given() -> None:
    # ax07: Modal's task list, each entry with 'input': {'tf_config': {..., 'task': {'type':
    # 'worker', 'index': 1}}}, 'exit_code': 143 and the platform's message; refused before
    # as a JSON document no reader claims.
    tables, _ = load_tables(RUNS / "ax07" / "logs")
    assert not tables.skipped
    ends = {(r["worker"], r["key"]): r["value"] for r in tables.env.to_pylist() if r["kind"] == "exit"}
    assert ends[("worker:1", "k8s.state.exit_code")] == "143"
    assert "preemption" in ends[("worker:1", "k8s.state.reason")]
    assert ends[("worker:0", "k8s.state.exit_code")] == "1"

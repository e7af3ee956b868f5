"""What blind batch BH's first score (81.2% class, 93.3% root, no false
alarm) missed, on the batch's own recording (fixtures/blind/batch_bh, labels
committed before recording). Verdicts are held by tests/test_blind_runs.py;
this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.ingest import exports
from mwms_doctor.ingest.templates import classify
from mwms_doctor.pipeline import load_tables

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_bh" / "runs"


def test_an_octopus_task_log_is_read_target_by_target() -> None:
    # bh14: Octopus Deploy's task log: each deployment target's part under "| Failed:
    # TRAIN-VM-02", its lines as "09:49:31   Error    |       <what the script printed>".
    # Read as one unnamed stream before: worker:0's TypeError traceback fell to no worker.
    logs = RUNS / "bh14" / "logs"
    text = (logs / "ServerTasks-20418.log.txt").read_text()
    assert exports.sniff(text[:262144]) == "sections"
    entries = exports._from_sections(text)
    assert {e["source"] for e in entries} == {"TRAIN-VM-01", "TRAIN-VM-02", "TRAIN-VM-03"}
    assert all(e["time"].startswith("2026-11-28T") for e in entries if e["message"].startswith("I0000"))
    assert verdict(logs) == ("worker_exception", ["worker:0"], "failure")


def test_an_input_time_only_the_slow_worker_prints_names_it() -> None:
    # bh10: papermill notebooks; only worker:0 logs 'input wait epoch=1 step=4 secs=0.6053'
    # (every 4 steps), the others log the same steps with no wait. Its 'secs' was read as
    # the unit of 'step=4' before, and a timing one worker alone printed was not compared.
    kind, fields, _ = classify("input wait epoch=1 step=4 secs=0.6053")
    assert kind == "train.step"
    assert verdict(RUNS / "bh10" / "logs") == ("straggler", ["worker:0"], "warning")


def test_an_uncaught_stop_iteration_is_the_input_running_out() -> None:
    # bh11: worker:2's batch generator runs dry in epoch 3: 'batch = next(it)' ends in a
    # bare 'StopIteration'; the others then lose it in the all-reduce. peer_died before.
    tables, _ = load_tables(RUNS / "bh11" / "logs")
    ended = [
        dict(r["fields"] or []).get("tf_kind")
        for r in tables.events.to_pylist()
        if r["worker"] == "worker:2" and r["kind"] == "py.traceback"
    ]
    assert ended == ["tf.end_of_sequence"]
    assert verdict(RUNS / "bh11" / "logs") == ("data_exhaustion", ["worker:2"], "failure")

"""What blind batch AY's first score (87.5% class, 86.7% root, no false
alarm) missed, on the batch's own recording (fixtures/blind/batch_ay, labels
committed before recording). Verdicts are held by tests/test_blind_runs.py;
this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.facts import establish
from mwms_doctor.pipeline import load_tables

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_ay" / "runs"


def test_srun_s_word_on_a_task_beats_sacct_s_one_state_for_the_step() -> None:
    # ay02: 'srun: error: cn-0142: task 1: Segmentation fault (core dumped)' beside
    # sacct's step '884213.0 python FAILED 1:0'; the step's state is no word on task 1.
    tables, _ = load_tables(RUNS / "ay02" / "logs")
    job = establish(tables)
    assert (job.facts.workers["worker:1"]["exit_code"], job.facts.workers["worker:1"]["exit_signal"]) == (
        139,
        "SIGSEGV",
    )
    # 'The following tasks are unhealthy: task:2, task:1' (task 2's log not collected):
    # among the peers named alike, the one a signal ended.
    assert verdict(RUNS / "ay02" / "logs") == ("peer_died", ["worker:1"], "failure")


def test_a_scripts_tf_version_field_folded_into_a_tf_record_is_read() -> None:
    # ay06: 'starting tf_version=2.19.0, task=worker:0' printed right after a TF line
    # and read as its last line; the collective mismatch that followed is the skew.
    tables, _ = load_tables(RUNS / "ay06" / "logs")
    versions = {r["worker"]: r["tf_version"] for r in tables.workers.to_pylist()}
    assert versions == {"chief:0": "2.21.0", "worker:0": "2.19.0"}
    assert verdict(RUNS / "ay06" / "logs") == ("version_skew", ["worker:0"], "failure")


def test_a_logfmt_line_naming_its_task_still_says_its_input_ended() -> None:
    # ay11: 'task=worker:2 msg="input pipeline exhausted, no more batches"' was read as a
    # line that only says who wrote it; worker:2 then finished alone and the others failed.
    tables, _ = load_tables(RUNS / "ay11" / "logs")
    kinds = {r["kind"] for r in tables.events.to_pylist() if "exhausted" in r["text"]}
    assert kinds == {"script.input_ended"}
    assert verdict(RUNS / "ay11" / "logs") == ("data_exhaustion", ["worker:2"], "failure")

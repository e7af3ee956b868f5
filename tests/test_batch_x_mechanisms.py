"""What blind batch X's first score (81.2% class, 78.6% root) missed, on the
batch's own recordings (fixtures/blind/batch_x, labels committed before
recording). Verdicts are held by tests/test_blind_runs.py; these hold how the
evidence is read, each mechanism on the run that showed it."""

from __future__ import annotations

from mwms_doctor.collectives import collective_mismatches
from mwms_doctor.facts import establish
from mwms_doctor.ingest.env import sniff_env
from mwms_doctor.ingest.exports import sniff
from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_x" / "runs"


def _verdict(run: str) -> dict[str, object]:
    return run_job(RUNS / run / "logs", formats=()).model.verdict


def test_a_loss_a_structured_logger_gives_as_a_field_is_read_for_nan() -> None:
    # x13: JSON lines '{"message": "epoch 1/3 finished", "loss": "nan", ...}' on every worker;
    # training runs to its end and every worker exits 0: only the loss says it failed.
    v = _verdict("x13")
    assert v["class"] == "nan_loss"
    assert set(v["root_workers"]) == {"worker:0", "worker:1", "worker:2"}


def test_a_worker_that_dies_of_an_exception_did_not_end_in_closing_words() -> None:
    # x14: every worker printed "finished epoch 1 ..." once, after the last step line
    # every worker printed: read alone, a closing line. worker:0 then died of an
    # UnavailableError raised inside its training step (in its .err): no job ended so.
    job = establish(load_tables(RUNS / "x14" / "logs")[0])
    assert not job.facts.finished


def test_a_worker_that_says_in_its_own_words_its_input_ran_out() -> None:
    # x14: worker:1 logs "input iterator exhausted after 20 steps, stopping training" and
    # trains no more; worker:0 and worker:2 then fail in their all-reduce.
    v = _verdict("x14")
    assert (v["class"], v["root_workers"]) == ("data_exhaustion", ["worker:1"])


def test_cloudwatch_get_log_events_and_aws_batch_describe_jobs() -> None:
    # x08: `aws logs get-log-events` JSON per node (node-0 = chief, node-1 = worker:0)
    # and `aws batch describe-jobs`: node #1 exitCode 137, "OutOfMemoryError: Container
    # killed due to memory usage".
    logs = RUNS / "x08" / "logs"
    assert sniff((logs / "cloudwatch" / "node-1.json").read_text()[:65536]) == "json_document"
    assert sniff_env((logs / "describe-jobs.json").read_text()[:65536], "describe-jobs.json") == "aws_batch"
    tables, _ = load_tables(logs)
    exits = {
        r["worker"]: (r["exit_code"], r["exit_note"]) for r in tables.workers.to_pylist() if r["has_log"]
    }
    assert exits["worker:0"][0] == 137 and "OutOfMemoryError" in str(exits["worker:0"][1])
    assert exits["chief:0"][0] == 1
    assert (_verdict("x08")["class"], _verdict("x08")["root_workers"]) == ("oom", ["worker:0"])


def test_a_type_mismatch_is_named_by_who_reported_it_first_hand() -> None:
    # x12: worker:1's extra int64 all-reduce meets the others' float gradients at
    # instance 104, on the first step. chief:0 and worker:0 report "expected ...
    # data_type 9 but got ... data_type 1" themselves; worker:1 only relays it
    # ("Collective ops is aborted by: ..."). No worker had trained: no input had ended.
    found = collective_mismatches(establish(load_tables(RUNS / "x12" / "logs")[0]))
    assert found is not None
    assert found.odd == ["worker:1"] and not found.looks_like_data_end
    assert (_verdict("x12")["class"], _verdict("x12")["root_workers"]) == (
        "collective_mismatch",
        ["worker:1"],
    )

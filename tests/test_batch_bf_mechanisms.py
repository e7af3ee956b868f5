"""What blind batch BF's first score (87.5% class, 92.9% root, one stuck job
called healthy) missed, on the batch's own recording (fixtures/blind/batch_bf,
labels committed before recording). Verdicts are held by
tests/test_blind_runs.py; this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.ingest import exports
from mwms_doctor.pipeline import load_tables

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_bf" / "runs"


def test_a_line_every_worker_printed_last_that_opens_an_epoch_is_no_closing_line() -> None:
    # bf03: every worker's last line is 'msg="epoch 3 begin"', after 'epoch 2 end': the
    # same plain line after the same last progress, so the job was read as finished and
    # called healthy at 90%. The line was first printed before any progress ('epoch 1
    # begin' before 'epoch 1 end'): it opens a stretch of training, the job was inside one.
    tables, _ = load_tables(RUNS / "bf03" / "logs")
    from mwms_doctor.facts import establish

    assert not establish(tables).facts.finished
    assert verdict(RUNS / "bf03" / "logs")[0] == "hang"


def test_a_range_of_example_ids_is_an_account_of_the_data_read() -> None:
    # bf08: 'first batch of epoch 1: example ids 0..9' on all three workers, '80..89' at
    # epoch 2: the same ranges, the same data.
    assert verdict(RUNS / "bf08" / "logs")[0] == "identical_data"


def test_an_export_of_parsed_and_unparsed_entries_is_read_by_the_field_every_entry_holds() -> None:
    # bf10: Honeycomb's query results: "body" holds the line, or (a JSON logger's line,
    # parsed) an object with "msg" and "task"; "tf.task" is on every entry. Read as one
    # unnamed stream before, then split between the JSON lines' "task" and the hosts.
    logs = RUNS / "bf10" / "logs"
    assert exports.sniff((logs / "honeycomb-query-results.ndjson").read_text()[:262144]) == "ndjson"
    tables, _ = load_tables(logs)
    assert {r["worker"] for r in tables.workers.to_pylist() if r["has_log"]} == {"worker:0", "worker:1"}
    assert verdict(logs) == ("nan_loss", ["worker:0", "worker:1"], "failure")


def test_a_jobs_deadline_in_a_describes_events_is_the_platforms_stop_of_every_task() -> None:
    # bf03: runai/describe-job.txt's Events: 'Warning DeadlineExceeded Job was active longer
    # than specified deadline (activeDeadlineSeconds=40)'. The Job controller deletes the
    # pods (SIGTERM, then SIGKILL): every task was stopped from outside, so the hang is
    # a failure, not a log that merely ends.
    tables, _ = load_tables(RUNS / "bf03" / "logs")
    ended = {r["worker"]: (r["exit_signal"], r["exit_note"]) for r in tables.workers.to_pylist()}
    assert set(ended) == {"worker:0", "worker:1", "worker:2"}
    assert all(sig == "SIGTERM" and "DeadlineExceeded" in note for sig, note in ended.values())
    assert verdict(RUNS / "bf03" / "logs")[::2] == ("hang", "failure")

"""What blind batch AT's first score (75.0% class, 73.3% root, one healthy
job called failed) missed, on the batch's own recording
(fixtures/blind/batch_at, labels committed before recording). Verdicts are
held by tests/test_blind_runs.py; this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.pipeline import load_tables

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_at" / "runs"


def _verdict(run: str) -> tuple[str, list[str], str]:
    return verdict(RUNS / run / "logs")


def test_absl_python_logging_calls_are_records_of_their_own() -> None:
    # at06: worker:0's 'epoch finished (epoch=2, ...)' and its next logging call, same
    # thread and line, were folded into one record; its epoch read as 1 at step 18, so a
    # healthy job was called uneven input.
    tables, _ = load_tables(RUNS / "at06" / "logs")
    texts = [r["text"] for r in tables.events.to_pylist() if r["worker"] == "worker:0"]
    assert any(t.startswith("epoch finished (epoch=2") and "\n" not in t for t in texts)
    assert _verdict("at06")[2] == "healthy"


def test_tfs_own_task_name_as_a_tag_names_the_worker() -> None:
    # at10: each Spark executor's stdout prefixed '[worker:2] '; its stderr in the same folder.
    tables, _ = load_tables(RUNS / "at10" / "logs")
    named = {r["worker"] for r in tables.workers.to_pylist() if r["has_log"]}
    assert named == {"worker:0", "worker:1", "worker:2"}
    assert _verdict("at10")[:2] == ("version_skew", ["worker:2"])


def test_a_queues_record_carrying_the_entry_as_a_json_string() -> None:
    # at12: kcat -J: {"key": "ip-10-1-7-12", "payload": "{\\"container\\": \\"ctr-chief-0\\", \\"log\\": ...}"}.
    tables, _ = load_tables(RUNS / "at12" / "logs")
    named = {r["worker"] for r in tables.workers.to_pylist() if r["has_log"]}
    assert named == {"chief:0", "worker:0", "worker:1"}
    assert _verdict("at12")[:2] == ("preemption", ["worker:0"])


def test_a_loggers_own_field_names_for_the_task_name_it() -> None:
    # at09: syslog-ng's remote/<host>/<date>/mwms-train.log, each line the script's
    # 't=... lvl=info role=worker idx=1 msg="starting trainer"'.
    tables, _ = load_tables(RUNS / "at09" / "logs")
    named = {r["worker"] for r in tables.workers.to_pylist() if r["has_log"]}
    assert named == {"worker:0", "worker:1", "worker:2"}


def test_a_scripts_epoch_end_record_is_behind_its_step_records_of_a_later_epoch() -> None:
    # at04: worker:1's last record is 'epoch finished epoch=1', worker:0's 'train step
    # epoch=2 step=15' (0.6 s later, under the margin a time order needs): one script's
    # two kinds of record, ordered by their epochs; worker:1 stopped first.
    assert _verdict("at04") == ("hang", ["worker:1"], "failure")

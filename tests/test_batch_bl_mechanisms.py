"""What blind batch BL's first score (87.5% class, 80.0% root, one healthy job
called failed) missed, on the batch's own recording (fixtures/blind/batch_bl,
labels committed before recording). Verdicts are held by
tests/test_blind_runs.py; this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.ingest import exports

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_bl" / "runs"


def test_an_export_timed_in_microseconds_is_put_in_time_order() -> None:
    # bl10 (healthy): OpenObserve's search export, newest first, each hit's "_timestamp" in
    # microseconds since the epoch. Unread, the hits stayed newest first: every worker's
    # 'Epoch 1/2' read as its last line, and the job was called failed.
    assert exports._iso("1795862224456412") == "2026-11-28T10:37:04.456412Z"
    assert exports._iso("1795862224456412000") == "2026-11-28T10:37:04.456412Z"
    assert verdict(RUNS / "bl10" / "logs") == ("healthy", [], "healthy")


def test_a_dql_result_of_records_is_an_export() -> None:
    # bl12: Dynatrace's DQL result, {"records": [{"timestamp", "content", "host.name", ...}]}.
    text = (RUNS / "bl12" / "logs" / "dql_result_ltv_training.json").read_text()
    assert exports.sniff(text[:262144]) == "json_document"
    assert verdict(RUNS / "bl12" / "logs") == ("data_exhaustion", ["worker:2"], "failure")

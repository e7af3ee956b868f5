"""What blind batch BI's first score (87.5% class, 78.6% root, one healthy job
called failed) missed, on the batch's own recording (fixtures/blind/batch_bi,
labels committed before recording). Verdicts are held by
tests/test_blind_runs.py; this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.ingest.templates import classify
from mwms_doctor.pipeline import load_tables

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_bi" / "runs"


def test_a_traceback_the_worker_retried_after_is_no_uncaught_exception() -> None:
    # bi04 (healthy): worker:1's .err holds 'OSError: [Errno 5] Input/output error:
    # '/data/shards/part-00003.npz'' (its handler printed it); its .out says 'transient read
    # error on part-00003.npz, retrying (1/3)', then trains on to 'training finished'. The
    # .out's lines carry no time, so nothing ordered the traceback before its progress:
    # it was called a worker_exception, a false alarm.
    assert verdict(RUNS / "bi04" / "logs") == ("healthy", [], "healthy")


def test_an_epoch_line_whose_loss_is_named_is_progress() -> None:
    # bi02: 'msg="epoch 1 complete" avg_loss=5.3367 samples=128 ...' was no progress, so the
    # hang read 'No worker made any training progress'.
    kind, fields, _ = classify("epoch 1 complete avg_loss=5.3367 samples=128 sec=2.81")
    assert (kind, fields.get("epoch")) == ("train.epoch", "1")
    assert classify("epoch 2 complete avg_loss=nan samples=128")[0] != "train.epoch"
    tables, _ = load_tables(RUNS / "bi02" / "logs")
    from mwms_doctor.facts import establish

    assert set(establish(tables).facts.last_progress) == {"worker:0", "worker:1", "worker:2"}

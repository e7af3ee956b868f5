"""What blind batch AL's first score (81.2% class, 80.0% root) missed, on the
batch's own recording (fixtures/blind/batch_al, labels committed before
recording). Verdicts are held by tests/test_blind_runs.py; this holds how the
evidence is read."""

from __future__ import annotations

from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_al" / "runs"


def test_a_shippers_tags_name_the_worker_of_each_event() -> None:
    # al14: Vector's NDJSON archive, each trainer event tagged {"role": "worker:1"}.
    tables, _ = load_tables(RUNS / "al14" / "logs")
    named = {r["worker"] for r in tables.workers.to_pylist() if r["has_log"]}
    assert named == {"chief:0", "worker:0", "worker:1"}


def test_a_scripts_word_for_the_sigterm_it_received_is_a_stop() -> None:
    # al14: worker:1's handler logs 'received signal 15 (SIGTERM), shutting down worker:1'
    # as its spot instance is reclaimed.
    tables, _ = load_tables(RUNS / "al14" / "logs")
    kinds = [
        r["kind"] for r in tables.events.select(["kind", "text"]).to_pylist() if "signal 15" in r["text"]
    ]
    assert kinds == ["tf.sigterm_caught"]
    verdict = run_job(RUNS / "al14" / "logs", formats=()).model.verdict
    assert (verdict["class"], verdict["root_workers"]) == ("preemption", ["worker:1"])

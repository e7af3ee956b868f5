"""What blind batch BJ's first score (87.5% class, 93.3% root, no false alarm)
missed, on the batch's own recording (fixtures/blind/batch_bj, labels
committed before recording). Verdicts are held by tests/test_blind_runs.py;
this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.ingest import exports
from mwms_doctor.pipeline import load_tables

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_bj" / "runs"


def test_a_sentry_event_is_read_as_the_traceback_its_process_printed() -> None:
    # bj15: a Sentry export, one JSON per uncaught exception (tags.task, breadcrumbs of the
    # script's logging, exception.values[].stacktrace.frames); no other log. Not read
    # before: 'unknown'. worker:1's IndexError in its LR callback came first.
    events = RUNS / "bj15" / "logs" / "events"
    text = (events / "6ca014d169c40ad2c2dbce34cd08a9cd.json").read_text()
    assert exports.sniff(text[:262144]) == "sentry"
    lines = [e["message"] for e in exports._from_sentry(text)]
    assert (
        "Traceback (most recent call last):" in lines and lines[-1] == "IndexError: list index out of range"
    )
    assert verdict(RUNS / "bj15" / "logs") == ("worker_exception", ["worker:1"], "failure")
    # U's u09 holds Sentry events beside the workers' own logs, tagged "tf_task": the same
    # workers, no unnamed parts.
    tables, _ = load_tables(FIXTURES / "blind" / "batch_u" / "runs" / "u09" / "logs")
    assert not [r for r in tables.workers.to_pylist() if r["worker"].startswith("?")]


def test_a_pod_whose_node_the_cloud_took_away_was_preempted_though_its_log_is_gone() -> None:
    # bj16: events.txt ('LAST SEEN (UTC)  TYPE  REASON  OBJECT  MESSAGE') places
    # regress-spot-worker-1 on gke-train-spot-pool-0ecc3a82, then 'PreemptionNotice
    # node/gke-train-spot-pool-0ecc3a82 ... is being preempted (spot)'; that node's pod logs
    # were never collected. peer_died before.
    tables, _ = load_tables(RUNS / "bj16" / "logs")
    w1 = next(r for r in tables.workers.to_pylist() if r["worker"] == "worker:1")
    assert (w1["has_log"], w1["exit_signal"]) == (False, "SIGTERM")
    assert w1["exit_note"].startswith("preempted: node gke-train-spot-pool-0ecc3a82")
    assert verdict(RUNS / "bj16" / "logs") == ("preemption", ["worker:1"], "failure")

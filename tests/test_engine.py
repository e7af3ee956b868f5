"""The engine's honest answers: `unknown` when no rule fits, with the errors a
person should read first; warnings, not failures, for noise after a clean finish."""

from __future__ import annotations

import shutil
from pathlib import Path

from mwms_doctor.engine import run_rules
from mwms_doctor.facts import establish
from mwms_doctor.pipeline import load_tables

from .paths import RUNS


def _job_with_unknown_error(tmp_path: Path) -> Path:
    """The real healthy run, with worker 1 failing in epoch 2 with an error no
    rule knows, printed three times with different numbers (as a retry loop
    does), then exiting 1."""
    job = tmp_path / "job"
    shutil.copytree(RUNS / "healthy" / "logs", job)
    log = job / "worker-1.log"
    lines = log.read_text().splitlines()
    cut = next(i for i, line in enumerate(lines) if line.startswith("Epoch 2/3"))
    ts = 1795281990.5  # after the run's last training line
    injected = [
        f"E0000 00:00:{ts + i:.6f}   15043 widget_store.cc:88] Failed to frobnicate shard {i + 3} of 17 at "
        f"/mnt/data/part-{i:05d}: code {100 + i}"
        for i in range(3)
    ]
    # No traceback: an uncaught Python exception would be a known class
    # (worker_exception, UE001); C++ errors no template knows, then exit 1, are not.
    log.write_text("\n".join(lines[: cut + 1] + injected) + "\n")
    (job / "worker-1.exit").write_text("exit_code: 1\n")
    return job


def test_unknown_failure_lists_first_errors_and_frequent_templates(tmp_path: Path) -> None:
    tables, _ = load_tables(_job_with_unknown_error(tmp_path))
    analysis = run_rules(establish(tables))
    v = analysis.verdict
    assert (v.status, v.cls, v.root_workers) == ("failure", "unknown", ["worker:1"])
    assert not [f for f in analysis.findings if f.severity == "error"], "a known class was forced"
    assert analysis.unexplained[0].worker == "worker:1"
    assert "frobnicate" in analysis.unexplained[0].text
    top = analysis.unrecognised[0]
    assert top.count == 3 and top.workers == ["worker:1"]
    assert top.text == "Failed to frobnicate shard <n> of <n> at <path>: code <n>"


def test_error_after_a_clean_finish_is_not_a_failure() -> None:
    # The straggler run: every worker exits 0, but the slowest one logs a
    # coordination-service error at shutdown because the leader left first.
    tables, _ = load_tables(RUNS / "straggler" / "logs")
    analysis = run_rules(establish(tables))
    assert analysis.unexplained, "the shutdown error must stay visible"
    assert analysis.verdict.status == "warning" and analysis.verdict.cls == "straggler"


def test_healthy_verdict_names_what_it_could_not_check() -> None:
    tables, _ = load_tables(RUNS / "healthy" / "logs")
    v = run_rules(establish(tables)).verdict
    assert v.status == "healthy"
    assert "ST001" in v.summary and "DA001" in v.summary and "no trace_events table" in v.summary
    tables, _ = load_tables(RUNS / "profiled" / "logs")
    assert "Not checked" not in run_rules(establish(tables)).verdict.summary


def test_local_time_script_logging_does_not_keep_a_dead_worker_alive(tmp_path: Path) -> None:
    # The real peer_killed run, with worker 1's script also logging in naive
    # local time (UTC+2) before it died: read as UTC, that line is two hours
    # "after" the survivors' reports. Liveness compares like with like.
    job = tmp_path / "job"
    shutil.copytree(RUNS / "peer_killed" / "logs", job)
    log = job / "worker-1.log"
    lines = log.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Epoch 1/"))
    lines.insert(at, "2026-11-21 20:31:00,000 - train - INFO - starting epoch 1 on 16 batches")
    log.write_text("\n".join(lines) + "\n")
    tables, _ = load_tables(job)
    v = run_rules(establish(tables)).verdict
    assert (v.cls, v.root_workers) == ("peer_died", ["worker:1"])


def test_training_that_starts_again_after_a_completion_did_not_complete(tmp_path: Path) -> None:
    """The throughput benchmark's job: a finished run's lines ("epoch 3/3 done"),
    then a real run in which worker 1 is killed. The last progress decides: the
    survivors' reports are not shutdown noise."""
    import importlib.util

    from .paths import ROOT

    spec = importlib.util.spec_from_file_location("throughput", ROOT / "benchmarks" / "throughput.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    bench.build(tmp_path, 3, 300_000, RUNS / "verbose_healthy")
    v = run_rules(establish(load_tables(tmp_path)[0])).verdict
    assert (v.cls, v.root_workers) == ("peer_died", ["worker:1"])


def test_a_finding_without_a_time_never_sorts_as_the_latest() -> None:
    """Ranked with the earliest timed finding; confidence decides between them."""
    import datetime as dt

    from mwms_doctor.engine import _rank
    from mwms_doctor.findings import Finding

    def finding(code: str, ts: dt.datetime | None, confidence: float) -> Finding:
        return Finding(code, code, "oom", "", "error", confidence, ["worker:0"], ts, "", [], "", "", {}, True)

    t = dt.datetime(2026, 11, 21, 10, 0, tzinfo=dt.timezone.utc)
    ranked = _rank([finding("LATE", t + dt.timedelta(seconds=30), 0.9), finding("UNTIMED", None, 0.95)])
    assert [f.code for f in ranked] == ["UNTIMED", "LATE"]
    ranked = _rank([finding("EARLY", t, 0.9), finding("UNTIMED", None, 0.5)])
    assert [f.code for f in ranked] == ["EARLY", "UNTIMED"]


def test_each_worker_says_where_it_stopped_making_progress() -> None:
    """The blind run whose worker 2 blocked in its own code: every worker's last
    progress line, then 80 s without progress until the runner stopped them."""
    from .paths import BLIND_RUNS

    tables, _ = load_tables(BLIND_RUNS / "b35_stuck_worker_timeout" / "logs")
    for r in tables.workers.to_pylist():
        assert r["last_progress"] and "step" in r["last_progress"]
        assert (r["last_ts"] - r["last_progress_ts"]).total_seconds() > 60

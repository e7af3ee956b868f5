"""Every recorded real run gets its class and root worker right."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mwms_doctor.pipeline import run_job

from .paths import RUNS


@pytest.mark.parametrize("run", sorted(RUNS.iterdir()), ids=lambda p: p.name)
def test_recorded_run_verdict(run: Path) -> None:
    expected = json.loads((run / "expected.json").read_text())
    result = run_job(run / "logs")
    v = result.analysis.verdict
    assert v.cls == expected["class"]
    assert v.root_workers == expected["root_workers"]
    assert (v.status == "healthy") == (expected["class"] == "healthy")
    assert result.tables.skipped == [], result.tables.skipped


def test_healthy_runs_have_no_findings_at_all() -> None:
    for run in sorted(RUNS.iterdir()):
        if json.loads((run / "expected.json").read_text())["class"] == "healthy":
            result = run_job(run / "logs")
            assert result.analysis.findings == [], run.name
            assert result.analysis.unexplained == [], run.name


def test_echoes_are_not_reported_as_failures() -> None:
    # In the oom run, worker:0 and worker:2 also fail ("Socket closed"):
    # both are attached to the OOM as echoes, and the peer-died finding about
    # worker:1 is a consequence of the OOM, not a second root cause.
    result = run_job(RUNS / "oom" / "logs")
    root, *others = result.analysis.findings
    assert root.code == "OM001"
    assert sorted(e.worker for e in root.echoes) == ["worker:0", "worker:2"]
    assert [(f.code, f.cascade_of) for f in others] == [("PD001", "OM001@worker:1")]
    assert result.analysis.unexplained == []


def test_oom_finding_measures_the_request_against_the_limit() -> None:
    root = run_job(RUNS / "oom" / "logs").analysis.findings[0]
    assert root.facts["requested_bytes"] == 4 * 2**40
    assert root.facts["limit_bytes"] == int(23.54 * 2**30)
    assert root.facts["dtype"] == "float"
    assert root.facts["device"] == "/job:worker/replica:0/task:1/device:CPU:0"


def test_dead_worker_shows_last_words_and_exit() -> None:
    root = run_job(RUNS / "peer_killed" / "logs").analysis.findings[0]
    assert root.code == "PD001"
    assert root.facts["exit_signal"] == "SIGKILL"
    assert root.facts["silent"] is True
    last = [e for e in root.evidence if e.role == "last words"]
    assert [(e.source, e.text) for e in last] == [("worker-1.log", "Epoch 1/3")]

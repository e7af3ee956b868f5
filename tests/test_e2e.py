"""End to end with real TensorFlow: record MWMS jobs live, then analyze them.

Proves the analyzer reads what today's TensorFlow prints, not only what it
printed when the fixtures were recorded. Needs the [tf] extra; skipped without
it unless MWMS_REQUIRE_E2E=1 (CI sets it, so there a missing TF fails).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mwms_doctor.pipeline import run_job

from .paths import FIXTURES

HARNESS = FIXTURES / "harness" / "record.py"

pytestmark = pytest.mark.e2e

if importlib.util.find_spec("tensorflow") is None:
    if os.environ.get("MWMS_REQUIRE_E2E") == "1":
        raise RuntimeError("MWMS_REQUIRE_E2E=1 but TensorFlow is not installed: pip install -e '.[tf]'")
    pytest.skip("TensorFlow is not installed (pip install -e '.[tf]')", allow_module_level=True)


@pytest.mark.parametrize("scenario", ["healthy", "peer_killed", "oom"])
def test_live_recording_is_diagnosed(scenario: str, tmp_path: Path) -> None:
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, str(HARNESS), scenario, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    record_s = time.monotonic() - started
    expected = json.loads((tmp_path / "expected.json").read_text())
    t0 = time.monotonic()
    result = run_job(tmp_path / "logs")
    analyze_s = time.monotonic() - t0
    v = result.analysis.verdict
    print(
        f"\n{scenario}: recorded in {record_s:.1f} s, analyzed in {analyze_s:.2f} s -> {v.cls} {v.root_workers}"
    )
    assert v.cls == expected["class"], v.summary
    assert v.root_workers == expected["root_workers"]
    workers = {w["worker"]: w for w in result.tables.workers.to_pylist()}
    assert sorted(workers) == ["worker:0", "worker:1", "worker:2"]
    assert all(w["identity_from"] for w in workers.values())

"""The blind family (fixtures/blind): real MWMS jobs from a second,
independent harness whose labels were committed before they were recorded.
Each run must get its labelled class and root workers; the known misses are
strict xfails with the reason the logs cannot decide."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mwms_doctor.engine import run_rules
from mwms_doctor.facts import establish
from mwms_doctor.pipeline import load_tables

from .paths import BLIND_RUNS

KNOWN_MISSES = {
    # MWMS feeds the worker whose shard ended empty batches: its loss turns NaN and
    # the all-reduce spreads it; no log line says which worker ran short.
    "b22_uneven_files_ctl": "uneven shards surface as NaN on every worker",
    # Synchronous all-reduce makes every worker's step time the same; only a
    # profile shows who waits (ST001 is "not evaluated" without one).
    "b37_straggler_step_times": "a straggler is invisible in step times",
}


def _runs() -> list[object]:
    out: list[object] = []
    for d in sorted(p for p in BLIND_RUNS.iterdir() if (p / "expected.json").exists()):
        marks = (
            [pytest.mark.xfail(strict=True, reason=KNOWN_MISSES[d.name])] if d.name in KNOWN_MISSES else []
        )
        out.append(pytest.param(d, id=d.name, marks=marks))
    return out


@pytest.mark.parametrize("run", _runs())
def test_blind_run(run: Path) -> None:
    expected = json.loads((run / "expected.json").read_text())
    analysis = run_rules(establish(load_tables(run / "logs")[0]))
    v = analysis.verdict
    assert v.cls in [expected["class"], *(expected.get("accepted") or [])], v.summary
    if expected["root_workers"] is not None:
        assert set(v.root_workers) == set(expected["root_workers"])
    if expected["class"] == "healthy":
        assert v.status == "healthy" and not [
            f for f in analysis.findings if f.severity in ("error", "warning")
        ]
    if expected.get("stuck"):
        assert v.status != "healthy"

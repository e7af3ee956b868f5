"""Every rule's fixture cases: fires_* must fire, quiet_* must not, todo_* is a
known miss (strict xfail: when it starts passing, rename it fires_*)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mwms_doctor.discover import discover
from mwms_doctor.engine import run_rules
from mwms_doctor.facts import establish
from mwms_doctor.ingest.job import ingest_job
from mwms_doctor.registry import load_rules

from .paths import RULE_CASES, RUNS


def _cases() -> list[object]:
    out: list[object] = []
    for d in sorted(RULE_CASES.glob("*/*")):
        marks = [pytest.mark.xfail(strict=True, reason="known miss")] if d.name.startswith("todo_") else []
        out.append(pytest.param(d, id=f"{d.parent.name}/{d.name}", marks=marks))
    return out


def _logs(case: Path, expected: dict[str, object]) -> Path:
    """A case's own logs, or a recorded run's: ``"run": "peer_killed"`` (the
    tuned set) or ``"run": "blind/b33_..."`` (the blind family)."""
    if "run" not in expected:
        return case / "logs"
    run = str(expected["run"])
    if run.startswith("blind/"):
        return RUNS.parent / "blind" / "runs" / run.removeprefix("blind/") / "logs"
    return RUNS / run / "logs"


@pytest.mark.parametrize("case", _cases())
def test_rule_case(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())
    code = expected["code"]
    assert case.parent.name == code
    analysis = run_rules(establish(ingest_job(discover(_logs(case, expected)))))
    hits = [f for f in analysis.findings if f.code == code]
    status = {s.code: s.status for s in analysis.rules}
    assert status[code] in ("fired", "quiet"), status[code]
    if not expected["fires"]:
        assert hits == [], [h.summary for h in hits]
        return
    assert hits, f"{code} did not fire"
    hit = hits[0]
    assert hit.root_workers[0] == expected["subject"]
    assert hit.severity == expected["severity"]
    locations = {(e.source, e.line) for e in hit.evidence}
    for ev in expected["evidence"]:
        assert (ev["source"], ev["line"]) in locations, sorted(locations)


def test_every_rule_has_fires_and_quiet_cases() -> None:
    for rule in load_rules():
        names = [d.name for d in (RULE_CASES / rule.CODE).iterdir()]
        assert any(n.startswith("fires_") for n in names), rule.CODE
        assert any(n.startswith("quiet_") for n in names), rule.CODE
        assert all(n.startswith(("fires_", "quiet_", "todo_")) for n in names), names

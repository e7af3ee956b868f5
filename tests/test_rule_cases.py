"""Every rule's fixture cases, each read as the product reads a job (discover,
ingest, align, facts) with only its own rule on: fires_* must fire, quiet_*
must not, todo_* is a known miss (strict xfail: when it starts passing,
rename it fires_*). interaction_* cases are about precedence: the rule fires
alone, and stands down (or stands) beside the rules named in ``with``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mwms_doctor.engine import run_rules
from mwms_doctor.facts import establish
from mwms_doctor.pipeline import load_tables
from mwms_doctor.registry import load_rules

from .paths import EXCERPTS, RULE_CASES, RUNS


def _cases() -> list[object]:
    out: list[object] = []
    for d in sorted(RULE_CASES.glob("*/*")):
        if d.name.startswith("interaction_"):
            continue
        marks = [pytest.mark.xfail(strict=True, reason="known miss")] if d.name.startswith("todo_") else []
        out.append(pytest.param(d, id=f"{d.parent.name}/{d.name}", marks=marks))
    return out


def _logs(case: Path, expected: dict[str, object]) -> Path:
    """A case's own logs, a recorded run's (``"run": "peer_killed"``, the
    tuned set, ``"run": "blind/b33_..."``, the blind family, ``"run":
    "batch_e/e08_..."``, blind batch E, and so on for every batch), or a real
    excerpt's (``"excerpt": "corpus/tensorflow-tensorflow-7767"``)."""
    if "excerpt" in expected:
        return EXCERPTS / str(expected["excerpt"]) / "excerpt.txt"
    if "run" not in expected:
        return case / "logs"
    run = str(expected["run"])
    if run.startswith("batch_"):
        batch, name = run.split("/", 1)
        return RUNS.parent / "blind" / batch / "runs" / name / "logs"
    if run.startswith("blind/"):
        return RUNS.parent / "blind" / "runs" / run.removeprefix("blind/") / "logs"
    return RUNS / run / "logs"


@pytest.mark.parametrize("case", _cases())
def test_rule_case(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())
    code = expected["code"]
    assert case.parent.name == code
    tables, _ = load_tables(_logs(case, expected))
    rule = next(r for r in load_rules() if code == r.CODE)
    analysis = run_rules(establish(tables), [rule])
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


def _rule(code: str):  # type: ignore[no-untyped-def]
    return next(r for r in load_rules() if code == r.CODE)


@pytest.mark.parametrize(
    "case",
    sorted(RULE_CASES.glob("*/interaction_*")),
    ids=lambda d: f"{d.parent.name}/{d.name}",
)
def test_interaction_case(case: Path) -> None:
    expected = json.loads((case / "expected.json").read_text())
    code = expected["code"]
    job = establish(load_tables(_logs(case, expected))[0])
    alone = run_rules(job, [_rule(code)])
    assert [f for f in alone.findings if f.code == code], f"{code} does not fire alone"
    together = run_rules(job, sorted([_rule(code), *map(_rule, expected["with"])], key=lambda r: r.CODE))
    mine = [f for f in together.findings if f.code == code]
    status = {s.code: s for s in together.rules}[code]
    if expected["together"] == "stands down":
        assert mine == [] and status.status == "quiet" and status.reason.startswith("superseded"), status
        assert all(
            status_of.status == "fired"
            for c, status_of in {s.code: s for s in together.rules}.items()
            if c != code
        )
    else:
        assert mine, f"{code} does not stand beside {expected['with']}"


def test_every_rule_has_fires_and_quiet_cases() -> None:
    for rule in load_rules():
        names = [d.name for d in (RULE_CASES / rule.CODE).iterdir()]
        assert any(n.startswith("fires_") for n in names), rule.CODE
        assert any(n.startswith("quiet_") for n in names), rule.CODE
        assert all(n.startswith(("fires_", "quiet_", "todo_", "interaction_")) for n in names), names

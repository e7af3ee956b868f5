"""What blind batch AV's first score (93.8% class, 86.7% root, no false
alarm) missed, on the batch's own recording (fixtures/blind/batch_av, labels
committed before recording). Verdicts are held by tests/test_blind_runs.py;
this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.pipeline import load_tables

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_av" / "runs"


def test_a_notebooks_paragraph_result_is_read_as_the_output_it_holds() -> None:
    # av15: an Apache Zeppelin note (.zpln), its %sh paragraph's result holding the
    # launcher's combined output ('[chief-0] ', '[worker-1] ' prefixes): refused before
    # as 'a JSON document that no reader claims'.
    tables, _ = load_tables(RUNS / "av15" / "logs")
    named = {r["worker"] for r in tables.workers.to_pylist() if r["has_log"]}
    assert named == {"chief:0", "worker:0", "worker:1"}
    assert verdict(RUNS / "av15" / "logs") == ("collective_mismatch", ["chief:0"], "failure")

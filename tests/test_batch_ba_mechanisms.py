"""What blind batch BA's first score (87.5% class, 92.9% root, no false
alarm) missed, on the batch's own recording (fixtures/blind/batch_ba, labels
committed before recording). Verdicts are held by tests/test_blind_runs.py;
this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.facts import establish
from mwms_doctor.pipeline import load_tables
from mwms_doctor.series import same_fingerprint

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_ba" / "runs"


def test_logglys_search_export_is_read_by_host() -> None:
    # ba16: {"events": [{"timestamp": ms, "event": {"syslog": {"host": "mwms-worker-0"}},
    # "logmsg": ...}]}, newest first: refused before as a JSON document no reader claims.
    tables, _ = load_tables(RUNS / "ba16" / "logs")
    named = {r["worker"] for r in tables.workers.to_pylist() if r["has_log"]}
    assert named == {"chief:0", "worker:0", "worker:1"}
    assert verdict(RUNS / "ba16" / "logs") == ("worker_exception", ["worker:0"], "failure")


def test_numpy_2_scalars_in_a_list_of_ids_are_ids() -> None:
    # ba11: 'first batch example ids [np.int64(0), np.int64(1), ...]' the same on both workers.
    tables, _ = load_tables(RUNS / "ba11" / "logs")
    assert same_fingerprint(establish(tables)) is not None
    assert verdict(RUNS / "ba11" / "logs")[::2] == ("identical_data", "warning")

"""What blind batch AH's first score (100% class, 86.7% root) missed, on the
batch's own recordings (fixtures/blind/batch_ah, labels committed before
recording). Verdicts are held by tests/test_blind_runs.py; these hold how the
evidence is read."""

from __future__ import annotations

import json

from mwms_doctor.ingest.wrappers import detect, unwrap
from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_ah" / "runs"


def test_a_collectors_record_names_its_container_and_is_no_scripts_json() -> None:
    # Fluent Bit's docker tail (and Docker's fluentd driver): the raw line under "log",
    # where it came from beside it; the line is the worker's, not a structured record.
    rec = {"date": 1795827715.348, "log": "Traceback (most recent call last):", "stream": "stdout",
           "container_name": "/mwms-worker-0", "host": "ip-10-20-3-42", "source": "docker"}  # fmt: skip
    lines = [json.dumps(rec)] * 20
    u = unwrap(lines[0], detect(lines))
    assert (u.key, u.text) == ("mwms-worker-0", "Traceback (most recent call last):")


def test_an_s3_export_of_chunks_per_host_is_one_worker_a_container() -> None:
    # ah12: Fluent Bit -> S3, gzip NDJSON chunks per host per 15 s.
    tables, _ = load_tables(RUNS / "ah12" / "logs")
    named = {r["worker"] for r in tables.workers.to_pylist() if r["has_log"]}
    assert named == {"chief:0", "worker:0"}
    verdict = run_job(RUNS / "ah12" / "logs", formats=()).model.verdict
    assert (verdict["class"], verdict["root_workers"]) == ("oom", ["worker:0"])

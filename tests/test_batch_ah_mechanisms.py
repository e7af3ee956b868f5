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


def test_a_ci_console_printing_each_workers_tail_is_the_launcher() -> None:
    # ah10: GitLab's job trace runs the launcher, which says "worker:0 exited with 1
    # after 12.1s" for each worker and prints the last 15 lines of each failed
    # worker's log; the workers' own logs are in artifacts.zip. The runtime records
    # in the trace are theirs (their threads), so the trace is no worker of its own,
    # and the NaN is named on the three workers only.
    tables, _ = load_tables(RUNS / "ah10" / "logs")
    ev = tables.events.select(["worker", "source"]).to_pylist()
    assert {r["worker"] for r in ev if r["source"] == "job-88213-trace.log"} == {"?launcher"}
    verdict = run_job(RUNS / "ah10" / "logs", formats=()).model.verdict
    assert (verdict["class"], verdict["root_workers"]) == ("nan_loss", ["worker:0", "worker:1", "worker:2"])


def test_a_launchers_bare_exit_number_is_an_exit_code() -> None:
    from mwms_doctor.ingest.job import _ENDED

    m = _ENDED.search("launch: worker:0 exited with 1 after 12.1s")
    assert m is not None and (m["who"], m["code"]) == ("worker:0", "1")
    assert _ENDED.search("worker:0 exited with 1.5 GiB free") is None

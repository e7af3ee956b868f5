"""What blind batch J's first score showed unread, on the batch's own
recordings (fixtures/blind/batch_j, labels committed before recording).
Verdicts are held by tests/test_blind_runs.py; these hold how the evidence
is read, each mechanism on the run that showed it."""

from __future__ import annotations

from typing import Any

from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_j" / "runs"


def _workers(name: str) -> tuple[Any, dict[str, dict[str, Any]]]:
    tables, _ = load_tables(RUNS / name / "logs")
    return tables, {r["worker"]: r for r in tables.workers.to_pylist()}


def test_a_wrappers_exit_line_that_names_the_worker_itself_is_its_exit() -> None:
    """'[launcher] worker:0 exited with status 0' at the end of worker:0's own
    log (W&B output.log) is worker:0's exit, even after error lines."""
    _, workers = _workers("j04")
    assert {w: r["exit_code"] for w, r in workers.items()} == {"worker:0": 0, "worker:1": 0}
    _, workers = _workers("j11")
    assert all(r["exit_code"] == 0 for r in workers.values())


def test_buildkite_timestamps_are_peeled_and_timed() -> None:
    tables, _ = _workers("j15")
    rows = tables.events.to_pylist()
    assert all(not r["text"].startswith("_bk;t=") for r in rows)
    assert sum(r["ts_kind"] == "collector" for r in rows) > 5


def test_random_ids_do_not_hide_a_parallel_index() -> None:
    """job-<uuid>-parallel-3.log: the 3 numbers the worker."""
    _, workers = _workers("j10")
    assert sorted(workers) == [f"worker:{i}" for i in range(4)]
    assert workers["worker:3"]["sources"][0].endswith("-parallel-3.log")


def test_units_alike_in_other_folders_are_other_workers_the_chief_first() -> None:
    """container-0..2/step-04-train-worker.txt: two files of one name in two
    folders are two workers; container-0 holds the chief, then worker:0, worker:1."""
    _, workers = _workers("j12")
    assert sorted(workers) == ["chief:0", "worker:0", "worker:1"]
    assert workers["worker:1"]["sources"] == ["container-2/step-04-train-worker.txt"]


def test_log_viewer_exports_are_read_in_time_order_by_source() -> None:
    """A Kibana CSV export (newest first), Loki's logcli output (newest
    first), a Datadog logs API page and an Elasticsearch NDJSON dump: one
    worker per source, in time order."""
    for run, workers_in in (("j03", 3), ("j17", 2), ("j06", 2), ("j07", 3)):
        tables, workers = _workers(run)
        assert len([w for w, r in workers.items() if r["has_log"]]) == workers_in, run
        for w in workers:
            # The viewer's times (the lines the export timed alone) run forward.
            rows = sorted((r for r in tables.events.to_pylist() if r["worker"] == w), key=lambda r: r["line"])
            times = [r["ts"] for r in rows if r["ts_kind"] == "collector"]
            assert times == sorted(times), (run, w)
    assert run_job(RUNS / "j03" / "logs").model.verdict["root_workers"] == ["worker:2"]
    assert run_job(RUNS / "j06" / "logs").model.verdict["class"] == "version_skew"

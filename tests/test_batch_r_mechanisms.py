"""What blind batch R's first score showed unread, on the batch's own
recordings (fixtures/blind/batch_r, labels committed before recording).
Verdicts are held by tests/test_blind_runs.py; these hold how the evidence
is read, each mechanism on the run that showed it."""

from __future__ import annotations

from typing import Any

from mwms_doctor.facts import establish
from mwms_doctor.ingest.exports import sniff
from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_r" / "runs"


def _verdict(name: str) -> dict[str, Any]:
    return run_job(RUNS / name / "logs").model.verdict


def test_a_headerless_tab_separated_archive_is_split_by_its_writer_column() -> None:
    # r02: Papertrail's hourly archive: id, generated_at, received_at, ..., severity, program, message.
    text = (RUNS / "r02/logs/papertrail-archive/2026-11-25-03.tsv").read_text()
    assert sniff(text) == "tsv"
    tables, _ = load_tables(RUNS / "r02" / "logs")
    named = sorted(r["worker"] for r in tables.workers.to_pylist() if r["has_log"])
    assert named == ["worker:0", "worker:1", "worker:2"]
    # Entries of one second arrive in either order: worker:2's "done: 30 steps" stamped after its
    # last step by its own clock is after it, wherever the archive put it.
    assert establish(tables).facts.all_finished
    # Finished, and what its label says: worker:2, late at every step, set the job's pace (ST004).
    v = _verdict("r02")
    assert (v["status"], v["class"], v["root_workers"]) == ("warning", "straggler", ["worker:2"])


def test_a_refusal_at_a_port_the_dialed_task_never_listened_on_is_a_stale_cluster_list() -> None:
    # r05: worker:2 dialed worker:1 at 127.0.0.1:48111; worker:1's server was on 48101.
    v = _verdict("r05")
    assert (v["class"], v["root_workers"]) == ("tf_config_mismatch", ["worker:2"])
    assert "48111" in v["summary"] and "48101" in v["summary"]


def test_a_launchers_task_tag_with_a_slash_names_the_task() -> None:
    # r14: nox running a local launcher that tags lines "worker/1  | ".
    v = _verdict("r14")
    assert (v["class"], v["root_workers"]) == ("worker_exception", ["worker:1"])


def test_a_worker_the_launcher_ran_again_ended_as_its_last_run_did() -> None:
    # r16: "worker:3 exited with status 1", "restarting worker:3", later "worker:3 exited with status 0".
    tables, _ = load_tables(RUNS / "r16" / "logs")
    w = {r["worker"]: r for r in tables.workers.to_pylist()}
    assert w["worker:3"]["exit_code"] == 0 and "launcher.log:8" in w["worker:3"]["exit_note"]
    assert _verdict("r16")["status"] == "healthy"

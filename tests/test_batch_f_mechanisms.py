"""What blind batch F's first score showed unread, each mechanism on the
batch's own recordings (fixtures/blind/batch_f, labels committed before
recording). Verdicts are held by tests/test_blind_runs.py; these hold how
the evidence is read."""

from __future__ import annotations

from typing import Any

from mwms_doctor.engine import run_rules
from mwms_doctor.facts import establish
from mwms_doctor.inputs import name_hint
from mwms_doctor.pipeline import load_tables

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_f" / "runs"


def _job(name: str) -> Any:
    tables, _ = load_tables(RUNS / name / "logs")
    return tables, establish(tables)


def _workers(tables: Any) -> dict[str, dict[str, Any]]:
    return {r["worker"]: r for r in tables.workers.to_pylist()}


def test_a_hex_id_after_a_role_word_is_no_task_index() -> None:
    """Ray names a worker's files worker-<hex id>-<job>-<pid>.err: the digits
    that open the hex id are no index (they made a workers table of 285
    million rows, and the kernel killed the analyzer)."""
    assert (
        name_hint("worker-285226580a7ed659cf18e2153403df4c5c2dfec24221af5912b4a990-01000000-16996.err")
        is None
    )
    assert name_hint("logs/worker-3.log") == "worker:3"


def test_a_ray_driver_log_is_split_by_actor_and_a_launcher_kill_is_no_oom() -> None:
    tables, job = _job("f09_ray_worker3_sigkill")
    workers = _workers(tables)
    assert sorted(workers) == [f"worker:{i}" for i in range(5)]
    # Each actor's .err says who it is; its .out (read as the same process's
    # other stream) follows it.
    assert all(r["identity_from"].split(", ")[0] == "content" for r in workers.values())
    assert workers["worker:3"]["exit_code"] == 137
    analysis = run_rules(job)
    assert not any(f.code == "OM002" for f in analysis.findings)
    assert (analysis.verdict.cls, analysis.verdict.root_workers) == ("peer_died", ["worker:3"])


def test_coloured_lines_are_read_without_their_escapes() -> None:
    """loguru's ANSI colours after TF's harmless cuInit error: the coloured
    lines start records of their own, and the cuInit record stays harmless."""
    tables, _ = _job("f03_zip_loguru_six_workers")
    rows = tables.events.to_pylist()
    assert not any("\x1b" in r["text"] for r in rows)
    cuinit = [r for r in rows if "failed call to cuInit" in r["text"]]
    assert cuinit and all(r["benign"] and "\n" not in r["text"].strip() for r in cuinit)


def test_compose_prefixes_in_colour_split_the_workers() -> None:
    tables, _ = _job("f22_compose_fifo_hang")
    workers = _workers(tables)
    assert sorted(w for w in workers if workers[w]["has_log"]) == ["worker:0", "worker:1", "worker:2"]


def test_a_logfmt_log_is_a_log_and_names_its_task() -> None:
    """YARN containers' stdout in logfmt (ts=... level=info ... task=worker:0):
    not an environment dump; each names its task, and the leader's count of
    tasks is the chief and workers 0-3, no invented worker:4."""
    tables, _ = _job("f02_yarn_ctl_chief_four_workers")
    workers = _workers(tables)
    named = sorted(w for w in workers if not w.startswith("?"))
    assert named == ["chief:0", "worker:0", "worker:1", "worker:2", "worker:3"]
    assert all(workers[w]["has_log"] for w in named)
    logfmt = [r for r in tables.events.to_pylist() if r["text"].startswith("event=train")]
    assert logfmt and all(r["ts"] is not None and r["severity"] == "info" for r in logfmt)


def test_a_hosts_journal_is_its_workers_log_with_the_kernels_lines() -> None:
    tables, job = _job("f11_journald_cgroup_oom")
    workers = _workers(tables)
    assert workers["worker:1"]["has_log"]
    kills = [r for r in tables.events.to_pylist() if r["kind"] == "kernel.oom_kill"]
    assert kills and {r["worker"] for r in kills} == {"worker:1"}


def test_files_named_by_a_number_are_their_folders_processes() -> None:
    """A CloudWatch export: algo-N-<id>/000000.gz per host. Each folder is a
    process; the TF 2.17 worker's own tf_version=2.17.1 is read."""
    tables, _ = _job("f13_cloudwatch_tf217_worker")
    workers = _workers(tables)
    assert sorted(w for w in workers if workers[w]["has_log"]) == ["worker:0", "worker:1", "worker:2"]
    versions = {
        r["worker"]: dict(r["fields"])["version"]
        for r in tables.events.to_pylist()
        if r["kind"] == "env.tf_version"
    }
    assert versions["worker:2"] == "2.17.1" and versions["worker:0"] == "2.21.0"


def test_a_status_table_is_the_platforms_not_a_worker() -> None:
    """argo get's table (each pod, its phase, exit code 137): the platform's
    words about the workers; no worker is made of it."""
    tables, job = _job("f06_argo_worker3_never_scheduled")
    assert not any("argo" in w for w in _workers(tables))
    assert not any(f.code == "OM002" for f in run_rules(job).findings)


def test_a_wrappers_exit_line_in_a_workers_own_log_is_its_exit() -> None:
    tables, _ = _job("f16_wrapper_short_shard")
    workers = _workers(tables)
    assert workers["worker:1"]["exit_code"] == 0
    assert "exited with status 0" in (workers["worker:1"]["exit_note"] or "")


def test_a_closing_line_that_names_each_worker_is_one_line() -> None:
    """TF1 MonitoredTrainingSession code: every worker's last line is
    'training loop finished on <its task>'; the task masked, it is the
    script's closing line and the job finished."""
    _, job = _job("f04_rotated_v1_session")
    assert set(job.facts.finished) == {"chief:0", "worker:0", "worker:1"}

"""What blind batch AL's first score (81.2% class, 80.0% root) missed, on the
batch's own recording (fixtures/blind/batch_al, labels committed before
recording). Verdicts are held by tests/test_blind_runs.py; this holds how the
evidence is read."""

from __future__ import annotations

from mwms_doctor.facts import establish
from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_al" / "runs"


def test_a_shippers_tags_name_the_worker_of_each_event() -> None:
    # al14: Vector's NDJSON archive, each trainer event tagged {"role": "worker:1"}.
    tables, _ = load_tables(RUNS / "al14" / "logs")
    named = {r["worker"] for r in tables.workers.to_pylist() if r["has_log"]}
    assert named == {"chief:0", "worker:0", "worker:1"}


def test_a_scripts_word_for_the_sigterm_it_received_is_a_stop() -> None:
    # al14: worker:1's handler logs 'received signal 15 (SIGTERM), shutting down worker:1'
    # as its spot instance is reclaimed.
    tables, _ = load_tables(RUNS / "al14" / "logs")
    kinds = [
        r["kind"] for r in tables.events.select(["kind", "text"]).to_pylist() if "signal 15" in r["text"]
    ]
    assert kinds == ["tf.sigterm_caught"]
    verdict = run_job(RUNS / "al14" / "logs", formats=()).model.verdict
    assert (verdict["class"], verdict["root_workers"]) == ("preemption", ["worker:1"])


def test_each_workers_own_entry_behind_published_ports_is_one_cluster() -> None:
    # al08: every worker's TF_CONFIG lists itself where it binds (6135x) and its
    # peers where they are published (6145x); worker:2's published port refuses.
    # The lists agree as the peers dial each task: no TF_CONFIG mismatch.
    tables, _ = load_tables(RUNS / "al08" / "logs")
    facts = establish(tables).facts
    assert len({str(sorted(spec.items())) for spec, _ in facts.cluster_views.values()}) == 3
    assert len({str(sorted(spec.items())) for spec, _ in facts.dialed_views.values()}) == 1
    verdict = run_job(RUNS / "al08" / "logs", formats=()).model.verdict
    assert (verdict["class"], verdict["root_workers"]) == ("firewall_blocked", ["worker:2"])


def test_a_runners_log_of_how_its_workers_ended_is_read() -> None:
    # al08: launch.out holds only the launcher's own lines ('worker 0 finished: exit 1').
    tables, _ = load_tables(RUNS / "al08" / "logs")
    codes = {r["worker"]: r["exit_code"] for r in tables.workers.to_pylist()}
    assert codes == {"worker:0": 1, "worker:1": 1, "worker:2": 1}


def test_a_rank_is_no_task_where_the_script_names_its_task() -> None:
    # al11: the chief's log says 'starting chief:0 ...' and then '3 replicas in
    # sync (rank 0 of 3)'; the rank is not worker:0.
    tables, _ = load_tables(RUNS / "al11" / "logs")
    by_key = {tuple(r["keys"]): r["worker"] for r in tables.workers.to_pylist() if r["has_log"]}
    assert by_key == {("mltrain-a01",): "chief:0", ("mltrain-a02",): "worker:0", ("mltrain-b07",): "worker:1"}


def test_a_traceback_in_merged_output_is_the_worker_its_peers_lost() -> None:
    # al15: a script(1) typescript of chief:0 and worker:0, untagged; worker:0's
    # KeyError traceback, then the chief's 'Socket closed' from task worker:0.
    tables, _ = load_tables(RUNS / "al15" / "logs")
    codes = {r["worker"]: r["exit_code"] for r in tables.workers.to_pylist()}
    assert codes == {"chief:0": 1, "worker:0": 1}  # both of run_local.sh's closing lines
    verdict = run_job(RUNS / "al15" / "logs", formats=()).model.verdict
    assert (verdict["class"], verdict["root_workers"]) == ("worker_exception", ["worker:0"])

"""What blind batch P's first score showed unread, on the batch's own
recordings (fixtures/blind/batch_p, labels committed before recording).
Verdicts are held by tests/test_blind_runs.py; these hold how the evidence
is read, each mechanism on the run that showed it."""

from __future__ import annotations

from typing import Any

from mwms_doctor.facts import establish
from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_p" / "runs"


def _verdict(name: str) -> dict[str, Any]:
    return run_job(RUNS / name / "logs").model.verdict


def test_a_crash_before_tf_started_then_a_restart_that_finished_is_no_failure() -> None:
    # p03: Kubernetes' tensorflow.previous.log holds a FileNotFoundError under an
    # Airflow-style header ("[2026-11-25 02:15:29,948] {train_fit.py:16} INFO - ...");
    # read with its time, the traceback is before the restart's server start.
    tables, _ = load_tables(RUNS / "p03" / "logs")
    job = establish(tables)
    tb = job.rows.of(["py.traceback"], "worker:1")
    assert len(tb) == 1 and tb[0]["ts"] is not None
    assert job.facts.started_again_after(tb[0])
    v = _verdict("p03")
    assert (v["status"], v["class"]) == ("healthy", "healthy")


def test_a_pasted_issue_with_each_workers_output_in_a_fenced_block() -> None:
    # p11: a GitHub issue, <details><summary>worker N</summary> then ```shell blocks.
    tables, _ = load_tables(RUNS / "p11" / "logs")
    named = sorted(r["worker"] for r in tables.workers.to_pylist() if r["has_log"])
    assert named == ["worker:0", "worker:1", "worker:2"]
    job = establish(tables)
    # Each worker's last absl lines ("epoch 1: ...", then "done: 204 steps in 8.6s") are
    # folded into one record; its last line is the script's closing line: all finished.
    assert job.facts.all_finished
    v = _verdict("p11")
    assert v["class"] == "identical_data"


def test_markdown_is_split_only_where_two_blocks_each_hold_a_process_start() -> None:
    from mwms_doctor.ingest.exports import sniff, to_json_lines

    start = (
        "I0000 00:00:1795573281.647559   27027 grpc_server_lib.cc:467] Started server with target: grpc://h:1"
    )
    two = f"## worker 0\n\n```\n{start}\nstep 1\n```\n\n**worker 1:**\n~~~text\n{start}\nstep 2\n~~~\n"
    assert sniff(two) == "markdown"
    lines = to_json_lines(two, "markdown").splitlines()
    assert [('"worker 0"' in ln, '"worker 1"' in ln) for ln in lines] == [(True, False)] * 2 + [
        (False, True)
    ] * 2
    one = (
        f"My job fails:\n```\n{start}\nTraceback (most recent call last):\n```\nthanks\n```\npip list\n```\n"
    )
    assert sniff(one) is None


def test_kubectl_get_pods_says_how_each_pod_ended() -> None:
    # p03: "ctr-train-worker-1   0/1   Completed   1 (7s ago)   13s": exit 0 after one restart.
    tables, _ = load_tables(RUNS / "p03" / "logs")
    ended = {r["worker"]: (r["exit_code"], r["exit_note"]) for r in tables.workers.to_pylist()}
    assert ended == {w: (0, "Completed (kubectl get pods)") for w in ("worker:0", "worker:1")}
    # Another batch's: the command line first, and pods named with a controller's suffix.
    for run, worker in (("batch_i/runs/i17", "worker:3"), ("batch_o/runs/o13", "worker:1")):
        t, _ = load_tables(FIXTURES / "blind" / run / "logs")
        notes = {r["worker"]: (r["exit_code"], r["exit_note"]) for r in t.workers.to_pylist()}
        assert notes[worker] == (None, "Error (kubectl get pods)")


def test_a_converted_exports_evidence_names_its_own_lines() -> None:
    # p11's evidence is in issue.md at the lines the reader sees there, not the conversion's.
    model = run_job(RUNS / "p11" / "logs").model
    lines = (RUNS / "p11" / "logs" / "issue.md").read_text().split("\n")
    shown = [e for f in model.findings for e in f.evidence]
    assert shown
    for e in shown:
        assert e.text.splitlines()[0].strip() in lines[e.line - 1], (e.line, e.text)

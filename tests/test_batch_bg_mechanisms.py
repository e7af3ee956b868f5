"""What blind batch BG's first score (100% class, 92.9% root, no false alarm)
left to read better, on the batch's own recording (fixtures/blind/batch_bg,
labels committed before recording). Verdicts are held by
tests/test_blind_runs.py; this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.ingest.exports import printed_text
from mwms_doctor.pipeline import load_tables

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_bg" / "runs"


def test_a_list_of_results_each_naming_its_target_keeps_each_targets_lines_apart() -> None:
    # bg08: Puppet Bolt's 'command run --format json': {"items": [{"target": "gpu-box-01",
    # "value": {"stdout", "stderr", "merged_output", "exit_code"}}, ...]}. Read as one
    # unnamed stream before (the nan on 'unnamed worker launcher'); merged_output repeats
    # both streams and is left out where they are.
    logs = RUNS / "bg08" / "logs"
    text = printed_text((logs / "bolt-command-run.json").read_text())
    assert "[gpu-box-01] " in text and "[gpu-box-02] " in text
    assert text.count("training diverged") == 2
    tables, _ = load_tables(logs)
    assert {r["worker"] for r in tables.workers.to_pylist() if r["has_log"]} == {"worker:0", "worker:1"}
    assert verdict(logs) == ("nan_loss", ["worker:0", "worker:1"], "failure")


def test_a_hang_where_every_worker_stopped_at_the_same_step_says_so_and_names_no_one_first() -> None:
    # bg03 (the known hang kind): worker:1's input read blocks, and every worker's last
    # progress is 'epoch 2 step 10/10'. The verdict names them all and says why: nothing in
    # the logs tells the one blocked in its own code from the ones waiting for it.
    from mwms_doctor.pipeline import run_job

    v = run_job(RUNS / "bg03" / "logs", formats=()).model.verdict
    assert v["class"] == "hang"
    assert "nothing in these logs says which of them blocked first" in v["summary"]
    assert "stopped progressing first" not in v["summary"]

"""What blind batch U's first score (93.3% class, 85.7% root) missed, on the
batch's own recordings (fixtures/blind/batch_u, labels committed before
recording). Verdicts are held by tests/test_blind_runs.py; these hold how the
evidence is read, each mechanism on the run that showed it."""

from __future__ import annotations

import json

from mwms_doctor.ingest.exports import convert, sniff
from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_u" / "runs"


def test_a_chat_export_with_each_workers_output_in_a_fenced_block() -> None:
    # u05: a Slack export; each message pastes one worker's output between inline fences
    # ("chief:0:\n```WARNING: ...```"), its <, > and & escaped as HTML.
    day = next((RUNS / "u05" / "logs" / "slack-export").glob("*/*.json"))
    text = day.read_text()
    assert sniff(text[:65536]) == "chat"
    lines = [json.loads(ln) for ln in convert(text, "chat")[0].splitlines()]
    writers = {ln.get("kubernetes", {}).get("pod", {}).get("name") for ln in lines}
    assert len(writers) == 3 and None not in writers
    assert not any("```" in ln["message"] or "&lt;" in ln["message"] for ln in lines)
    named = {r["worker"] for r in load_tables(RUNS / "u05" / "logs")[0].workers.to_pylist() if r["has_log"]}
    assert named == {"chief:0", "worker:0", "worker:1"}
    assert run_job(RUNS / "u05" / "logs", formats=()).model.verdict["status"] == "healthy"


def test_a_hang_begins_where_a_keras_bar_got_least_far() -> None:
    # u10: verbose=1 bars, no times; worker:0's bar of epoch 2 reached 10/10, worker:1's
    # 9/10 before its callback blocked: worker:0 waits for it in the all-reduce.
    v = run_job(RUNS / "u10" / "logs", formats=()).model.verdict
    assert (v["class"], v["root_workers"]) == ("hang", ["worker:1"])

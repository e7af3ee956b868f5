"""What blind batch T's first score showed unread, on the batch's own
recordings (fixtures/blind/batch_t, labels committed before recording).
Verdicts are held by tests/test_blind_runs.py; these hold how the evidence
is read, each mechanism on the run that showed it."""

from __future__ import annotations

from mwms_doctor.facts import establish
from mwms_doctor.ingest.lines import parse_header
from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_t" / "runs"


def test_asctime_with_msecs_again_and_a_level_letter_before_the_logger() -> None:
    # t02: "%(asctime)s.%(msecs)03d] %(process)d %(levelname).1s %(name)s: %(message)s"
    h = parse_header("[2026-11-25 04:51:08,889.889] 11705 I mw.train: epoch=3 step=18/20 loss=1.89336", 2000)
    assert h is not None and h.ts is not None and h.ts.microsecond == 889000
    assert (h.severity, h.msg) == ("info", "epoch=3 step=18/20 loss=1.89336")
    # A letter with no logger after it is a word of the message.
    plain = parse_header("2026-11-25 10:00:00 I think it works", 2000)
    assert plain is not None and plain.severity is None and plain.msg == "I think it works"


def test_a_total_reached_by_a_stride_of_steps_counted_from_zero() -> None:
    # t02: steps printed 0, 2 ... 18 of "/20" in each epoch, then the script's closing words.
    assert establish(load_tables(RUNS / "t02" / "logs")[0]).facts.all_finished
    assert run_job(RUNS / "t02" / "logs").model.verdict["status"] == "healthy"


def test_a_launchers_failed_end_before_the_worker_came_up_again_is_no_end() -> None:
    # t03: go-task's "task: Failed to run task "train:worker-1": exit status 1", then worker:1's
    # tagged lines start its server again and it finishes.
    w = {r["worker"]: r for r in load_tables(RUNS / "t03" / "logs")[0].workers.to_pylist()}
    assert w["worker:1"]["exit_code"] is None
    assert run_job(RUNS / "t03" / "logs").model.verdict["status"] == "healthy"

"""What blind batch AF's first score (68.8% class, 71.4% root) missed, on the
batch's own recordings (fixtures/blind/batch_af, labels committed before
recording). Verdicts are held by tests/test_blind_runs.py; these hold how the
evidence is read, each mechanism on the run that showed it."""

from __future__ import annotations

import pytest
from mwms_doctor.pipeline import load_tables, run_job
from mwms_doctor.text import mask_message

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_af" / "runs"


@pytest.mark.parametrize(
    ("a", "b"),
    [
        # af02, af04: the chief saves to model_out/ckpt, the workers to model_out/tmp_worker_N/ckpt.
        (
            "training finished steps=30 saved=model_out/ckpt",
            "training finished steps=30 saved=model_out/tmp_worker_1/ckpt",
        ),
        ("saved /srv/run/ckpt", "saved /srv/run/tmp_worker_2/ckpt"),
    ],
)
def test_a_path_relative_or_absolute_is_one_path(a: str, b: str) -> None:
    assert mask_message(a) == mask_message(b)


@pytest.mark.parametrize("text", ["Epoch 2/10", "8/8 - 1s - loss: 0.2 - 44ms/step"])
def test_a_fraction_or_a_rate_is_no_path(text: str) -> None:
    assert "<path>" not in mask_message(text)


@pytest.mark.parametrize("run", ["af02", "af04"])
def test_a_job_whose_workers_close_with_their_own_save_paths_finished(run: str) -> None:
    assert run_job(RUNS / run / "logs", formats=()).model.verdict["status"] == "healthy"


def test_sruns_task_numbers_are_ranks_the_chief_first() -> None:
    # af10: "srun: error: node-17: task 1: Out Of Memory" with a chief: task 1 is worker:0.
    tables, _ = load_tables(RUNS / "af10" / "logs")
    exits = {r["worker"]: r["exit_code"] for r in tables.workers.to_pylist()}
    assert exits == {"chief:0": 1, "worker:0": 137}
    verdict = run_job(RUNS / "af10" / "logs", formats=()).model.verdict
    assert (verdict["class"], verdict["root_workers"]) == ("oom", ["worker:0"])


def test_a_terminal_capture_is_one_section_a_prompt() -> None:
    # af12: `tmux capture-pane` of two panes, each "dev@ws-ranker:~/regress$ python train.py ..."
    # then that process's output; each pane's "first local batch ... batch_sha1=6fcc91057bcc"
    # is the same but for the worker's own name.
    tables, _ = load_tables(RUNS / "af12" / "logs")
    assert {r["worker"] for r in tables.workers.to_pylist() if r["has_log"]} == {"worker:0", "worker:1"}
    assert run_job(RUNS / "af12" / "logs", formats=()).model.verdict["class"] == "identical_data"

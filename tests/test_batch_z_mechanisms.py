"""What blind batch Z's first score (80.0% class, 64.3% root) missed, on the
batch's own recordings (fixtures/blind/batch_z, labels committed before
recording). Verdicts are held by tests/test_blind_runs.py; these hold how the
evidence is read, each mechanism on the run that showed it."""

from __future__ import annotations

from pathlib import Path

import pytest
from mwms_doctor.ingest.exports import _SECTION, _banner, sniff
from mwms_doctor.pipeline import load_tables, run_job
from mwms_doctor.text import mask_message

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_z" / "runs"


def _named(run: str) -> dict[str, list[str]]:
    tables, _ = load_tables(RUNS / run / "logs")
    return {r["worker"]: list(r["keys"] or []) for r in tables.workers.to_pylist() if r["has_log"]}


@pytest.mark.parametrize("run", ["z02", "z09", "z10"])
def test_a_rank_is_no_task_index_where_the_line_names_the_task(run: str) -> None:
    # "tf 2.21.0 / numpy 2.4.6 / python 3.11.7 on chief:0 (rank 0 of 3)": with a chief,
    # rank 0 is the chief, not worker:0; every task was one off before.
    named = _named(run)
    assert "chief:0" in named
    if run == "z02":  # Tekton's prefixes name the task runs: train-chief-0 is chief:0's
        assert named["chief:0"] == ["train-chief-0"] and named["worker:1"] == ["train-worker-1"]


def test_a_structured_loggers_role_field_is_masked_like_a_task() -> None:
    # z02: every worker's closing line, flattened from JSON, differs only by its role.
    a = "training loop finished: 45 steps severity=INFO role=chief index=0"
    b = "training loop finished: 45 steps severity=INFO role=worker index=1"
    assert mask_message(a) == mask_message(b)
    assert run_job(RUNS / "z02" / "logs", formats=()).model.verdict["status"] == "healthy"


def test_a_bracketed_tag_is_no_json_array() -> None:
    # z02: `tkn pipelinerun logs` lines open with "[train-chief-0 : train] "; some hold JSON.
    text = (RUNS / "z02" / "logs" / "tkn-pipelinerun-logs.txt").read_text()
    assert sniff(text[:65536]) != "json_document"


def test_makes_output_sync_blocks_split_by_the_command_that_starts_each_task() -> None:
    # z12: make -j2 --output-sync=target prints each recipe's command line,
    # "TF_CONFIG='{... "task": {"type": "worker", "index": 0}}' python3 train.py", then its
    # whole output as one block; worker:0's says "input exhausted at step 7 of epoch 2".
    text = (RUNS / "z12" / "logs" / "make-train.log").read_text()
    assert sniff(text[:65536]) == "sections"
    assert [_banner(m) for m in _SECTION.finditer(text)] == ["worker-0", "worker-1"]
    v = run_job(RUNS / "z12" / "logs", formats=()).model.verdict
    assert (v["class"], v["root_workers"]) == ("data_exhaustion", ["worker:0"])


@pytest.mark.parametrize(
    ("line", "task"),
    [
        ("tf 2.21.0 / numpy 2.4.6 / python 3.11.7 on chief:0 (rank 0 of 3)", ("chief", "0")),
        ("task=worker:2 rank 3/4", ("worker", "2")),
        ("worker:1 rank 2 of 3", ("worker", "1")),
        # A task it speaks of is not who it is.
        ("rank 1 of 3: waiting for chief:0 to start", None),
    ],
)
def test_a_line_names_its_own_task_not_one_it_speaks_of(line: str, task: tuple[str, str] | None) -> None:
    from mwms_doctor.ingest.identity import _TASK_NAMED

    m = _TASK_NAMED.search(line)
    assert (m.group(1, 2) if m else None) == task


def test_a_schedulers_cancel_record_is_no_step_and_no_last_words(tmp_path: Path) -> None:
    # z05 (found by scripts/metamorphic.py): every srun task file ends with slurmstepd's
    # "*** STEP 551207.0 ON cn042 CANCELLED AT ... DUE TO TIME LIMIT ***". Its
    # "STEP 5512(07)" and "TIME" read as a training step (the digits cut short), so each
    # worker's last progress was its kill: "no progress for 0 s". Split into .out and
    # .err, the record took its stream's last time and became each worker's last
    # words, hiding the one that stopped on its own line ("flushing metric shipper").
    from mwms_doctor.pipeline import load_job

    from .relayout import TRANSFORMS, Layout

    job, _ = load_job(RUNS / "z05" / "logs")
    last = job.facts.last_progress
    assert {w: "CANCELLED" in str(r["text"]) for w, r in last.items()} == dict.fromkeys(last, False)
    hang = [f for f in run_job(RUNS / "z05" / "logs", formats=()).model.findings if f.code == "HG001"]
    assert hang and "no progress for 51 s" in hang[0].summary
    split, _ = TRANSFORMS["split"]
    src = RUNS / "z05" / "logs"
    assert split(src, tmp_path, Layout(src))
    verdict = run_job(tmp_path, formats=()).model.verdict
    assert (verdict["class"], verdict["root_workers"]) == ("hang", ["worker:1"])


def test_an_input_time_apart_from_others_that_took_none() -> None:
    # z11: "epoch 3/3 took 3.3s ... input_ms_per_batch=376" on worker:2, "=0" on the
    # others (their input took no time to speak of): no ratio to take, a straggler all
    # the same. Before, a zero among the others ruled the comparison out.
    from mwms_doctor.pipeline import load_job
    from mwms_doctor.series import standing_apart

    job, _ = load_job(RUNS / "z11" / "logs")
    apart = standing_apart(job)
    assert apart is not None and (apart.worker, apart.key, apart.higher) == (
        "worker:2",
        "input_ms_per_batch",
        True,
    )


@pytest.mark.parametrize(
    ("key", "unit", "seconds"),
    [
        ("input_ms_per_batch", None, 1e-3),
        ("data_time", None, 1.0),
        ("load", "ms", 1e-3),
        ("read_us", None, 1e-6),
    ],
)
def test_a_named_times_unit(key: str, unit: str | None, seconds: float) -> None:
    from mwms_doctor.series import _seconds

    assert _seconds(key, unit) == seconds

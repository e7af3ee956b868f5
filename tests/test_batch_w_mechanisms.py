"""What blind batch W's first score (81.2% class, 76.9% root) missed, on the
batch's own recordings (fixtures/blind/batch_w, labels committed before
recording). Verdicts are held by tests/test_blind_runs.py; these hold how the
evidence is read, each mechanism on the run that showed it."""

from __future__ import annotations

from pathlib import Path

import pytest
from mwms_doctor.facts import establish
from mwms_doctor.ingest.job import attempt_of
from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_w" / "runs"


def _exits(run: str) -> dict[str, tuple[int | None, str | None]]:
    tables, _ = load_tables(RUNS / run / "logs")
    return {r["worker"]: (r["exit_code"], r["exit_note"]) for r in tables.workers.to_pylist() if r["has_log"]}


def test_a_plain_slurm_jobs_step_record_speaks_for_each_of_its_tasks() -> None:
    # w02: srun wrote slurm-418872_<t>.out for each task; sacct's one step of the job,
    # 418872.0 COMPLETED 0:0, is how all three ended. The chief exited first, and
    # worker:1's later heartbeat failures to it are then shutdown noise.
    assert {w: code for w, (code, _) in _exits("w02").items()} == {"chief:0": 0, "worker:0": 0, "worker:1": 0}
    assert run_job(RUNS / "w02" / "logs", formats=()).model.verdict["status"] == "healthy"


@pytest.mark.parametrize(
    ("source", "attempt"),
    [
        ("mwms-worker-1.previous.log", -0.5),
        ("pods/worker-1/previous.log", -0.5),
        ("worker-1-prev.log", -0.5),
        ("previous/worker-1.log", -0.5),
        ("job-1234/attempt-0/mwms-worker-1.previous.log", -0.5),
        ("job/attempt-2/worker-1.log", 2),
        ("mwms-worker-1.log", 0),
        ("preview-worker-1.log", 0),
    ],
)
def test_the_previous_containers_log_is_an_earlier_attempt(source: str, attempt: float) -> None:
    assert attempt_of(source) == attempt


def test_an_error_in_the_previous_containers_log_ended_only_that_attempt() -> None:
    # w03: `kubectl logs --previous` kept worker-1's first container, which died on a
    # TimeoutError before TensorFlow started; its current container joined and trained.
    v = run_job(RUNS / "w03" / "logs", formats=()).model.verdict
    assert v["status"] == "healthy"


def test_a_structured_loggers_task_field_is_metadata_wherever_it_stands() -> None:
    # w05: logfmt, 'ts=... level=info task=worker:2 msg="epoch 2 step 6/12" loss=1.9618':
    # once its time and level are read, the task field leads the text; the line is progress.
    job = establish(load_tables(RUNS / "w05" / "logs")[0])
    last = job.facts.last_progress
    assert set(last) == {"worker:0", "worker:1", "worker:2"}
    assert all(r["kind"] == "train.step" and r["fields"]["step"] == "6" for r in last.values())


def test_a_hang_begins_where_the_scripts_own_recurring_work_went_least_far() -> None:
    # w05: every worker's last step is "epoch 2 step 6/12"; worker:0 and worker:1 then
    # logged their loader finishing part-00003 and reading part-00004, work worker:2 had
    # logged at every file before; worker:2 logged nothing more (its read never returned).
    v = run_job(RUNS / "w05" / "logs", formats=()).model.verdict
    assert (v["class"], v["root_workers"]) == ("hang", ["worker:2"])
    assert "no progress for 46 s" in v["summary"]


def test_lsfs_job_report_at_the_head_of_the_output_is_how_the_job_ended() -> None:
    # w05: each array task's output file opens with LSF's report: TERM_RUNLIMIT,
    # "Exited with signal termination: Killed." (a deadline's SIGKILL).
    exits = _exits("w05")
    assert {code for code, _ in exits.values()} == {137}
    assert all(note and "TERM_RUNLIMIT" in note for _, note in exits.values())


def test_a_tf_config_logged_as_its_two_parts_is_read() -> None:
    # w07: '[...] INFO [mwms.train:51] TF_CONFIG cluster={"worker": [...]} task={...}';
    # worker:2's cluster names worker:0 at an old port, where nothing listens.
    job = establish(load_tables(RUNS / "w07" / "logs")[0])
    views = {w: spec for w, (spec, _) in job.facts.cluster_views.items()}
    assert views["worker:2"]["worker"][0] == "127.0.0.1:53257"
    assert views["worker:0"]["worker"][0] == views["worker:1"]["worker"][0] == "127.0.0.1:53240"
    v = run_job(RUNS / "w07" / "logs", formats=()).model.verdict
    assert (v["class"], v["root_workers"]) == ("tf_config_mismatch", ["worker:2"])


def test_systemds_record_of_a_units_main_process_is_how_it_ended() -> None:
    # w06: each node's `journalctl -u` of its unit. The chief's and worker:0's units
    # say "Main process exited, code=killed, status=9/KILL" (the deadline's SIGKILL);
    # worker:1's, stopped by SIGTERM while it waited on a lock, says only "Deactivated
    # successfully.", which a service stopped by SIGTERM says too: no exit code for it.
    exits = {w: code for w, (code, _) in _exits("w06").items()}
    assert exits == {"chief:0": 137, "worker:0": 137, "worker:1": None}


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        # w02: the sacct table says every task COMPLETED 0:0; coloured, it must say the same.
        (RUNS / "w02", ("healthy", "healthy", ())),
        # s07: a hung job gathered while every pod's status said running; coloured, still not healthy.
        (
            FIXTURES / "blind" / "batch_s" / "runs" / "s07",
            ("warning", "hang", ("chief:0", "worker:0", "worker:1")),
        ),
    ],
    ids=["w02", "s07"],
)
def test_a_platform_record_in_terminal_colours_says_what_it_says_without(
    run: Path, expected: tuple[str, str, tuple[str, ...]], tmp_path: Path
) -> None:
    from .relayout import Layout, t_ansi, verdict

    out = tmp_path / "logs"
    assert t_ansi(run / "logs", out, Layout(run / "logs"))
    assert verdict(out) == expected

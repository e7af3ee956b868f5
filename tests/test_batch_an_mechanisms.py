"""What blind batch AN's first score (50.0% class, 53.3% root, three healthy
jobs called failed) missed, on the batch's own recording
(fixtures/blind/batch_an, labels committed before recording). Verdicts are
held by tests/test_blind_runs.py; this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.facts import establish
from mwms_doctor.pipeline import load_tables

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_an" / "runs"


def _workers(run: str) -> dict[str, dict[str, object]]:
    tables, _ = load_tables(RUNS / run / "logs")
    return {r["worker"]: r for r in tables.workers.to_pylist()}


def _verdict(run: str) -> tuple[str, list[str], str]:
    return verdict(RUNS / run / "logs")


def test_a_tasks_own_script_beside_its_log_names_it() -> None:
    # an05: Nextflow work dirs, each with .command.sh setting the task's TF_CONFIG.
    rows = _workers("an05")
    assert {w: r["identity_from"] for w, r in rows.items()} == {
        "worker:0": "TF_CONFIG beside it",
        "worker:1": "TF_CONFIG beside it",
        "worker:2": "TF_CONFIG beside it",
    }


def test_every_worker_exiting_0_ends_a_job_that_printed_no_progress() -> None:
    # an05: the script logs nothing at INFO; every .exitcode is 0; worker:1's heartbeat
    # to the leader, which had exited, failed just before its own clean exit.
    tables, _ = load_tables(RUNS / "an05" / "logs")
    facts = establish(tables).facts
    assert set(facts.finished) == {"worker:0", "worker:1", "worker:2"}
    assert _verdict("an05")[2] == "healthy"


def test_a_learned_prefix_holds_either_stream() -> None:
    # an15: Cloud Foundry's '[APP/PROC/WORKER/1] OUT' and '... ERR': one worker, both streams.
    rows = _workers("an15")
    assert {w: r["keys"] for w, r in rows.items()} == {
        "chief:0": ["APP/PROC/CHIEF/0"],
        "worker:0": ["APP/PROC/WORKER/0"],
        "worker:1": ["APP/PROC/WORKER/1"],
        "worker:2": ["APP/PROC/WORKER/2"],
    }
    assert all(r["exit_code"] == 0 for r in rows.values())  # each one's 'Exit status 0'


def test_fluentds_out_file_is_an_export_by_container() -> None:
    # an16: '<time>\t<tag>\t{"container_name": "/mwms-worker-0", "source": "stdout", "log": ...}'
    rows = _workers("an16")
    assert {w: r["keys"] for w, r in rows.items()} == {
        "worker:0": ["mwms-worker-0"],
        "worker:1": ["mwms-worker-1"],
    }


def test_a_thread_dump_is_no_closing_line_and_names_the_worker_in_its_own_code() -> None:
    # an02: Slurm's time limit; faulthandler dumps on SIGUSR1: worker:1 in its own wait,
    # the others in TF's step. Every worker's last words were the dump's header.
    tables, _ = load_tables(RUNS / "an02" / "logs")
    assert not establish(tables).facts.finished
    assert _verdict("an02") == ("hang", ["worker:1"], "failure")


def test_slurms_cancel_of_the_job_is_each_tasks_stop() -> None:
    # an02: '*** JOB 48213 ON cn114 CANCELLED AT ... DUE TO TIME LIMIT ***' in the batch
    # output; the tasks' files are train-48213-<t>.out.
    rows = _workers("an02")
    assert {w: r["exit_signal"] for w, r in rows.items()} == dict.fromkeys(rows, "SIGTERM")


def test_the_platforms_oomkilled_says_why_a_wrapper_saw_exit_137() -> None:
    # an04: compose's 'exited with code 137' and docker inspect's State.OOMKilled.
    assert "OOMKilled" in str(_workers("an04")["worker:1"]["exit_note"])
    assert _verdict("an04")[:2] == ("oom", ["worker:1"])


def test_docker_inspect_gives_the_containers_tf_config() -> None:
    # an08: podman inspect's Config.Env holds each TF_CONFIG; peers dial published ports.
    tables, _ = load_tables(RUNS / "an08" / "logs")
    views = establish(tables).facts.cluster_views
    assert set(views) == {"chief:0", "worker:0", "worker:1"}
    assert _verdict("an08")[:2] == ("firewall_blocked", ["worker:0"])


def test_cloudwatchs_log_stream_names_each_writer() -> None:
    # an14: aws logs filter-log-events: one JSON document, events with logStreamName algo-N.
    rows = _workers("an14")
    assert sorted(rows) == ["worker:0", "worker:1", "worker:2"]
    assert _verdict("an14")[:2] == ("preemption", ["worker:2"])


def test_a_scripts_count_of_batches_per_epoch_is_its_epochs_length() -> None:
    # an11: 'input exhausted for epoch epoch=1 batches=13' against the other's 'batches=20'.
    assert _verdict("an11")[:2] == ("data_exhaustion", ["worker:1"])


def test_srun_labels_are_ranks_the_chief_first() -> None:
    # an13: srun --label '0: ', '1: ', '2: ' in a cluster with a chief: rank 1 is worker:0.
    rows = _workers("an13")
    assert {w: r["keys"] for w, r in rows.items() if r["has_log"]} == {
        "chief:0": ["0"],
        "worker:0": ["1"],
        "worker:1": ["2"],
    }

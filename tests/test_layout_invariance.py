"""The same real recordings, handed over in other real layouts, give the same
verdict (status, class, root workers): compressed, CRLF, nested, archived,
behind kubectl's stamps, in Docker's json-file, as two streams, or in one
file with each line behind its worker's tag (docker compose, a fan-out
script, mpirun). ``scripts/metamorphic.py`` runs every transform on every
recorded set; these hold the runs whose layouts once changed the verdict:
exit records compressed or beside a combined log, profiler traces
compressed, a CSV-looking line with a carriage return, record continuation
lines on stderr, rotated gzip parts."""

from __future__ import annotations

from pathlib import Path

import pytest

from .paths import FIXTURES
from .relayout import TRANSFORMS, Layout, verdict

CASES = [
    "runs/peer_killed",  # exit records (137) carry the kill
    "runs/host_oom",  # a MemoryError traceback, exit records
    "runs/never_started",  # a worker with no log, its exit record says it never ran
    "runs/heldout_firewall_4_workers",  # multi-line gRPC errors name the blocked port
    "runs/gz_rotated_oom",  # rotated parts, one of them gzip
    "runs/clock_skew_peer_killed",  # two hosts' clocks skewed
    "runs/uneven_data",  # one worker out of data first
    "runs/identical_data",  # profiler traces decide it
    "runs/healthy",
    # Untimed Estimator-era logging; the script's closing words printed on
    # stdout, apart from the stderr that holds the peers' shutdown noise.
    "blind/batch_e/runs/e03_healthy_tf1_late_joiner",
    # An untimed traceback on stderr: the script's timed progress on stdout
    # is not after it for all that is known.
    "blind/runs/b33_valueerror_midtraining_ctl",
    "blind/batch_k/runs/k18",  # screen's numbered logs (screenlog.0, .1, .2)
    # A script's own JSON logger (structlog) alone on stdout: its worker's
    # lines, not a launcher's, though the JSON reader also reads viewers' exports.
    "blind/batch_k/runs/k04",
    # W&B run folders named by run id: stdout beside stderr in a folder that
    # names no worker is the same process's other stream.
    "blind/batch_j/runs/j04",
]


@pytest.fixture(scope="module")
def bases() -> dict[str, tuple[object, Layout]]:
    return {name: (verdict(FIXTURES / name / "logs"), Layout(FIXTURES / name / "logs")) for name in CASES}


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("name", CASES)
def test_the_verdict_does_not_depend_on_the_layout(
    name: str, transform: str, bases: dict[str, tuple[object, Layout]], tmp_path: Path
) -> None:
    base, layout = bases[name]
    fn, needs = TRANSFORMS[transform]
    if needs and not layout.ok:
        pytest.skip("a layout the tool did not read one file per worker")
    logs = FIXTURES / name / "logs"
    if not fn(logs, tmp_path / "logs", layout):
        pytest.skip("a layout this job could not have had (a launcher's ranks with a chief)")
    got = verdict(tmp_path / "logs")
    if transform == "no-exits":
        # Without the runner's exit records a stall is no longer proven by a
        # kill: the status may soften (failure -> warning), never the class.
        assert got[1:] == base[1:] and (got[0] == base[0] or (base[0], got[0]) == ("failure", "warning"))
    else:
        assert got == base
    assert base[0] != "refused"


def test_the_transforms_run_where_they_should() -> None:
    # Every case is one file per worker with times: the transforms that move
    # lines between files really ran on them (a skip is no pass).
    assert all(Layout(FIXTURES / name / "logs").ok for name in CASES)


@pytest.mark.parametrize("transform", ["crlf", "utf16", "targz"])
@pytest.mark.parametrize(
    "name",
    [
        "blind/batch_l/runs/l11",  # Fluent Bit's stdout records (CRLF: the record's end)
        "blind/batch_n/runs/n19",  # pueue's sections (CRLF: the banner's end)
        "blind/batch_l/runs/l16",  # Nextflow's hidden .command files (inside an archive)
        "blind/batch_o/runs/o07",  # Apptainer's hidden log folder (inside an archive)
    ],
)
def test_new_layouts_survive_line_ends_encodings_and_archives(
    name: str, transform: str, tmp_path: Path
) -> None:
    logs = FIXTURES / name / "logs"
    fn, _ = TRANSFORMS[transform]
    fn(logs, tmp_path / "logs", None)
    assert verdict(tmp_path / "logs") == verdict(logs)


@pytest.mark.parametrize(
    "name",
    [
        "blind/batch_l/runs/l06",  # ansible-playbook's output
        "blind/batch_m/runs/m12",  # a Splunk CSV, newest first
        "blind/batch_n/runs/n19",  # pueue's sections
    ],
)
def test_a_terminals_colours_do_not_hide_an_exports_entries(name: str, tmp_path: Path) -> None:
    logs = FIXTURES / name / "logs"
    TRANSFORMS["ansi"][0](logs, tmp_path / "logs", None)
    assert verdict(tmp_path / "logs") == verdict(logs)


def test_a_compressed_program_file_is_still_no_log(tmp_path: Path) -> None:
    # run_all.sh.gz beside out/w0.err.gz ...: a compressor's suffix hides neither.
    logs = FIXTURES / "blind/batch_n/runs/n08/logs"
    TRANSFORMS["gzip"][0](logs, tmp_path / "logs", None)
    assert verdict(tmp_path / "logs") == verdict(logs)


# A run and the one layout that once changed its verdict, where other layouts of
# it still do for reasons of their own (each named where it is left).
PAIRS = [
    # Attempt folders inside another attempt folder (job-1234/attempt-0/.../attempt-2/):
    # the outer number was read for all, so attempt 1's exit 1 was the workers' last.
    ("blind/batch_s/runs/s14", "nested"),
    # A restart wrapper's "worker 1 exited with status 1, restarting in 2s" on stderr,
    # its "exited 0" and the script's lines on stdout: the attempt's end was the last.
    ("blind/batch_u/runs/u08", "split"),
    ("blind/batch_j/runs/j08", "split"),
    # slurmstepd's cancel line took the .out file's last time and hid the worker that
    # stopped on its own line (tests/test_batch_z_mechanisms.py).
    ("blind/batch_z/runs/z05", "split"),
    # "epoch 1 done: 20 steps, mean loss 4.57" was no progress ("steps" read as a step
    # line): without circus' exit records, the job's end was not seen (q02 under the
    # folders and the other combine layouts still loses circus' names for its programs).
    ("blind/batch_q/runs/q02", "combine-pipe"),
    # A script's untimed prints on stdout, TF's timed records on stderr: every worker's
    # last progress is the same final point and each process then went through the
    # interpreter's orderly exit (TF's "Error occurred when finalizing GeneratorDataset
    # iterator ... Python interpreter state is not initialized"): it ended, no hang.
    ("blind/batch_v/runs/v13", "split"),
    ("blind/batch_i/runs/i10", "split"),
]


@pytest.mark.parametrize(("name", "transform"), PAIRS)
def test_the_verdict_does_not_depend_on_this_layout(name: str, transform: str, tmp_path: Path) -> None:
    logs = FIXTURES / name / "logs"
    fn, needs = TRANSFORMS[transform]
    assert fn(logs, tmp_path, Layout(logs) if needs else None)
    assert verdict(tmp_path) == verdict(logs)


@pytest.mark.parametrize(
    ("source", "attempt"),
    [
        ("job-1234/attempt-0/job-ranker/attempt-2/worker-0.log", 2),
        ("job-1234/attempt-1/job-ranker/attempt-0/worker-0.log", 10_000),
        ("attempt-0/attempt-2/worker-0.log", 2),
        ("attempt-2/previous/worker-0.log", 1.5),
        ("worker-0.log", 0),
    ],
)
def test_nested_attempt_folders_order_outer_first(source: str, attempt: float) -> None:
    from mwms_doctor.ingest.job import attempt_of

    assert attempt_of(source) == attempt


def test_a_scripts_epoch_line_that_counts_its_steps_is_progress() -> None:
    # q02 (recorded): "epoch 1 done: 20 steps, mean loss 4.5725, 1.4s" on both workers,
    # then "all done, bye": the job ended in its own words, exit records or not.
    from mwms_doctor.ingest.templates import classify
    from mwms_doctor.pipeline import load_job

    assert classify("epoch 1 done: 20 steps, mean loss 4.5725, 1.4s")[0] == "train.epoch"
    assert classify("epoch 2, step 5/10, loss=0.3")[0] == "train.step"
    job, _ = load_job(FIXTURES / "blind/batch_q/runs/q02/logs")
    assert set(job.facts.finished) == {"worker:0", "worker:1"}

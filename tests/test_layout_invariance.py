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

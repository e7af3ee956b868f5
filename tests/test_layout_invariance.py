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

from .paths import RUNS
from .relayout import TRANSFORMS, Layout, verdict

CASES = [
    "peer_killed",  # exit records (137) carry the kill
    "host_oom",  # a MemoryError traceback, exit records
    "never_started",  # a worker with no log, its exit record says it never ran
    "heldout_firewall_4_workers",  # multi-line gRPC errors name the blocked port
    "gz_rotated_oom",  # rotated parts, one of them gzip
    "clock_skew_peer_killed",  # two hosts' clocks skewed
    "uneven_data",  # one worker out of data first
    "identical_data",  # profiler traces decide it
    "healthy",
]


@pytest.fixture(scope="module")
def bases() -> dict[str, tuple[object, Layout]]:
    return {name: (verdict(RUNS / name / "logs"), Layout(RUNS / name / "logs")) for name in CASES}


@pytest.mark.parametrize("transform", sorted(TRANSFORMS))
@pytest.mark.parametrize("name", CASES)
def test_the_verdict_does_not_depend_on_the_layout(
    name: str, transform: str, bases: dict[str, tuple[object, Layout]], tmp_path: Path
) -> None:
    base, layout = bases[name]
    fn, needs = TRANSFORMS[transform]
    if needs and not layout.ok:
        pytest.skip("a layout the tool did not read one file per worker")
    logs = RUNS / name / "logs"
    fn(logs, tmp_path / "logs", layout)
    assert verdict(tmp_path / "logs") == base
    assert base[0] != "refused"


def test_the_transforms_run_where_they_should() -> None:
    # Every case but one is one file per worker with times: the transforms that
    # move lines between files really ran on them (a skip is no pass).
    assert all(Layout(RUNS / name / "logs").ok for name in CASES)

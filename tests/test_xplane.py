"""Profiler traces of a real profiled MWMS run (TF 2.21, 3 workers, steps 3-5 profiled)."""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pytest
from mwms_doctor.ingest import xplane
from mwms_doctor.ingest.xplane import TraceError, TraceRead, is_trace_file, read_trace, trace_events_table
from mwms_doctor.tables import TRACE_EVENTS

from .paths import FIXTURES, RUNS

PROFILED = RUNS / "profiled" / "logs"
LEGACY = FIXTURES / "traces" / "vm.trace.json.gz"
WORKERS = (0, 1, 2)
# The harness profiles global steps 3-5 of epoch 1: Keras numbers them 2, 3, 4.
PROFILED_STEPS = {2, 3, 4}
_SESSION_RE = re.compile(r"^I0000 00:00:(\d+\.\d+)\s+\d+ profiler_session\.cc:\d+\] Profiler session (\w+)")


def _xplane_of(worker: int) -> Path:
    (path,) = (PROFILED / f"worker-{worker}" / "profile").rglob("*.xplane.pb")
    return path


def _read(worker: int) -> TraceRead:
    return read_trace(_xplane_of(worker))


def _kind(read: TraceRead, kind: str) -> list[dict[str, Any]]:
    return [r for r in read.rows if r["args"]["kind"] == kind]


def _session_window_from_log(worker: int) -> tuple[int, int]:
    """(session started, collecting data) in epoch us, as the worker's own log prints them."""
    times: dict[str, int] = {}
    for line in (PROFILED / f"worker-{worker}.log").read_text().splitlines():
        m = _SESSION_RE.match(line)
        if m:
            times[m.group(2)] = round(float(m.group(1)) * 1e6)
    return times["started"], times["collecting"]


def test_trace_files_are_recognised_by_name() -> None:
    assert is_trace_file(_xplane_of(0))
    assert is_trace_file(LEGACY)
    assert is_trace_file(Path("x/host.trace.json"))
    assert not is_trace_file(PROFILED / "worker-0.log")
    assert not is_trace_file(Path("events.out.tfevents.123.host.v2"))


@pytest.mark.parametrize("worker", WORKERS)
def test_each_trace_names_its_own_task(worker: int) -> None:
    # All three files are called vm.xplane.pb: only the content tells them apart.
    read = _read(worker)
    assert _xplane_of(worker).name == "vm.xplane.pb"
    assert read.task == f"worker:{worker}"
    assert read.tasks_seen == [f"worker:{worker}"]
    assert read.host == "vm"


@pytest.mark.parametrize("worker", WORKERS)
def test_steps_are_the_profiled_ones(worker: int) -> None:
    steps = _kind(_read(worker), "step")
    assert sorted(r["step"] for r in steps) == sorted(PROFILED_STEPS)
    assert {r["name"] for r in steps} == {"train"}
    assert {r["args"]["epoch"] for r in steps} == {"0"}
    # A step of this tiny model takes milliseconds, not nothing and not seconds.
    assert all(1_000 < r["duration_us"] < 1_000_000 for r in steps)
    starts = sorted(r["ts"] for r in steps)
    assert all(b > a for a, b in zip(starts, starts[1:], strict=False))


@pytest.mark.parametrize("worker", WORKERS)
def test_timestamps_are_absolute_and_inside_the_logged_profiling_window(worker: int) -> None:
    read = _read(worker)
    started, collecting = _session_window_from_log(worker)
    assert read.start_us is not None and abs(read.start_us - started) < 1_000
    for row in read.rows:
        assert started <= row["ts"], row
        assert row["ts"] + row["duration_us"] <= collecting, row


def test_collectives_carry_keys_that_match_across_workers() -> None:
    keys: dict[int, list[int]] = {}
    for worker in WORKERS:
        collectives = _kind(_read(worker), "collective")
        assert collectives, worker
        assert {r["group_key"] for r in collectives} == {1}
        assert {r["args"]["op_type"] for r in collectives} == {"CollectiveReduceV2"}
        # Every collective ran inside one of the profiled steps.
        assert {r["step"] for r in collectives} == PROFILED_STEPS
        keys[worker] = sorted(r["instance_key"] for r in collectives)
        assert len(set(keys[worker])) == len(keys[worker])  # one row per op instance
    # The same all-reduces, on every worker: what the timeline aligns clocks on.
    assert keys[0] == keys[1] == keys[2]
    assert len(keys[0]) == 7 * len(PROFILED_STEPS)


@pytest.mark.parametrize("worker", WORKERS)
def test_iterator_paths_show_the_auto_shard_stage(worker: int) -> None:
    read = _read(worker)
    iterators = _kind(read, "iterator")
    paths = {r["iterator_path"] for r in iterators}
    assert "Iterator::Root::Prefetch::Shard::Rebatch::BatchV2::ShuffleAndRepeat::TensorSlice" in paths
    (shard,) = [r for r in iterators if r["iterator_path"].endswith("::Shard")]
    assert shard["args"]["index"] == str(worker)
    assert shard["args"]["num_shards"] == "3"
    assert shard["args"]["dataset"].startswith("ShardDataset")
    # Aggregated: one row per path and thread pool, with how often it ran.
    assert int(shard["args"]["count"]) == len(PROFILED_STEPS)
    assert len(iterators) == len({(r["line_name"], r["iterator_path"]) for r in iterators})


def test_table_casts_to_the_contract() -> None:
    items = [(f"worker:{w}", f"worker-{w}/vm.xplane.pb", _read(w)) for w in WORKERS]
    table = trace_events_table(items)
    assert table.schema.equals(TRACE_EVENTS, check_metadata=True)
    assert table.num_rows == sum(len(read.rows) for _, _, read in items)
    assert table.column("ts").null_count == 0
    per_worker = table.group_by("worker").aggregate([("instance_key", "count_distinct")]).to_pylist()
    assert sorted((r["worker"], r["instance_key_count_distinct"]) for r in per_worker) == [
        ("worker:0", 21),
        ("worker:1", 21),
        ("worker:2", 21),
    ]
    shard = table.filter(pc.match_substring(table.column("iterator_path"), "::Shard"))
    assert shard.num_rows > 0


def test_empty_table_still_has_the_contract_schema() -> None:
    table = trace_events_table([])
    assert table.num_rows == 0
    assert table.schema.equals(TRACE_EVENTS, check_metadata=True)


def test_legacy_chrome_json_gives_the_same_events_as_its_xspace() -> None:
    # vm.trace.json.gz is worker:1's XSpace in the Chrome trace shape (see SOURCE.md).
    legacy = read_trace(LEGACY)
    xspace = _read(1)
    assert legacy.format == "chrome_json"
    assert legacy.task == "worker:1"  # from the RemoteCallOp device args
    assert sorted(r["step"] for r in _kind(legacy, "step")) == sorted(PROFILED_STEPS)
    assert any("::Shard" in (r["iterator_path"] or "") for r in legacy.rows)
    # Its times count from the session start: ts is unknown, the offset is kept
    # and lands on the XSpace's absolute time once the start is added.
    assert all(r["ts"] is None for r in legacy.rows)
    assert "relative" in legacy.note
    assert xspace.start_us is not None
    by_key = {r["instance_key"]: r for r in _kind(xspace, "collective")}
    legacy_collectives = _kind(legacy, "collective")
    assert sorted(r["instance_key"] for r in legacy_collectives) == sorted(by_key)
    for row in legacy_collectives:
        absolute = xspace.start_us + float(row["args"]["offset_us"])
        assert abs(absolute - by_key[row["instance_key"]]["ts"]) < 2, row
        assert row["step"] == by_key[row["instance_key"]]["step"]


def test_chrome_json_with_epoch_times_and_tf1_device_names(tmp_path: Path) -> None:
    # The shape of a TF1 timeline: processes named by device, absolute microseconds.
    t0 = 1_700_000_000_000_000
    trace = {
        "traceEvents": [
            {"ph": "M", "name": "process_name", "pid": 1, "args": {"name": "/job:worker/replica:0/task:2/device:CPU:0 Compute"}},
            {"ph": "X", "pid": 1, "tid": 0, "name": "train", "ts": t0, "dur": 500, "args": {"step_num": "7"}},
            {"ph": "X", "pid": 1, "tid": 0, "name": "allreduce/CollectiveReduce", "ts": t0 + 10, "dur": 50,
             "args": {"group_key": "2", "instance_key": "9"}},
            {"ph": "X", "pid": 1, "tid": 0, "name": "MatMul", "ts": t0 + 100, "dur": 5},
            {"ph": "B", "pid": 1, "tid": 0, "name": "train", "ts": t0 + 600},
        ]
    }  # fmt: skip
    path = tmp_path / "host.trace.json"
    path.write_text(json.dumps(trace))
    read = read_trace(path)
    assert read.task == "worker:2"
    assert [(r["name"], r["ts"], r["step"], r["instance_key"]) for r in read.rows] == [
        ("train", t0, 7, None),
        ("allreduce/CollectiveReduce", t0 + 10, 7, 9),
    ]
    assert read.note == ""


def test_row_limit_is_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    full = sorted(r["instance_key"] for r in _kind(_read(0), "collective"))
    monkeypatch.setattr(xplane, "MAX_EVENT_ROWS", 5)
    read = _read(0)
    kept = [r["instance_key"] for r in _kind(read, "collective")]
    # The first ones in time are kept (instance keys grow with time on a worker).
    assert sorted(kept) == full[:5]
    assert "dropped 16 collective" in read.note
    assert len(_kind(read, "step")) == len(PROFILED_STEPS)


@pytest.mark.parametrize("fraction", [0.1, 0.5, 0.9, 0.999])
def test_truncated_xspace_is_a_trace_error(tmp_path: Path, fraction: float) -> None:
    data = _xplane_of(0).read_bytes()
    path = tmp_path / "vm.xplane.pb"
    path.write_bytes(data[: int(len(data) * fraction)])
    with pytest.raises(TraceError) as err:
        read_trace(path)
    assert str(path) in err.value.message
    assert "truncated" in err.value.message or "not an XSpace" in err.value.message
    assert err.value.hint


def test_no_cut_of_an_xspace_crashes_the_reader(tmp_path: Path) -> None:
    # A cut on a field boundary can still parse; anything else must be a TraceError.
    data = _xplane_of(2).read_bytes()
    path = tmp_path / "vm.xplane.pb"
    for cut in range(1, len(data), max(1, len(data) // 97)):
        path.write_bytes(data[:cut])
        try:
            read = read_trace(path)
        except TraceError:
            continue
        assert isinstance(read.rows, list)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("vm.xplane.pb", b"", "empty trace file"),
        ("vm.xplane.pb", b"this is a log line, not a protobuf\n", "vm.xplane.pb"),
        (
            "vm.trace.json.gz",
            gzip.compress(b'{"traceEvents": [{"ph": "X"}]}')[:25],
            "corrupt or truncated gzip",
        ),
        ("vm.trace.json", b'{"traceEvents": [{"ph": "X", "name"', "not valid trace JSON"),
        ("vm.trace.json", b'{"displayTimeUnit": "ns"}', "without a traceEvents list"),
    ],
)
def test_broken_files_give_a_clear_trace_error(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(TraceError, match=re.escape(message)):
        read_trace(path)


def test_missing_protobuf_is_a_trace_error_naming_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    xplane._xspace_class.cache_clear()
    monkeypatch.setitem(sys.modules, "google.protobuf", None)
    try:
        with pytest.raises(TraceError, match="protobuf") as err:
            read_trace(_xplane_of(0))
        assert "pip install protobuf" in err.value.hint
        # The JSON format needs no extra package.
        assert read_trace(LEGACY).rows
    finally:
        xplane._xspace_class.cache_clear()


def test_reading_a_trace_never_imports_tensorflow() -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from mwms_doctor.ingest.xplane import read_trace\n"
        "assert 'google.protobuf' not in sys.modules\n"
        f"read = read_trace(Path({str(_xplane_of(0))!r}))\n"
        "assert read.rows\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('tensorflow', 'tsl', 'xprof')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"

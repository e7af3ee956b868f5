"""One clock: offsets estimated from happens-before anchors, applied to every table."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq
from mwms_doctor.cli import app
from mwms_doctor.pipeline import TABLE_NAMES, load_tables, run_job
from typer.testing import CliRunner

from .paths import RUNS


def test_really_skewed_clocks_are_estimated_within_their_bound() -> None:
    """Recorded with libfaketime: worker 2's clock 45 s ahead, worker 0's (the
    leader, the reference) 20 s behind. Offsets are relative to worker 0."""
    tables, clock = load_tables(RUNS / "clock_skew_peer_killed" / "logs")
    assert clock.reference == "worker:0"
    truth = {"worker:1": -20.0, "worker:2": -65.0}
    for worker, want in truth.items():
        got, bound = clock.offsets[worker], clock.bounds[worker]
        assert bound is not None and bound < 2.0
        assert abs(got - want) <= bound + 0.01, (worker, got, bound)
    rows = {r["worker"]: r for r in tables.workers.to_pylist()}
    assert abs(rows["worker:2"]["clock_offset_s"] - clock.offsets["worker:2"]) < 1e-9
    assert "registration with the coordination service" in tables.clock_basis


def test_corrected_times_put_the_death_before_its_echoes() -> None:
    """As logged, worker 2's errors come ~45 s after worker 1's last line; on
    one clock they come within seconds of it."""
    tables, _ = load_tables(RUNS / "clock_skew_peer_killed" / "logs")
    last = {r["worker"]: r["last_ts"] for r in tables.workers.to_pylist()}
    gap = (last["worker:2"] - last["worker:1"]).total_seconds()
    assert 0 <= gap < 5
    ev = tables.events
    w2 = ev.filter(pc.equal(pc.cast(ev["worker"], "string"), "worker:2"))
    assert pc.max(w2["ts"]).as_py() == last["worker:2"]


def test_synced_clocks_are_left_alone() -> None:
    for run in ("healthy", "peer_killed", "profiled"):
        tables, clock = load_tables(RUNS / run / "logs")
        assert clock.corrected == {}, run
        assert all(b is not None for b in clock.bounds.values())
    _, profiled = load_tables(RUNS / "profiled" / "logs")
    # Collective instance keys in the traces pin the clocks to about a millisecond.
    assert max(b for b in profiled.bounds.values() if b is not None) < 0.01
    assert "collectives in profiler traces" in profiled.basis


def test_the_report_says_when_it_corrected(tmp_path: Path) -> None:
    result = run_job(RUNS / "clock_skew_peer_killed" / "logs", tmp_path)
    note = result.model.timeline.clock_note
    assert "corrected" in note and "worker:2 -64" in note
    assert result.analysis.verdict.cls == "peer_died"
    plain = run_job(RUNS / "healthy" / "logs").model.timeline.clock_note
    assert "no correction needed" in plain


def test_tables_round_trip_through_parquet(tmp_path: Path) -> None:
    out = tmp_path / "tables"
    res = CliRunner().invoke(app, ["tables", str(RUNS / "profiled" / "logs"), "--out", str(out)])
    assert res.exit_code == 0, res.output
    tables, _ = load_tables(RUNS / "profiled" / "logs")
    manifest = json.loads((out / "manifest.json").read_text())
    for name in TABLE_NAMES:
        table = tables.get(name)
        if table is None:
            assert name in manifest["absent"] and not (out / f"{name}.parquet").exists()
            continue
        back = pq.read_table(out / f"{name}.parquet")
        assert back.schema.names == table.schema.names, name
        assert back.schema.metadata == table.schema.metadata, name
        # Parquet renames a map's inner fields; the values and types are the same.
        assert back.cast(table.schema).equals(table), name
        assert manifest["tables"][name]["rows"] == table.num_rows
    assert manifest["clock"]["reference"] == "worker:0"


def test_tables_on_bad_input_is_one_clear_line(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["tables", str(tmp_path / "nope"), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "no such file or directory" in res.output
    assert "Traceback" not in res.output


def test_every_time_of_a_worker_moves_with_its_clock() -> None:
    """On the recording with skewed clocks, a worker's last progress moves with
    its clock like its first and last lines: before, it stayed on the worker's
    own clock, so the report said worker:1 and worker:2 were stuck -19.97 s
    and -61.60 s (their last progress after their last line)."""
    result = run_job(RUNS / "clock_skew_peer_killed" / "logs")
    events = result.tables.events
    for row in result.tables.workers.to_pylist():
        if row["last_progress_ts"] is None:
            continue
        assert row["first_ts"] <= row["last_progress_ts"] <= row["last_ts"], row["worker"]
        mine = events.filter(pc.equal(pc.cast(events["worker"], "string"), row["worker"]))
        assert pc.max(mine["ts"]).as_py() == row["last_ts"]
    stuck = {w["worker"]: w["stuck_s"] for w in result.model.to_json()["workers"]}
    assert all(s is None or s >= 0 for s in stuck.values()), stuck


def test_alignment_returns_new_tables_and_leaves_its_input_alone() -> None:
    from mwms_doctor.clock import align
    from mwms_doctor.discover import discover
    from mwms_doctor.ingest.job import ingest_job

    raw = ingest_job(discover(RUNS / "clock_skew_peer_killed" / "logs"))
    before = (raw.events, raw.workers, raw.clock_basis)
    aligned, clock = align(raw)
    assert clock.corrected
    assert (raw.events, raw.workers, raw.clock_basis) == before
    assert aligned.events is not raw.events and not aligned.events.equals(raw.events)

"""Folding real TF 2.21 output into records, and the events table it makes."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc
from mwms_doctor.discover import discover
from mwms_doctor.ingest.job import ingest_job
from mwms_doctor.ingest.worker_log import fold_records, numbered, parse_log
from mwms_doctor.tables import EVENTS, WORKERS

from .paths import RUNS


def _parse(rel: str):  # type: ignore[no-untyped-def]
    path = RUNS / rel
    return parse_log(path.read_text().splitlines(keepends=True), rel, 2026, None)


def test_coordination_wait_and_its_straggler_list_are_one_record() -> None:
    log = _parse("never_started/logs/worker-0.log")
    waits = [i for i, k in enumerate(log.kind) if k == "coord.waiting_for_tasks"]
    assert len(waits) == 2
    last = waits[-1]
    assert log.text[last].splitlines() == [
        "Waiting for 1/3 tasks to connect.",
        "Example stragglers:",
        "/job:worker/replica:0/task:2",
    ]
    assert log.field_of(last, "stragglers") == "worker:2"
    assert (log.line[last], log.end_line[last]) == (19, 21)


def test_allocator_dump_is_one_record_with_its_limit() -> None:
    log = _parse("oom/logs/worker-1.log")
    i = log.first("oom.allocator_exhausted")
    assert i is not None
    assert log.field_of(i, "requested_bytes") == "4398046511104"
    assert log.field_of(i, "limit") == "23.54GiB"
    # The whole BFC dump, ~45 lines of it, up to the '****' usage bar.
    assert log.end_line[i] - log.line[i] > 30
    assert log.text[i].rstrip().endswith("_" * 20)


def test_traceback_is_one_record_with_the_exception() -> None:
    log = _parse("oom/logs/worker-1.log")
    tbs = [i for i, k in enumerate(log.kind) if k == "py.traceback"]
    assert len(tbs) == 1
    i = tbs[0]
    assert log.field_of(i, "exc_type") == "tensorflow.python.framework.errors_impl.ResourceExhaustedError"
    assert log.field_of(i, "tf_kind") == "oom.tensor_allocation"
    assert log.field_of(i, "shape") == "1099511627776"
    assert log.end_line[i] == log.n_lines
    assert log.severity[i] == "error"


def test_remote_error_names_the_peer_where_it_started() -> None:
    log = _parse("peer_killed/logs/worker-0.log")
    i = log.first("collective.aborted")
    assert i is not None
    # task:1 was killed; task:2 only relayed the abort.
    assert log.field_of(i, "remote_tasks") == "worker:1,worker:2"
    assert log.field_of(i, "peer") == "worker:1"
    assert log.field_of(i, "peer_message") == "recvmsg:Connection reset by peer"


def test_lines_without_time_are_inferred_from_their_timed_neighbours() -> None:
    log = _parse("healthy/logs/worker-0.log")
    i = log.first("keras.epoch")
    assert i is not None
    assert log.ts_kind[i] == "inferred"
    assert log.ts[i] == log.ts[i - 1]
    # Between two timed lines, the gap bounds when it was printed; with no
    # timed line after it, there is no bound.
    for k, kind in enumerate(log.ts_kind):
        if kind != "inferred" or k == 0:
            continue
        after = next(
            (t for kk, t in zip(log.ts_kind[k + 1 :], log.ts[k + 1 :], strict=True) if kk != "inferred"), None
        )
        expected = None if after is None else (after - log.ts[k]).total_seconds()
        assert log.ts_bound[k] == expected
    # The absl banner comes before any timed line: the next one's time, as a
    # time it was printed at or before (how long before is unknown).
    assert log.ts_kind[0] == "inferred_before" and log.ts[0] is not None and log.ts_bound[0] is None


def test_progress_bar_redraws_keep_the_last_state() -> None:
    lines = [
        "Epoch 1/2\n",
        "1/8 [==>....] - ETA: 3s - loss: 0.9\r2/8 [====>..] - ETA: 2s - loss: 0.8\r8/8 [========] - 1s\n",
    ]
    recs = list(fold_records(numbered(lines), 2026))
    assert [r.text for r in recs] == ["Epoch 1/2", "8/8 [========] - 1s"]


def test_every_recorded_tf_line_is_timed() -> None:
    for run in sorted(RUNS.iterdir()):
        tables = ingest_job(discover(run / "logs"))
        ev = tables.events
        # C++ records: their origin is a source file and line.
        tf_lines = pc.fill_null(
            pc.match_substring_regex(pc.cast(ev["origin"], pa.string()), r"\.(cc|h):\d+$"), False
        )
        untimed = ev.filter(pc.and_(tf_lines, pc.is_null(ev["ts"])))
        assert untimed.num_rows == 0, run.name


def test_tables_match_their_schemas() -> None:
    tables = ingest_job(discover(RUNS / "oom" / "logs"))
    assert tables.events.schema.equals(EVENTS, check_metadata=False)
    assert tables.workers.schema.equals(WORKERS, check_metadata=False)
    assert tables.events.schema.field("worker").type == pa.dictionary(pa.int32(), pa.string())

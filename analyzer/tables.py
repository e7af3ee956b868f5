"""Arrow schemas: the contract between the ingest stage and the rules.

Every table carries ``worker`` (``"worker:1"``, ``"chief:0"``; ``"?"`` where a
line cannot be attributed) and points back to its evidence with ``source``
(path relative to the job directory) and ``line`` (1-based). Time is always
``ts: timestamp[us, tz=UTC]``, nullable. ``docs/tables.md`` documents each
column; ``tests/test_tables.py`` keeps the two in step.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any
from zoneinfo import ZoneInfo

import pyarrow as pa

from .tasks import sort_key as sort_key  # workers in reading order, kept with the task names

SCHEMA_VERSION = 4

TS = pa.timestamp("us", tz="UTC")
DICT_STR = pa.dictionary(pa.int32(), pa.string())

# How an event's time was read.
TS_KINDS = (
    "absl_epoch",  # I0000 00:00:<epoch>.<frac>: TF 2.16+ before absl is initialised
    "absl_noyear",  # I1121 10:11:12.345678: the year is inferred
    "tf_date",  # 2023-01-05 10:11:12.345678: I tensorflow/...: TF1 and early TF2
    "python_logging",  # 2026-11-21 10:11:12,345 - name - LEVEL - ...
    "collector",  # no time on the line: the container runtime / log collector's stamp
    "inferred",  # no time on the line: from its timed neighbours in the file (ts_bound_s says how far off)
    "inferred_before",  # no time on the line, none before it: the next timed line's, printed then or earlier
    "none",  # no timed line anywhere in its stretch of the file
)

EVENTS = pa.schema(
    [
        pa.field("worker", DICT_STR, nullable=False),
        pa.field("source", DICT_STR, nullable=False),
        pa.field("line", pa.int32(), nullable=False),
        pa.field("end_line", pa.int32(), nullable=False),
        pa.field("ts", TS),
        pa.field("ts_kind", DICT_STR, nullable=False),
        # For an inferred time: the gap between the timed neighbours it lies
        # between (the line was printed within this many seconds after ts).
        pa.field("ts_bound_s", pa.float64()),
        pa.field("severity", DICT_STR),
        pa.field("origin", DICT_STR),
        pa.field("pid", pa.int64()),
        pa.field("tid", pa.int64()),
        pa.field("kind", DICT_STR),
        pa.field("text", pa.string(), nullable=False),
        pa.field("fields", pa.map_(pa.string(), pa.string())),
        # Printed at warning/error level but known to be harmless (cuInit failing
        # on a CPU-only machine): rules must not count it as a failure.
        pa.field("benign", pa.bool_(), nullable=False),
    ],
    metadata={"mwms_doctor.table": "events", "mwms_doctor.schema_version": str(SCHEMA_VERSION)},
)

WORKERS = pa.schema(
    [
        pa.field("worker", pa.string(), nullable=False),
        pa.field("task_type", pa.string()),
        pa.field("task_index", pa.int32()),
        pa.field("identity_from", pa.string()),  # content | file name | cluster spec | unresolved
        pa.field("identity_note", pa.string()),  # e.g. file name and content disagree
        pa.field("claims_task", pa.string()),  # the task its content claims when another log claims it too
        pa.field("host", pa.string()),
        pa.field("port", pa.int32()),
        pa.field("pid", pa.int64()),
        pa.field("is_leader", pa.bool_()),  # ran the coordination service
        pa.field("tf_version", pa.string()),
        pa.field("python_version", pa.string()),
        pa.field("first_ts", TS),
        pa.field("last_ts", TS),
        pa.field("connected_ts", TS),
        pa.field("last_epoch", pa.int32()),
        pa.field("epochs", pa.int32()),
        pa.field("last_step", pa.int32()),
        pa.field(
            "last_progress_ts", TS
        ),  # its last step, loss or epoch line: where it stopped making progress
        pa.field("last_progress", pa.string()),  # that line
        pa.field("exit_code", pa.int32()),
        pa.field("exit_signal", pa.string()),
        pa.field("exit_note", pa.string()),
        pa.field("n_lines", pa.int64(), nullable=False),
        pa.field("log_bytes", pa.int64(), nullable=False),
        pa.field("log_bytes_parsed", pa.int64(), nullable=False),
        pa.field("clock_offset_s", pa.float64()),
        pa.field("clock_bound_s", pa.float64()),
        pa.field("n_records", pa.int64(), nullable=False),
        pa.field("n_errors", pa.int64(), nullable=False),
        pa.field("has_log", pa.bool_(), nullable=False),
        pa.field("sources", pa.list_(pa.string()), nullable=False),
        # The names a wrapper gave its lines within a shared file (a launcher's tag, a dyno: ``worker.2``).
        pa.field("keys", pa.list_(pa.string())),
    ],
    metadata={"mwms_doctor.table": "workers", "mwms_doctor.schema_version": str(SCHEMA_VERSION)},
)

RPC = pa.schema(
    [
        pa.field("worker", DICT_STR, nullable=False),  # the observer: who saw the failure
        pa.field("source", DICT_STR, nullable=False),
        pa.field("line", pa.int32(), nullable=False),
        pa.field("ts", TS),
        pa.field("peer", DICT_STR),  # address as printed: "ipv4:127.0.0.1:2223", "localhost:2223"
        pa.field("peer_task", DICT_STR),  # "worker:1": the address looked up in the cluster spec
        pa.field("method", DICT_STR),  # "/tensorflow.CoordinationService/Heartbeat" when printed
        pa.field("grpc_code", pa.int32()),  # 14
        pa.field("status", DICT_STR),  # "UNAVAILABLE"
        pa.field("errno", pa.int32()),  # 111 for "Connection refused" when the text names it
        pa.field("reason", DICT_STR),  # connection_refused, connect_timeout, deadline_exceeded, ...
        pa.field("message", pa.string()),
        pa.field("via", DICT_STR, nullable=False),  # status_payload, tf_error, grpc_core, script
    ],
    metadata={"mwms_doctor.table": "rpc", "mwms_doctor.schema_version": str(SCHEMA_VERSION)},
)

ENV = pa.schema(
    [
        pa.field("worker", DICT_STR, nullable=False),
        pa.field("source", DICT_STR, nullable=False),
        pa.field("line", pa.int32()),
        pa.field("kind", DICT_STR, nullable=False),  # package, banner, tf_config, env_var, gpu, kernel, exit
        pa.field(
            "key", DICT_STR, nullable=False
        ),  # "tensorflow", "TF_CONFIG.cluster.worker", "gpu0.memory_total"
        pa.field("value", pa.string()),
        pa.field("redacted", pa.bool_(), nullable=False),
    ],
    metadata={"mwms_doctor.table": "env", "mwms_doctor.schema_version": str(SCHEMA_VERSION)},
)

TRACE_EVENTS = pa.schema(
    [
        pa.field("worker", DICT_STR, nullable=False),
        pa.field("source", DICT_STR, nullable=False),  # the trace file
        pa.field("plane", DICT_STR, nullable=False),  # "/host:CPU", "/device:GPU:0"
        pa.field("line_name", DICT_STR),  # the plane's line (thread, "Steps", "XLA Ops" ...)
        pa.field("name", DICT_STR, nullable=False),
        pa.field("ts", TS),
        pa.field("duration_us", pa.float64()),
        pa.field("step", pa.int64()),
        pa.field("group_key", pa.int64()),
        pa.field("instance_key", pa.int64()),
        pa.field("iterator_path", pa.string()),  # "Iterator::Model::Prefetch::Shard::..."
        pa.field("args", pa.map_(pa.string(), pa.string())),
    ],
    metadata={"mwms_doctor.table": "trace_events", "mwms_doctor.schema_version": str(SCHEMA_VERSION)},
)


# The worker name of a launcher's or a platform's own lines (a driver, a job
# runner, a scheduler's table): no worker of the job.
LAUNCHER = "?launcher"


_UTC_EPOCH = dt.datetime(1970, 1, 1, tzinfo=ZoneInfo("UTC"))
_US = dt.timedelta(microseconds=1)


def datetimes(column: pa.Array | pa.ChunkedArray) -> list[dt.datetime | None]:
    """A ``TS`` column as Python datetimes, equal to (and with the same
    ``ZoneInfo('UTC')`` as) what ``to_pylist()`` gives, at a fifth of its cost:
    pyarrow converts each time zone-aware value at some 7 us, which made
    turning tens of thousands of events into rows slow."""
    import pyarrow.compute as pc

    if column.type != TS:
        return column.to_pylist()  # type: ignore[no-any-return]
    try:
        return [None if v is None else _UTC_EPOCH + v * _US for v in pc.cast(column, pa.int64()).to_pylist()]
    except OverflowError:  # past what datetime holds: as pyarrow says it
        return column.to_pylist()  # type: ignore[no-any-return]


def first_of_each(table: pa.Table, columns: list[str]) -> pa.Array:
    """Row indexes of the first row of each distinct combination of ``columns``
    (null a value like any other), in order of first appearance: what
    ``group_by(...).aggregate([("i", "min")])`` gives, without the Acero
    engine that ``group_by`` loads (its import alone takes 27 ms, a twentieth of a small
    job's start-up)."""
    import pyarrow.compute as pc

    if table.num_rows == 0:
        return pa.array([], pa.int64())
    key: pa.Array | None = None
    for name in columns:
        col = table[name]
        if pa.types.is_dictionary(col.type):
            col = pc.cast(col, col.type.value_type)
        codes = pc.dictionary_encode(col.combine_chunks(), null_encoding="encode")
        idx = pc.cast(codes.indices, pa.int64())
        if key is None:
            key = idx
        else:
            # Re-encoded to at most num_rows codes after each column, so the
            # product never overflows.
            combined = pc.add(pc.multiply(key, len(codes.dictionary)), idx)
            key = pc.cast(pc.dictionary_encode(combined).indices, pa.int64())
    assert key is not None
    return pc.index_in(pc.unique(key), value_set=key).cast(pa.int64())


def distinct_rows(table: pa.Table, columns: list[str]) -> list[tuple[Any, ...]]:
    """Each distinct combination of ``columns`` once, as tuples, in order of
    first appearance."""
    picked = table.select(columns).take(first_of_each(table, columns))
    return list(zip(*(picked[c].to_pylist() for c in columns), strict=True))


# Severities, lowest to highest; the header letter of C++ logs maps onto them.
SEVERITIES = ("debug", "info", "warning", "error", "fatal")


@dataclass(frozen=True)
class JobTables:
    """Every table of one job. A table that no evidence fed is ``None``, so a
    rule that needs it is reported "not evaluated" instead of passing.
    Frozen: a stage that changes a table (clock alignment) returns new tables."""

    events: pa.Table
    workers: pa.Table
    rpc: pa.Table | None = None
    env: pa.Table | None = None
    trace_events: pa.Table | None = None
    # Files that were looked at but could not be read or were not recognised:
    # (source, reason). The report lists them: no evidence is lost silently.
    skipped: list[tuple[str, str]] = field(default_factory=list)
    # Files read that are not worker logs: (source, what they were read as).
    other_inputs: list[tuple[str, str]] = field(default_factory=list)
    # What the clock alignment (clock.py) could anchor on, in words.
    clock_basis: list[str] = field(default_factory=list)

    def get(self, name: str) -> pa.Table | None:
        value = getattr(self, name, None)
        return value if isinstance(value, pa.Table) else None

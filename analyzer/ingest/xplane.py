"""Profiler traces → ``trace_events`` rows, without importing TensorFlow.

Reads the two formats TensorFlow's profiler writes under
``<logdir>/plugins/profile/<run>/``:

* ``<host>.xplane.pb`` (TF 2.2+): a serialized ``tensorflow.profiler.XSpace``.
  It is parsed with ``protobuf`` and a copy of the ``xplane.proto`` schema kept
  here (``_XPLANE_SCHEMA``): no ``xplane_pb2`` module ships without TensorFlow
  (tensorboard-plugin-profile 2.24 is an empty shim, xprof 2.24 parses XSpace
  with a 40 MB native library), and the schema is small and stable.
  ``protobuf`` is the only extra package it needs, and only for this format:
  without it ``read_trace`` raises ``TraceError`` naming the package.
* ``<host>.trace.json.gz`` / ``.trace.json`` (TF 2.2-2.3, and what the trace
  viewer converts an XSpace to): Chrome trace JSON, ``ph: "X"`` events with
  ``ts``/``dur`` in microseconds, process and thread names in ``ph: "M"`` events.

What a TF 2.21 MWMS worker's XSpace holds (seen in ``fixtures/runs/profiled``):
planes ``/host:CPU`` (one line per thread: ``python``, ``tf_Compute/<id>``,
``collective_ops/<id>``, ``tf_data_*/<id>`` ...) and ``Task Environment`` (no
lines; stats ``profile_start_time`` / ``profile_stop_time`` in epoch ns). Line
``timestamp_ns`` is *relative to* ``profile_start_time`` (the profiler
normalises it); an event starts at ``line.timestamp_ns + offset_ps / 1000``.
Stats are ``XStat`` values or references (``ref_value``) to a stat metadata
whose *name* is the string. Keras wraps every step in a ``train`` event with
``step_num`` (0-based within the epoch) and ``epoch_num`` stats; collective ops
(``div_no_nan/CollectiveReduceV2:CollectiveReduceV2``, i.e. ``op_name:op_type``)
carry ``group_key``, ``instance_key`` and ``step_id``; tf.data iterator events
are named by their path (``Iterator::Root::Prefetch::Shard::Rebatch::...``) and
the ``Shard`` one carries ``index`` and ``num_shards``. The worker's own task
appears only as a device string (``/job:worker/replica:0/task:1/device:CPU:0``)
referenced by ``device`` stats (``RemoteCallOp``); the host name is in
``XSpace.hostnames`` (the file name repeats it, and workers on one machine share it).

Rows kept (everything else, the bulk of a trace, is dropped):

* ``step``: events with a ``step_num`` stat (Keras ``train``/``test``/
  ``predict``, user ``tf.profiler.experimental.Trace(..., step_num=...)``) and
  events on a line named ``Steps``: one row each, ``step`` = the trace's
  ``step_num``, ``args.epoch`` = ``epoch_num`` when present.
* ``function``: ``tf.function`` calls (events with a ``tf_function_call`` stat,
  ``train_function``): one row each.
* ``collective``: collective ops (``Collective*``, ``Nccl*``, ``all-reduce``,
  ``AllReduce``, ``all-gather``, ``reduce-scatter``, ``all-to-all``, NCCL
  kernels) and any other op carrying ``group_key``/``instance_key``: one row
  each, ``args.op_type``, ``args.step_id``.
* ``collective_setup``: runtime events carrying a ``group_key``
  (``CollectiveExecutor::CompleteParams``: resolving the group with the leader,
  ``args.group_size``): one row each. A worker stuck here waits for its peers.
* ``iterator``: tf.data ``Iterator::...`` events, aggregated: one row per
  (plane, thread pool, path), ``iterator_path`` = the full path, ``ts`` = first
  start, ``duration_us`` = total, ``args.count``/``max_us``/``dataset`` and the
  Shard stage's ``index``/``num_shards``.
* ``input``: waits for input (``IteratorGetNextOp::DoCompute``,
  ``GetNextFromShard*``, ``PrefetchConsume``/``PrefetchProduce``), aggregated
  like iterator rows.

Every row has ``args.kind`` (one of the kinds above); per-event rows get
``step`` from the step event whose interval contains their start. Per trace at
most ``MAX_EVENT_ROWS`` per-event rows per kind and ``MAX_AGGREGATE_ROWS``
aggregated rows are kept (the first ones in time); ``TraceRead.note`` says when
rows were dropped. Events with no start (aggregated ``num_occurrences``) and
Chrome ``B``/``E`` pairs are ignored.

Time: ``ts`` is absolute UTC. When the trace's times are relative and no base
is known (an XSpace without ``profile_start_time``, a Chrome trace whose ``ts``
count from 0), ``ts`` is null and ``args.offset_us`` holds the offset from the
trace's own origin, so the timeline can still align the trace by its
collective instance keys.
"""

from __future__ import annotations

import bisect
import json
import re
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import pyarrow as pa

from ..errors import UserError
from ..tables import TRACE_EVENTS
from ..tasks import task_mentions
from .source import Decoded, ReadLimits, Source, compression_of, open_regular, plain_name

TRACE_SUFFIXES = (".xplane.pb", ".trace.json.gz", ".trace.json")

# Keep at most this many per-event rows of one kind per trace: a long profile of
# a big model has millions of events; a few thousand steps and collectives are
# plenty to spot a straggler or a stuck collective.
MAX_EVENT_ROWS = 20_000
# Distinct iterator paths / input waits per trace: a pipeline has tens of stages.
MAX_AGGREGATE_ROWS = 2_000
# Times below this are offsets, not epoch times: 1e17 ns is 1973 (a trace
# never starts then); the profiler normalises line times to the session start.
_EPOCH_MIN_NS = 10**17
_EPOCH_MIN_US = _EPOCH_MIN_NS // 1000
# After this many events of one name (on one line) whose stats make them no row,
# stop decoding that name's stats: ThreadpoolListener::Record occurs thousands
# of times, while a step or collective marker carries its stats every time.
_STATS_PROBE_LIMIT = 64

_COLLECTIVE_RE = re.compile(
    r"Collective|Nccl|nccl|all-reduce|AllReduce|all-gather|AllGather|reduce-scatter|ReduceScatter"
    r"|all-to-all|AllToAll|collective-permute"
)
_INPUT_RE = re.compile(
    r"^(IteratorGetNextOp::DoCompute|GetNextFromShard\d*|PrefetchConsume|PrefetchProduce)$"
)
# Stats the profiler uses for its own bookkeeping (event grouping, flows), and
# those a row already holds in a column of its own.
_INTERNAL_STATS = frozenset({"_c", "_ct", "_p", "_pt", "_r", "flow", "group_id", "long_name"})
_COLUMN_STATS = frozenset({"step_num", "group_key", "instance_key"})


class TraceError(UserError):
    """A trace file that cannot be read: corrupt, truncated, or an unknown format."""


@dataclass
class TraceRead:
    """What one trace file says.

    ``rows`` hold the TRACE_EVENTS columns except ``worker`` and ``source``,
    with ``ts`` as epoch microseconds (int) or None. ``task`` is the task the
    trace's *content* names (``"worker:1"``), None when it names none or
    several; the caller then attributes the trace by its path.
    """

    format: str  # "xplane" | "chrome_json"
    rows: list[dict[str, Any]] = field(default_factory=list)
    task: str | None = None
    tasks_seen: list[str] = field(default_factory=list)  # every task named in the content
    host: str | None = None
    start_us: int | None = None  # profile session start/stop, epoch us, when recorded
    stop_us: int | None = None
    note: str = ""


# A trace bigger than this (on disk, or once decompressed) is not read: it
# would take gigabytes of memory to parse, for timing facts a smaller one gives.
MAX_TRACE_BYTES = 512 << 20


def is_trace_file(path: Path) -> bool:
    """True for a profiler trace, by its name (compressed or not)."""
    return path.name.endswith(TRACE_SUFFIXES) or plain_name(path.name).endswith(TRACE_SUFFIXES)


def read_trace(path: Path) -> TraceRead:
    """Read one trace file; raise ``TraceError`` when it cannot be read."""
    try:
        size = path.stat().st_size
        if size > MAX_TRACE_BYTES:
            raise TraceError(
                f"{path}: trace of {size:,} bytes not read (more than {MAX_TRACE_BYTES:,})",
                hint="profile fewer steps, or read it with TensorBoard",
            )
        with open_regular(path) as fh:
            data = fh.read(MAX_TRACE_BYTES + 1)
    except OSError as e:
        raise TraceError(f"{path}: cannot read the trace: {e.strerror or e}") from None
    if not data:
        raise TraceError(
            f"{path}: empty trace file", hint="the profiler was probably killed while writing it"
        )
    name = plain_name(path.name)
    if name.endswith(".xplane.pb"):
        if (kind := compression_of(data[:8])) is not None:
            data = _expand(path, kind)
        return _read_xspace(path, data)
    if name.endswith(".trace.json") or path.name.endswith(".trace.json.gz"):
        return _read_chrome(path, data)
    raise TraceError(f"{path}: not a profiler trace (expected {', '.join(TRACE_SUFFIXES)})")


def trace_events_table(items: Iterable[tuple[str, str, TraceRead]]) -> pa.Table:
    """(worker, source, read) items → one table of schema ``TRACE_EVENTS``."""
    cols: dict[str, list[Any]] = {f.name: [] for f in TRACE_EVENTS}
    for worker, source, read in items:
        for row in read.rows:
            cols["worker"].append(worker)
            cols["source"].append(source)
            for name in _ROW_COLUMNS:
                value = row.get(name)
                if name == "args":
                    value = sorted(value.items()) if value else None
                cols[name].append(value)
    arrays = [pa.array(cols[f.name], type=_plain_type(f.type)).cast(f.type) for f in TRACE_EVENTS]
    return pa.Table.from_arrays(arrays, schema=TRACE_EVENTS)


_ROW_COLUMNS = (
    "plane",
    "line_name",
    "name",
    "ts",
    "duration_us",
    "step",
    "group_key",
    "instance_key",
    "iterator_path",
    "args",
)


def _plain_type(t: pa.DataType) -> pa.DataType:
    """Build dictionary columns as strings first, then cast."""
    return pa.string() if pa.types.is_dictionary(t) else t


# ---------------------------------------------------------------- classification


@dataclass(slots=True)
class _Event:
    """One event of either format, before it becomes a row.

    XSpace stats are decoded only when a row needs them (``raw_stats`` +
    ``resolver``): an aggregated iterator row needs the first event's only.
    """

    plane: str
    line: str
    name: str
    start_us: float  # absolute epoch us, or an offset when the trace has no base
    duration_us: float
    decoded: dict[str, str] | None = None
    raw_stats: Any = None
    resolver: _Plane | None = None

    @property
    def stats(self) -> dict[str, str]:
        if self.decoded is None:
            self.decoded = self.resolver.stats(self.raw_stats) if self.resolver is not None else {}
        return self.decoded


def _kind_of_name(name: str) -> str | None:
    """The kind a name alone decides; None: look at the stats."""
    if name.startswith("Iterator::"):
        return "iterator"
    if _INPUT_RE.match(name):
        return "input"
    if "::" not in name and _COLLECTIVE_RE.search(name):
        return "collective"
    return None


def _kind_of_event(name: str, line: str, stats: Mapping[str, str]) -> str | None:
    kind = _kind_of_name(name)
    if kind is not None:
        return kind
    if "step_num" in stats or line == "Steps":
        return "step"
    if "instance_key" in stats or "group_key" in stats:
        # CollectiveExecutor::CompleteParams: group/instance resolution with the leader.
        return "collective_setup" if "::" in name else "collective"
    if "tf_function_call" in stats:
        return "function"
    return None


def _int_or_none(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


def _public_args(stats: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in stats.items() if k not in _INTERNAL_STATS and k not in _COLUMN_STATS}


def _line_base(line: str) -> str:
    """``tf_Compute/-1339238722404975678`` → ``tf_Compute``: thread ids differ per run."""
    head, sep, tail = line.rpartition("/")
    return head if sep and tail.lstrip("-").isdigit() else line


_PER_EVENT_KINDS = ("step", "function", "collective", "collective_setup")
# Events of one kind held before sorting and cutting to MAX_EVENT_ROWS, as a multiple of it.
_HOLD_LIMIT = 5


class _RowBuilder:
    """Collects kept events of one trace and turns them into rows."""

    def __init__(self, absolute: bool) -> None:
        self.absolute = absolute
        self.per_event: dict[str, list[_Event]] = {k: [] for k in _PER_EVENT_KINDS}
        self.dropped: dict[str, int] = {}
        self.aggregates: dict[tuple[str, str, str, str], dict[str, Any]] = {}

    def full(self, kind: str) -> bool:
        """True (and the event counted as dropped) when no more events of ``kind`` are held.

        Bounds memory on huge traces: lines come one after another, so past this
        limit the rows kept are the first in time of the lines read first."""
        bucket = self.per_event.get(kind)
        if bucket is None or len(bucket) < _HOLD_LIMIT * MAX_EVENT_ROWS:
            return False
        self.dropped[kind] = self.dropped.get(kind, 0) + 1
        return True

    def add(self, kind: str, ev: _Event) -> None:
        if kind in ("iterator", "input"):
            self._aggregate(kind, ev)
        elif not self.full(kind):
            self.per_event[kind].append(ev)

    def _aggregate(self, kind: str, ev: _Event) -> None:
        key = (kind, ev.plane, _line_base(ev.line), ev.name)
        agg = self.aggregates.get(key)
        if agg is None:
            if len(self.aggregates) >= MAX_AGGREGATE_ROWS:
                self.dropped[kind] = self.dropped.get(kind, 0) + 1
                return
            agg = {"first": ev, "count": 0, "total": 0.0, "max": 0.0}
            self.aggregates[key] = agg
        agg["count"] += 1
        agg["total"] += ev.duration_us
        agg["max"] = max(agg["max"], ev.duration_us)
        if ev.start_us < agg["first"].start_us:
            agg["first"] = ev

    def rows(self) -> list[dict[str, Any]]:
        for kind, events in self.per_event.items():
            events.sort(key=lambda e: e.start_us)
            if len(events) > MAX_EVENT_ROWS:
                self.dropped[kind] = self.dropped.get(kind, 0) + len(events) - MAX_EVENT_ROWS
                del events[MAX_EVENT_ROWS:]
        steps = _StepIndex(self.per_event["step"] or _calls_as_steps(self.per_event["function"]))
        out: list[dict[str, Any]] = []
        for kind, events in self.per_event.items():
            out.extend(self._event_row(kind, ev, steps) for ev in events)
        out.extend(self._aggregate_row(kind, agg) for (kind, *_), agg in self.aggregates.items())
        out.sort(key=lambda r: (r["_start"], r["name"]))
        for r in out:
            del r["_start"]
        return out

    def _base_row(self, kind: str, ev: _Event, args: dict[str, str]) -> dict[str, Any]:
        args["kind"] = kind
        ts = round(ev.start_us) if self.absolute else None
        if not self.absolute:
            args["offset_us"] = f"{ev.start_us:.3f}"
        return {
            "_start": ev.start_us,
            "plane": ev.plane,
            "line_name": ev.line,
            "name": ev.name,
            "ts": ts,
            "duration_us": round(ev.duration_us, 3),
            "step": None,
            "group_key": None,
            "instance_key": None,
            "iterator_path": None,
            "args": args,
        }

    def _event_row(self, kind: str, ev: _Event, steps: _StepIndex) -> dict[str, Any]:
        args = _public_args(ev.stats)
        row = self._base_row(kind, ev, args)
        if kind == "step":
            row["step"] = _step_number(ev)
            if "epoch_num" in ev.stats:
                args["epoch"] = args.pop("epoch_num")
        else:
            row["step"] = steps.step_at(ev.start_us)
            if row["step"] is None and kind == "collective":
                # A custom loop's profile has no step events: the collective's own
                # step_id (the same for every collective of one step run) groups it.
                row["step"] = _int_or_none(ev.stats.get("step_id"))
        if kind in ("collective", "collective_setup"):
            row["group_key"] = _int_or_none(ev.stats.get("group_key"))
            row["instance_key"] = _int_or_none(ev.stats.get("instance_key"))
            op_name, _, op_type = ev.name.rpartition(":")
            if op_name and op_type and "::" not in ev.name:
                args["op_type"] = op_type
        return row

    def _aggregate_row(self, kind: str, agg: dict[str, Any]) -> dict[str, Any]:
        first: _Event = agg["first"]
        args = {k: v for k, v in _public_args(first.stats).items() if k in ("name", "index", "num_shards")}
        if "name" in args:
            args["dataset"] = args.pop("name")
        args.update(count=str(agg["count"]), max_us=f"{agg['max']:.3f}")
        row = self._base_row(kind, first, args)
        row["line_name"] = _line_base(first.line)
        row["duration_us"] = round(agg["total"], 3)
        if kind == "iterator":
            row["iterator_path"] = first.name
        return row

    def note(self) -> str:
        if not self.dropped:
            return ""
        parts = ", ".join(f"{n} {k}" for k, n in sorted(self.dropped.items()))
        return f"row limit reached: dropped {parts} events"


def _calls_as_steps(calls: list[_Event]) -> list[_Event]:
    """Without step events (a custom training loop, no ``Trace(step_num=...)``):
    the calls of the function the profile spends most of its time in, each
    call one step, numbered in order."""
    by_name: dict[str, list[_Event]] = {}
    for ev in calls:
        by_name.setdefault(ev.name, []).append(ev)
    if not by_name:
        return []
    busiest = max(by_name.values(), key=lambda evs: (sum(e.duration_us for e in evs), len(evs)))
    if len(busiest) < 2:
        return []
    return [
        _Event(ev.plane, ev.line, str(i), ev.start_us, ev.duration_us, decoded={"step_num": str(i)})
        for i, ev in enumerate(sorted(busiest, key=lambda e: e.start_us))
    ]


class _StepIndex:
    """Which step event's interval contains a time."""

    def __init__(self, steps: list[_Event]) -> None:
        self.steps = sorted(steps, key=lambda e: e.start_us)
        self.starts = [e.start_us for e in self.steps]

    def step_at(self, t: float) -> int | None:
        i = bisect.bisect_right(self.starts, t) - 1
        if i < 0:
            return None
        ev = self.steps[i]
        if t > ev.start_us + ev.duration_us:
            return None
        return _step_number(ev)


def _step_number(ev: _Event) -> int | None:
    """``step_num`` stat; on a ``Steps`` line the event's name is the step number."""
    step = _int_or_none(ev.stats.get("step_num"))
    return step if step is not None else _int_or_none(ev.name)


def _pick_task(counts: Mapping[str, int]) -> tuple[str | None, list[str]]:
    """The task a trace is about: the only one named, else the clearly most named."""
    seen = sorted(counts, key=lambda t: (-counts[t], t))
    if not seen:
        return None, []
    if len(seen) == 1 or counts[seen[0]] > 2 * counts[seen[1]]:
        return seen[0], sorted(seen)
    return None, sorted(seen)


# ---------------------------------------------------------------- XSpace

# xplane.proto (tsl/profiler/protobuf/xplane.proto, package tensorflow.profiler),
# as (message, [(field, number, type, label, message type or None, oneof or None)]).
# Map fields are repeated *Entry messages with map_entry set.
_XPLANE_SCHEMA: tuple[tuple[str, tuple[tuple[str, int, str, str, str | None, str | None], ...]], ...] = (
    (
        "XSpace",
        (
            ("planes", 1, "message", "repeated", "XPlane", None),
            ("errors", 2, "string", "repeated", None, None),
            ("warnings", 3, "string", "repeated", None, None),
            ("hostnames", 4, "string", "repeated", None, None),
        ),
    ),
    (
        "XPlane",
        (
            ("id", 1, "int64", "optional", None, None),
            ("name", 2, "string", "optional", None, None),
            ("lines", 3, "message", "repeated", "XLine", None),
            ("event_metadata", 4, "message", "repeated", "XPlane.EventMetadataEntry", None),
            ("stat_metadata", 5, "message", "repeated", "XPlane.StatMetadataEntry", None),
            ("stats", 6, "message", "repeated", "XStat", None),
        ),
    ),
    (
        "XPlane.EventMetadataEntry",
        (
            ("key", 1, "int64", "optional", None, None),
            ("value", 2, "message", "optional", "XEventMetadata", None),
        ),
    ),
    (
        "XPlane.StatMetadataEntry",
        (
            ("key", 1, "int64", "optional", None, None),
            ("value", 2, "message", "optional", "XStatMetadata", None),
        ),
    ),
    (
        "XLine",
        (
            ("id", 1, "int64", "optional", None, None),
            ("display_id", 10, "int64", "optional", None, None),
            ("name", 2, "string", "optional", None, None),
            ("display_name", 11, "string", "optional", None, None),
            ("timestamp_ns", 3, "int64", "optional", None, None),
            ("duration_ps", 9, "int64", "optional", None, None),
            ("events", 4, "message", "repeated", "XEvent", None),
        ),
    ),
    (
        "XEvent",
        (
            ("metadata_id", 1, "int64", "optional", None, None),
            ("offset_ps", 2, "int64", "optional", None, "data"),
            ("num_occurrences", 5, "int64", "optional", None, "data"),
            ("duration_ps", 3, "int64", "optional", None, None),
            ("stats", 4, "message", "repeated", "XStat", None),
        ),
    ),
    (
        "XStat",
        (
            ("metadata_id", 1, "int64", "optional", None, None),
            ("double_value", 2, "double", "optional", None, "value"),
            ("uint64_value", 3, "uint64", "optional", None, "value"),
            ("int64_value", 4, "int64", "optional", None, "value"),
            ("str_value", 5, "string", "optional", None, "value"),
            ("bytes_value", 6, "bytes", "optional", None, "value"),
            ("ref_value", 7, "uint64", "optional", None, "value"),
        ),
    ),
    (
        "XEventMetadata",
        (
            ("id", 1, "int64", "optional", None, None),
            ("name", 2, "string", "optional", None, None),
            ("display_name", 4, "string", "optional", None, None),
            ("metadata", 3, "bytes", "optional", None, None),
            ("stats", 5, "message", "repeated", "XStat", None),
            ("child_id", 6, "int64", "repeated", None, None),
        ),
    ),
    (
        "XStatMetadata",
        (
            ("id", 1, "int64", "optional", None, None),
            ("name", 2, "string", "optional", None, None),
            ("description", 3, "string", "optional", None, None),
        ),
    ),
)
_XPLANE_PACKAGE = "tensorflow.profiler"


@lru_cache(maxsize=1)
def _xspace_class() -> Any:
    """The XSpace message class, built in a private descriptor pool (no TF, no
    clash with TensorFlow's own copy when both are loaded)."""
    try:
        from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    except ImportError:
        raise TraceError(
            "reading *.xplane.pb profiler traces needs the 'protobuf' package",
            hint="pip install protobuf",
        ) from None
    fdp = descriptor_pb2.FileDescriptorProto(
        name="mwms_doctor/xplane.proto", package=_XPLANE_PACKAGE, syntax="proto3"
    )
    messages: dict[str, Any] = {}
    for full, fields in _XPLANE_SCHEMA:
        parent, _, short = full.rpartition(".")
        msg = messages[parent].nested_type.add(name=short) if parent else fdp.message_type.add(name=full)
        if full.endswith("Entry"):
            msg.options.map_entry = True
        messages[full] = msg
        oneofs: dict[str, int] = {}
        for name, number, ftype, label, type_name, oneof in fields:
            f = msg.field.add(name=name, number=number)
            f.type = getattr(descriptor_pb2.FieldDescriptorProto, f"TYPE_{ftype.upper()}")
            f.label = getattr(descriptor_pb2.FieldDescriptorProto, f"LABEL_{label.upper()}")
            if type_name:
                f.type_name = f".{_XPLANE_PACKAGE}.{type_name}"
            if oneof is not None:
                if oneof not in oneofs:
                    oneofs[oneof] = len(msg.oneof_decl)
                    msg.oneof_decl.add(name=oneof)
                f.oneof_index = oneofs[oneof]
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(fdp.SerializeToString())
    desc = pool.FindMessageTypeByName(f"{_XPLANE_PACKAGE}.XSpace")
    get_class = getattr(message_factory, "GetMessageClass", None)
    if get_class is not None:
        return get_class(desc)
    return message_factory.MessageFactory(pool).GetPrototype(desc)  # protobuf < 4.22


def _parse_xspace(path: Path, data: bytes) -> Any:
    space = _xspace_class()()
    try:
        space.ParseFromString(data)
    except Exception as e:  # protobuf's DecodeError, or a RuntimeError from some backends
        raise TraceError(
            f"{path}: corrupt or truncated XSpace ({type(e).__name__}: {e})",
            hint="the profiler may have been killed while writing it; profile again",
        ) from None
    if not space.planes or not any(p.name for p in space.planes):
        raise TraceError(
            f"{path}: not an XSpace profiler trace (no named planes in {len(data)} bytes)",
            hint="a truncated or foreign file named *.xplane.pb",
        )
    return space


class _Plane:
    """Stat and event metadata of one XPlane, resolved once."""

    def __init__(self, plane: Any) -> None:
        self.plane = plane
        self.stat_names: dict[int, str] = {k: v.name for k, v in plane.stat_metadata.items()}
        self.event_names: dict[int, str] = {
            k: v.name or v.display_name for k, v in plane.event_metadata.items()
        }

    def stat_value(self, stat: Any) -> str:
        which = stat.WhichOneof("value")
        if which is None:
            return ""
        value = getattr(stat, which)
        if which == "ref_value":
            return self.stat_names.get(value, str(value))
        if which == "bytes_value":
            return str(value.hex())
        if which == "double_value":
            return repr(value)
        return str(value)

    def stats(self, stats: Iterable[Any]) -> dict[str, str]:
        return {self.stat_names.get(s.metadata_id, str(s.metadata_id)): self.stat_value(s) for s in stats}


def _session_window(space: Any) -> tuple[int | None, int | None]:
    """profile_start_time / profile_stop_time (epoch ns) from the Task Environment plane."""
    found: dict[str, str] = {}
    for plane in space.planes:
        if plane.stats:
            found.update(_Plane(plane).stats(plane.stats))
    return _int_or_none(found.get("profile_start_time")), _int_or_none(found.get("profile_stop_time"))


def _read_xspace(path: Path, data: bytes) -> TraceRead:
    space = _parse_xspace(path, data)
    start_ns, stop_ns = _session_window(space)
    first_line_ns = min((ln.timestamp_ns for p in space.planes for ln in p.lines), default=0)
    relative = first_line_ns < _EPOCH_MIN_NS
    absolute = not relative or start_ns is not None
    base_ns = start_ns if relative and start_ns is not None else 0
    builder = _RowBuilder(absolute)
    task_counts: dict[str, int] = {}
    for plane in space.planes:
        resolved = _Plane(plane)
        _count_tasks(plane.name, resolved, task_counts)
        for line in plane.lines:
            _scan_line(resolved, line, base_ns if line.timestamp_ns < _EPOCH_MIN_NS else 0, builder)
    task, tasks_seen = _pick_task(task_counts)
    rows = builder.rows()  # before the note: it counts what the row limit dropped
    notes = [n for n in (builder.note(), _relative_note(absolute), *_space_notes(space)) if n]
    return TraceRead(
        format="xplane",
        rows=rows,
        task=task,
        tasks_seen=tasks_seen,
        host=space.hostnames[0] if space.hostnames else _host_from_name(path),
        start_us=start_ns // 1000 if start_ns is not None else None,
        stop_us=stop_ns // 1000 if stop_ns is not None else None,
        note="; ".join(notes),
    )


def _count_tasks(plane_name: str, plane: _Plane, counts: dict[str, int]) -> None:
    """Device strings name the task: in the plane name or as (referenced) stat strings."""
    for text in (plane_name, *plane.stat_names.values()):
        for task in task_mentions(text):
            counts[task] = counts.get(task, 0) + 1


def _scan_line(plane: _Plane, line: Any, base_ns: int, builder: _RowBuilder) -> None:
    line_name = line.display_name or line.name
    line_ps = (line.timestamp_ns + base_ns) * 1000
    kinds: dict[int, str | None] = {}
    misses: dict[int, int] = {}
    for ev in line.events:
        mid = ev.metadata_id
        if mid not in kinds:
            kinds[mid] = _kind_of_name(plane.event_names.get(mid, ""))
        kind = kinds[mid]
        decoded = None
        if kind is None:
            if misses.get(mid, 0) >= _STATS_PROBE_LIMIT or not (ev.stats or line_name == "Steps"):
                continue
            decoded = plane.stats(ev.stats)
            kind = _kind_of_event(plane.event_names.get(mid, ""), line_name, decoded)
            if kind is None:
                misses[mid] = misses.get(mid, 0) + 1
                continue
        if builder.full(kind) or ev.WhichOneof("data") != "offset_ps":
            continue
        builder.add(
            kind,
            _Event(
                plane=plane.plane.name,
                line=line_name,
                name=plane.event_names.get(mid, str(mid)),
                start_us=(line_ps + ev.offset_ps) / 1e6,
                duration_us=ev.duration_ps / 1e6,
                decoded=decoded,
                raw_stats=ev.stats,
                resolver=plane,
            ),
        )


def _relative_note(absolute: bool) -> str:
    return "" if absolute else "trace times are relative and no session start is recorded: ts left null"


def _space_notes(space: Any) -> list[str]:
    return [f"profiler error: {e}" for e in space.errors] + [f"profiler warning: {w}" for w in space.warnings]


def _host_from_name(path: Path) -> str | None:
    for suffix in TRACE_SUFFIXES:
        if path.name.endswith(suffix):
            return path.name[: -len(suffix)] or None
    return None


# ---------------------------------------------------------------- Chrome trace JSON


def _expand(path: Path, kind: str) -> bytes:
    """A compressed trace's bytes, streamed and capped: a trace that expands
    to gigabytes is refused, not decompressed into memory."""
    limits = ReadLimits(max_bytes=MAX_TRACE_BYTES)
    try:
        with Decoded(Source(path, kind, None, limits)) as fh:
            data = fh.read(MAX_TRACE_BYTES + 1)
            damage = fh.damage
    except (OSError, EOFError, zlib.error) as e:
        damage = str(e)
    if damage and "expand" in damage:
        raise TraceError(f"{path}: {damage}", hint="profile fewer steps, or read it with TensorBoard")
    if damage:
        raise TraceError(
            f"{path}: corrupt or truncated {kind} ({damage})",
            hint="the profiler may have been killed while writing it",
        )
    return data


def _load_json(path: Path, data: bytes) -> Any:
    try:
        if (kind := compression_of(data[:8])) is not None:
            data = _expand(path, kind)
        return json.loads(data)
    except (OSError, EOFError, zlib.error) as e:
        raise TraceError(
            f"{path}: corrupt or truncated gzip ({e})",
            hint="the profiler may have been killed while writing it",
        ) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise TraceError(f"{path}: not valid trace JSON ({e})", hint="a truncated or foreign file") from None


def _chrome_events(path: Path, doc: Any) -> list[Any]:
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        raise TraceError(f"{path}: JSON without a traceEvents list", hint="not a Chrome trace")
    return events


def _read_chrome(path: Path, data: bytes) -> TraceRead:
    events = _chrome_events(path, _load_json(path, data))
    processes: dict[Any, str] = {}
    threads: dict[tuple[Any, Any], str] = {}
    for ev in events:
        if isinstance(ev, dict) and ev.get("ph") == "M":
            name = str((ev.get("args") or {}).get("name", ""))
            if ev.get("name") == "process_name":
                processes[ev.get("pid")] = name
            elif ev.get("name") == "thread_name":
                threads[(ev.get("pid"), ev.get("tid"))] = name
    complete = [ev for ev in events if isinstance(ev, dict) and ev.get("ph") == "X" and "ts" in ev]
    absolute = any(_number(ev.get("ts")) >= _EPOCH_MIN_US for ev in complete[:1000])
    builder = _RowBuilder(absolute)
    task_counts: dict[str, int] = {}
    for text in processes.values():
        for named in task_mentions(text):
            task_counts[named] = task_counts.get(named, 0) + 1
    for ev in complete:
        _add_chrome_event(ev, processes, threads, builder)
        _count_chrome_tasks(ev, task_counts)
    task, tasks_seen = _pick_task(task_counts)
    rows = builder.rows()  # before the note: it counts what the row limit dropped
    notes = [n for n in (builder.note(), _relative_note(absolute)) if n]
    return TraceRead(
        format="chrome_json",
        rows=rows,
        task=task,
        tasks_seen=tasks_seen,
        host=_host_from_name(path),
        note="; ".join(notes),
    )


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _count_chrome_tasks(ev: Mapping[str, Any], counts: dict[str, int]) -> None:
    """Device strings in any event's args (``device`` of RemoteCallOp ...) name the task."""
    args = ev.get("args")
    if not isinstance(args, dict):
        return
    for value in args.values():
        if isinstance(value, str) and "/job:" in value:
            for task in task_mentions(value):
                counts[task] = counts.get(task, 0) + 1


def _add_chrome_event(
    ev: Mapping[str, Any],
    processes: Mapping[Any, str],
    threads: Mapping[tuple[Any, Any], str],
    builder: _RowBuilder,
) -> None:
    raw_args = ev.get("args")
    stats = {str(k): str(v) for k, v in raw_args.items()} if isinstance(raw_args, dict) else {}
    name = stats.get("long_name") or str(ev.get("name", ""))
    line = threads.get((ev.get("pid"), ev.get("tid")), str(ev.get("tid", "")))
    kind = _kind_of_event(name, line, stats)
    if kind is None:
        return
    builder.add(
        kind,
        _Event(
            plane=processes.get(ev.get("pid"), str(ev.get("pid", ""))),
            line=line,
            name=name,
            start_us=_number(ev.get("ts")),
            duration_us=_number(ev.get("dur")),
            decoded=stats,
        ),
    )

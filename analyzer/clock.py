"""One clock for the whole job: estimate each worker's clock offset and apply it.

Workers' clocks can disagree (different hosts, a VM whose clock drifted). The
evidence holds *happens-before* pairs that both sides log, each one a bound
on the difference of two offsets. With ``true = local + offset``:

* coordination: a worker starts its server, then registers with the
  coordination service; the leader logs ``/job:worker/replica:0/task:N has
  connected to coordination service``; then the worker logs ``Coordination
  agent has successfully connected``. So the worker's server start happened
  before the leader's line, which happened before the worker's agent line;
* collectives in profiler traces: an all-reduce with one instance key cannot
  finish on any worker before it has started on every worker.

Every pair ``a`` (on worker j) → ``b`` (on worker i) says ``o_j - o_i <= b_i
- a_j``: a system of difference constraints. Shortest paths through it give,
for each worker, the interval of offsets the evidence allows, relative to the
reference worker (the coordination leader, offset 0). A clock is taken as
right when zero is in its interval (the bound then says how far off it could
still be); otherwise the estimate is the interval's midpoint and the bound
half its width, or, when the evidence bounds it on one side only, the least
correction that fits, with no bound.

The offsets are added to ``events.ts``, ``rpc.ts`` and ``trace_events.ts``
and written to ``workers.clock_offset_s`` / ``clock_bound_s``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field, replace

import pyarrow as pa
import pyarrow.compute as pc

from .tables import JobTables

# Offsets smaller than this are noise (log lines are printed a few ms after
# the event they report): no correction is applied below it.
MIN_CORRECTION_S = 0.05


@dataclass
class Clock:
    reference: str | None = None
    offsets: dict[str, float] = field(default_factory=dict)  # worker -> seconds to add
    bounds: dict[str, float | None] = field(default_factory=dict)  # worker -> +/- seconds (None: one-sided)
    anchors: dict[str, int] = field(default_factory=dict)  # worker -> number of constraints about it
    inconsistent: list[str] = field(default_factory=list)  # workers whose constraints contradict
    basis: list[str] = field(default_factory=list)  # the kinds of anchors used

    @property
    def corrected(self) -> dict[str, float]:
        return {w: o for w, o in self.offsets.items() if abs(o) >= MIN_CORRECTION_S}


def _secs(value: object) -> float:
    return value.timestamp() if value is not None else math.nan  # type: ignore[attr-defined]


def constraints(
    tables: JobTables, basis: list[str] | None = None
) -> tuple[str | None, dict[tuple[str, str], float]]:
    """The reference worker and, per ordered pair (j, i), the least c with o_j - o_i <= c.
    The kinds of anchors found are appended to ``basis``."""
    basis = basis if basis is not None else []
    ev = tables.events
    cons: dict[tuple[str, str], float] = {}

    def add(j: str, i: str, c: float) -> None:
        if j != i and not math.isnan(c):
            cons[(j, i)] = min(cons.get((j, i), math.inf), c)

    kinds = ("coord.task_connected", "coord.agent_connected", "tf.server_started", "coord.service_started")
    mask = pc.is_in(pc.cast(ev["kind"], pa.string()), pa.array(kinds))
    rows = ev.filter(mask).select(["worker", "kind", "ts", "fields"]).to_pylist()
    leader = next((r["worker"] for r in rows if r["kind"] == "coord.service_started"), None)
    first: dict[tuple[str, str], float] = {}
    connected_seen: dict[str, float] = {}
    for r in rows:
        t = _secs(r["ts"])
        key = (r["worker"], r["kind"])
        first.setdefault(key, t)
        if r["kind"] == "coord.task_connected" and r["worker"] == leader:
            task = dict(r["fields"] or []).get("task", "")
            connected_seen.setdefault(task, t)
    if leader is not None and connected_seen:
        basis.append("registration with the coordination service")
        for task, t_leader in connected_seen.items():
            server = first.get((task, "tf.server_started"))
            agent = first.get((task, "coord.agent_connected"))
            if server is not None:
                add(task, leader, t_leader - server)  # server start -> leader sees the registration
            if agent is not None:
                add(leader, task, agent - t_leader)  # leader sees it -> the agent says connected
    trace = tables.get("trace_events")
    if trace is not None and trace.num_rows:
        before = dict(cons)
        _collective_constraints(trace, add)
        if cons != before:
            basis.append("collectives in profiler traces")
    if leader is None:
        workers = sorted({w for (w, _) in first} | {w for pair in cons for w in pair})
        leader = workers[0] if workers else None
    return leader, cons


def _collective_constraints(trace: pa.Table, add) -> None:  # type: ignore[no-untyped-def]
    """An op with one (group, instance) key finishes nowhere before it starts everywhere."""
    coll = trace.filter(pc.and_(pc.is_valid(trace["instance_key"]), pc.is_valid(trace["ts"])))
    spans: dict[tuple[int, int], dict[str, tuple[float, float]]] = defaultdict(dict)
    for r in coll.select(["worker", "ts", "duration_us", "group_key", "instance_key"]).to_pylist():
        start = _secs(r["ts"])
        end = start + (r["duration_us"] or 0.0) / 1e6
        key = (r["group_key"] or 0, r["instance_key"])
        prev = spans[key].get(r["worker"])
        # Several events of one op on one worker (kernel + its done callback): the widest span.
        spans[key][r["worker"]] = (min(start, prev[0]), max(end, prev[1])) if prev else (start, end)
    for per_worker in spans.values():
        for j, (start_j, _) in per_worker.items():
            for i, (_, end_i) in per_worker.items():
                add(j, i, end_i - start_j)


def estimate(tables: JobTables) -> Clock:
    basis: list[str] = []
    ref, cons = constraints(tables, basis)
    clock = Clock(reference=ref, basis=basis)
    if ref is None:
        return clock
    nodes = sorted({ref} | {w for pair in cons for w in pair})
    # hi[w]: shortest path ref -> w over edges i -> j of weight c(j, i)  (o_j <= o_i + c)
    hi = _shortest(nodes, ref, {(i, j): c for (j, i), c in cons.items()})
    # lo[w] = -(shortest path w -> ref)
    to_ref = _shortest(nodes, ref, {(j, i): c for (j, i), c in cons.items()})
    for w in nodes:
        if w == ref:
            clock.offsets[w], clock.bounds[w] = 0.0, 0.0
            continue
        upper, lower = hi.get(w, math.inf), -to_ref.get(w, math.inf)
        clock.anchors[w] = sum(1 for pair in cons if w in pair)
        if upper < lower:
            clock.inconsistent.append(w)
            continue
        if math.isinf(upper) and math.isinf(lower):
            continue
        if lower <= 0.0 <= upper:
            # The clock as logged fits the evidence: no correction; the bound
            # is how far off it could still be.
            clock.offsets[w] = 0.0
            far = max(upper, -lower)
            clock.bounds[w] = far if math.isfinite(far) else None
        elif math.isfinite(upper - lower):
            clock.offsets[w] = (upper + lower) / 2
            clock.bounds[w] = (upper - lower) / 2
        else:
            # Bounded on one side only: the least correction that fits.
            clock.offsets[w] = lower if math.isfinite(lower) else upper
            clock.bounds[w] = None
    return clock


def _shortest(nodes: list[str], src: str, edges: dict[tuple[str, str], float]) -> dict[str, float]:
    """Bellman-Ford from ``src`` over ``edges[(u, v)] = weight``; few nodes, few edges."""
    dist = {n: math.inf for n in nodes}
    dist[src] = 0.0
    for _ in range(len(nodes)):
        changed = False
        for (u, v), w in edges.items():
            if dist.get(u, math.inf) + w < dist.get(v, math.inf):
                dist[v] = dist[u] + w
                changed = True
        if not changed:
            break
    return dist


# The workers table's times, each read from the worker's own log: moved with it.
WORKER_TIMES = ("first_ts", "last_ts", "connected_ts", "last_progress_ts")


def align(tables: JobTables) -> tuple[JobTables, Clock]:
    """The job's tables with every time on the reference worker's clock: new
    tables (the input is left as it was) and the clock estimate."""
    clock = estimate(tables)
    shift = clock.corrected
    moved: dict[str, pa.Table] = {}
    if shift:
        moved["events"] = _shift(tables.events, shift)
        for name in ("rpc", "trace_events"):
            if (t := tables.get(name)) is not None:
                moved[name] = _shift(t, shift)
    workers = _workers_with_clock(tables.workers, clock)
    if shift:
        workers = _shift(workers, shift, columns=WORKER_TIMES)
    return replace(tables, **moved, workers=workers, clock_basis=list(clock.basis)), clock


def _shift(table: pa.Table, offsets: dict[str, float], columns: tuple[str, ...] = ("ts",)) -> pa.Table:
    workers = pc.cast(table["worker"], pa.string())
    delta_us = pa.array([0] * table.num_rows, pa.int64())
    for w, off in offsets.items():
        delta_us = pc.if_else(pc.equal(workers, w), int(round(off * 1e6)), delta_us)
    for col in columns:
        i = table.schema.get_field_index(col)
        ts = table[col]
        as_int = pc.cast(ts, pa.int64())
        moved = pc.cast(pc.add(as_int, delta_us), ts.type)
        table = table.set_column(i, table.schema.field(i), moved)
    return table


def _workers_with_clock(workers: pa.Table, clock: Clock) -> pa.Table:
    names = workers["worker"].to_pylist()
    off = pa.array([clock.offsets.get(w) for w in names], pa.float64())
    bound = pa.array([clock.bounds.get(w) for w in names], pa.float64())
    for col, values in (("clock_offset_s", off), ("clock_bound_s", bound)):
        i = workers.schema.get_field_index(col)
        workers = workers.set_column(i, workers.schema.field(i), values)
    return workers

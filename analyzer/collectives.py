"""Collectives whose members did not agree: who brought the odd tensor, and
whether the members had even reached the same point of training. Shared by
CM001 (members disagree) and DA002 (a worker ran out of data)."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from .facts import Job
from .rows import Row, time_key

# TensorFlow's DataType enum (types.proto), as collective errors print it.
TF_DTYPES = {1: "float32", 2: "float64", 3: "int32", 9: "int64", 10: "bool", 14: "bfloat16", 19: "float16"}
_FLOATS = {1, 2, 14, 19}


@dataclass
class CollectiveMismatch:
    instance: str
    odd: list[str]  # the member(s) whose tensor differs from the others'
    what: str
    reports: list[Row]
    confidence: float
    looks_like_data_end: bool  # an int64 member among float ones: the input pipeline's end-of-data reduce


def collective_mismatches(job: Job) -> CollectiveMismatch | None:
    """The first collective whose members disagree on shape or type, and who disagrees.

    TF names, in each report, the member that arrived with parameters
    different from the first one registered: for a shape, the device named
    with its shape; for a type, the reporter brought the ``got`` type and
    the first registrant the ``expected`` one."""
    reports = job.rows.of(["collective.shape_mismatch", "collective.type_mismatch"])
    reports += job.rows.tracebacks_with(["collective.shape_mismatch", "collective.type_mismatch"])
    reports = sorted(reports, key=time_key)
    if not reports:
        return None
    first = reports[0]
    instance = first["fields"].get("instance", "?")
    same = [
        r
        for r in reports
        if r["fields"].get("instance", "?") == instance
        and (r["fields"].get("tf_kind") or r["kind"]) == (first["fields"].get("tf_kind") or first["kind"])
    ]
    members = [w for w, r in job.facts.workers.items() if r["has_log"] and not w.startswith("?")]
    if (first["fields"].get("tf_kind") or first["kind"]) == "collective.shape_mismatch":
        named = {r["fields"].get("task") for r in same if r["fields"].get("task")}
        f = first["fields"]
        if not f.get("shape") and not f.get("other_shape"):
            got, want = f.get("got_shape"), f.get("expected_shape")
            what = f"output shape [{got}] where [{want}] was expected" if got else "shapes that differ"
            return CollectiveMismatch(instance, sorted({first["worker"]}), what, same, 0.5, False)
        behind = _behind(job, members) if len(members) == 2 and len(named) == 1 else None
        if behind is not None:
            # Two members: the device TF names is only the one that reported,
            # either could be odd. The one behind in training (still in its
            # epoch while the other had gone on) was running a collective of
            # its own: an evaluation or a save on one worker only.
            odd, conf = [behind], 0.6
            mine, theirs = (
                (f.get("shape"), f.get("other_shape"))
                if behind in named
                else (f.get("other_shape"), f.get("shape"))
            )
            what = f"shape [{mine}] where the other had [{theirs}], while still behind it in training"
        elif len(named) == 1:
            odd, conf = sorted(named), 0.8
            what = f"shape [{f.get('shape')}] where the others had [{f.get('other_shape')}]"
        else:
            rest = [w for w in members if w not in named]
            odd, conf = (rest, 0.7) if len(rest) == 1 else (sorted(named), 0.5)
            what = f"shape [{f.get('other_shape')}] where the others had [{f.get('shape')}]"
        return CollectiveMismatch(instance, odd, what, same, conf, False)
    f = first["fields"]
    expected, got = int(f.get("expected_dtype", "0")), int(f.get("dtype", "0"))
    by_site = _odd_by_code_site(job)
    if by_site:
        odd, conf = by_site, 0.8
    else:
        # Without code sites: the members that did not report brought the
        # expected type, when they are the few (TF resolves on the group
        # leader, so sometimes only the leader reports: then we cannot tell).
        # A report of its own, not another member's relayed to it ("Collective ops
        # is aborted by: Collective instance ...", a peer's gRPC error message).
        reporters = {r["worker"] for r in same if _own_report(r)} or {r["worker"] for r in same}
        silent = [w for w in members if w not in reporters]
        odd, conf = (silent, 0.6) if silent and len(silent) < len(members) / 2 else (sorted(reporters), 0.4)
    a, b = TF_DTYPES.get(expected, str(expected)), TF_DTYPES.get(got, str(got))
    what = f"data types {a} and {b} in one all-reduce"
    # The input pipeline's end-of-data all-reduce is int64; gradients are float.
    # Its input can end only after it trained on some: a mismatch at the first
    # step, before any worker's progress, is a collective of the code's own.
    timed = [r["ts"] for r in job.facts.last_progress.values() if r["ts"] is not None]
    trained = (
        job.facts.progressed() if first["ts"] is None or not timed else any(t < first["ts"] for t in timed)
    )
    data_end = 9 in (expected, got) and bool({expected, got} & _FLOATS) and conf >= 0.6 and trained
    return CollectiveMismatch(instance, odd, what, same, conf, data_end)


def _own_report(row: Row) -> bool:
    """Whether a mismatch report is the member's own: the line that names the
    collective instance is not a relay of another member's error."""
    line = next((ln for ln in str(row["text"]).splitlines() if "Collective instance" in ln), "")
    return (
        bool(line)
        and "aborted by" not in line
        and "received from peer" not in line
        and "grpc_message" not in line
    )


def _behind(job: Job, members: list[str]) -> str | None:
    """The one member whose last training progress is behind the others'
    (by epoch, then step); None when any has none or they are level."""
    points: dict[str, tuple[int, int]] = {}
    for w in members:
        row = job.facts.last_progress.get(w)
        if row is None:
            return None
        epoch, step = str(row["fields"].get("epoch") or ""), str(row["fields"].get("step") or "")
        if not (epoch.isdigit() or step.isdigit()):
            return None
        points[w] = (int(epoch) if epoch.isdigit() else 0, int(step) if step.isdigit() else 0)
    low = min(points.values())
    behind = [w for w, pt in points.items() if pt == low]
    return behind[0] if len(behind) == 1 else None


def _odd_by_code_site(job: Job) -> list[str]:
    """The members whose failing collective was created at another code site
    than the others' (``Detected at node ... defined at``): they were running
    a different collective. Empty when the sites do not single anyone out."""
    sites: dict[str, str] = {}
    for r in job.rows.of(["py.traceback"]):
        site = r["fields"].get("node_site")
        if site and r["fields"].get("tf_kind", "").startswith("collective."):
            sites.setdefault(r["worker"], site)
    if len(sites) < 3 or len(set(sites.values())) != 2:
        return []
    by_site: dict[str, list[str]] = {}
    for w, site in sites.items():
        by_site.setdefault(site, []).append(w)
    few = min(by_site.values(), key=len)
    return sorted(few) if len(few) < len(sites) - len(few) else []


def loop_ended_before_stall(job: Job) -> tuple[Row, Row, list[str]] | None:
    """(a worker's end of its training loop, the collective stall after it,
    the ranks the stall names as missing) when a worker's training loop ended
    (an Estimator's "Loss for final step") before a collective stalled for
    ranks that never submitted (Horovod's "subset of ranks ... waiting for
    remainder of ranks"): the ranks that left were not there to reduce, which
    is uneven input, not members disagreeing on tensors. None otherwise."""
    stalls = [
        r
        for r in job.rows.of(["collective.rank_mismatch"])
        if "subset of ranks" in r["text"] or "missing ranks" in r["text"]
    ]
    ended = job.rows.of(["train.loop_ended"])
    if not stalls or not ended:
        return None
    stall = stalls[0]

    def before(a: Row, b: Row) -> bool:
        if a["source"] == b["source"]:
            return bool(a["line"] < b["line"])
        return a["ts"] is not None and b["ts"] is not None and a["ts"] <= b["ts"]

    first = next((r for r in ended if before(r, stall)), None)
    if first is None:
        return None
    named = pc.extract_regex(
        pc.cast(job.tables.events["text"], pa.string()), r"missing ranks: (?P<ranks>[\d, ]+)"
    )
    ranks: dict[str, None] = {}
    for found in named.drop_null().to_pylist():
        for rank in found["ranks"].replace(",", " ").split():
            ranks.setdefault(rank, None)
    return first, stall, list(ranks)

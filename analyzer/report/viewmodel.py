"""The report's view model: everything a renderer shows, as plain data.

Built once from the tables and the analysis; the HTML, JSON and Markdown
renderers read only this, never a raw table. Everything here is sorted and
free of absolute paths, so the same input gives the same report.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from dataclasses import asdict, dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from .. import __version__
from ..classes import CLASSES
from ..engine import Analysis
from ..facts import Job
from ..findings import Evidence, Finding, ts_key
from ..tables import datetimes, sort_key
from ..text import human_bytes

REPORT_SCHEMA_VERSION = 1
CONTEXT_BEFORE = 2  # records shown before an evidence record
CONTEXT_AFTER = 1
# A long evidence record is shown as its head and its tail: a traceback's
# exception and an allocator dump's Stats block are at the end.
HEAD_LINES = 4
TAIL_LINES = 10
MAX_ECHOES_SHOWN = 20


def iso(ts: dt.datetime | None) -> str | None:
    return (
        ts.astimezone(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        if ts
        else None
    )


def clock(ts: dt.datetime | None) -> str:
    return ts.astimezone(dt.timezone.utc).strftime("%H:%M:%S.%f")[:-3] if ts else "—"


@dataclass
class ContextLine:
    line: int
    text: str
    is_evidence: bool


@dataclass
class EvidenceView:
    worker: str
    source: str
    line: int
    end_line: int
    ts: str | None
    clock: str
    role: str
    text: str  # the whole record
    excerpt: list[tuple[int | None, str]]  # (file line or None, text) shown; ("…") marks a cut
    context: list[ContextLine] = field(default_factory=list)

    @property
    def location(self) -> str:
        # Line 0: the evidence is a whole file (a profiler trace), not one of its lines.
        return f"{self.source}:{self.line}" if self.line else self.source


@dataclass
class FindingView:
    id: str
    code: str
    name: str
    cls: str
    title: str
    severity: str
    confidence: float
    root_workers: list[str]
    affected_workers: list[str]
    first_ts: str | None
    clock: str
    summary: str
    explanation: str
    remedy: str
    facts: dict[str, Any]
    facts_shown: list[tuple[str, str]]  # for people: sizes in GiB, lists joined, empty ones left out
    cascade_of: str | None
    evidence: list[EvidenceView]
    echoes: list[EvidenceView]
    echoes_hidden: int
    # Who could not reach whom (FW001): column headers, then (observer, a cell per peer).
    matrix: tuple[list[str], list[tuple[str, list[str]]]] | None = None
    # Facts that are one figure per worker (versions): (workers, [(name, [value per worker, odd?])]).
    per_worker: tuple[list[str], list[tuple[str, list[tuple[str, bool]]]]] | None = None


@dataclass
class WorkerView:
    worker: str
    identity_from: str
    identity_note: str | None
    has_log: bool
    sources: list[str]
    host: str | None
    port: int | None
    pid: int | None
    is_leader: bool
    first_ts: str | None
    last_ts: str | None
    first_clock: str
    last_clock: str
    connected_clock: str
    last_epoch: int | None
    epochs: int | None
    last_step: int | None
    exit_code: int | None
    exit_signal: str | None
    exit_note: str | None
    tf_version: str | None
    n_records: int
    n_errors: int
    role_in_failure: str  # root | echo | ""
    last_progress_clock: str = "—"
    stuck_s: float | None = None  # from its last progress to its last line

    @property
    def exit_text(self) -> str:
        if self.exit_code is None and not self.exit_signal:
            return "unknown"
        bits = [str(self.exit_code)] if self.exit_code is not None else []
        if self.exit_signal:
            bits.append(self.exit_signal)
        return " ".join(bits)


@dataclass
class Marker:
    x: float
    kind: str  # start | connected | epoch | error | root | last | exit
    label: str
    title: str


@dataclass
class Lane:
    worker: str
    y: float
    x1: float | None
    x2: float | None
    markers: list[Marker]
    note: str
    role: str
    note_x: float = 0.0  # where the note starts: clear of the lane's markers


@dataclass
class Timeline:
    width: int
    height: int
    left: int
    right: int
    lanes: list[Lane]
    ticks: list[tuple[float, str]]
    t0: str | None
    span_s: float
    clock_note: str


@dataclass
class ReportModel:
    schema_version: int
    tool_version: str
    generated_at: str
    job: str
    verdict: dict[str, Any]
    findings: list[FindingView]
    unexplained: list[EvidenceView]
    unrecognised: list[dict[str, Any]]
    workers: list[WorkerView]
    timeline: Timeline
    inputs: list[dict[str, Any]]
    skipped: list[dict[str, str]]
    rules: list[dict[str, str]]
    alternatives: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The JSON report: the documented, versioned schema (``report.schema.json``)."""
        return {
            "schema": "mwms-doctor/report",
            "schema_version": self.schema_version,
            "tool_version": self.tool_version,
            "generated_at": self.generated_at,
            "job": self.job,
            "verdict": self.verdict,
            "alternatives": self.alternatives,
            "findings": [_finding_json(f) for f in self.findings],
            "unexplained_errors": [_evidence_json(e) for e in self.unexplained],
            "unrecognised_templates": self.unrecognised,
            "workers": [_worker_json(w) for w in self.workers],
            "inputs": self.inputs,
            "skipped": self.skipped,
            "rules": self.rules,
        }


_WORKER = re.compile(r"^(?:worker|chief|master|ps|evaluator):\d+$|^\?")


def _is_per_worker(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and bool(value)
        and all(isinstance(k, str) and _WORKER.match(k) for k in value)
        and all(isinstance(v, (str, int, float)) for v in value.values())
    )


def _per_worker(facts: dict[str, Any]) -> tuple[list[str], list[tuple[str, list[tuple[str, bool]]]]] | None:
    """Facts with one figure per worker (each package's version) as a table
    of figure by worker; a value held by fewer workers than another is odd."""
    rows = {k: v for k, v in sorted(facts.items()) if k != "matrix" and _is_per_worker(v)}
    if not rows:
        return None
    workers = sorted({w for v in rows.values() for w in v}, key=sort_key)
    out = []
    for name, per in rows.items():
        counts: dict[str, int] = {}
        for val in per.values():
            counts[str(val)] = counts.get(str(val), 0) + 1
        most = max(counts.values())
        cells = [
            (_fact(name, per[w]), counts[str(per[w])] < most) if w in per else ("—", False) for w in workers
        ]
        out.append((name.replace("_", " "), cells))
    return workers, out


def _matrix(raw: Any) -> tuple[list[str], list[tuple[str, list[str]]]] | None:
    """``{observer: {peer: status}}`` as a table; the diagonal is "-"."""
    if not isinstance(raw, dict) or not raw:
        return None
    peers = sorted({p for row in raw.values() for p in row})
    rows = [
        (obs, ["-" if obs == p else (raw[obs].get(p) or "ok / not seen") for p in peers])
        for obs in sorted(raw)
    ]
    return peers, rows


def who(workers: list[str]) -> str:
    """Workers as a heading names them: one the evidence does not name is
    said so ("?" is the analysis' mark for it, "?ml2_journal" an unnamed
    log's), never a bare question mark."""
    names = [
        "a worker the evidence does not name"
        if w == "?"
        else f"unnamed worker ({w[1:]})"
        if w.startswith("?")
        else w
        for w in workers
    ]
    return ", ".join(names) or "a worker the evidence does not name"


# An unnamed worker as the analysis marks it: "?" and the name of its file or tag.
_UNNAMED = re.compile(r"(?<![\w/?\]])\?([A-Za-z_][\w.-]*)")


def plain_names(text: str) -> str:
    """Prose with the analysis' marks for unnamed workers said in words:
    "?stdin lost its connection" -> "unnamed worker 'stdin' lost its connection"."""
    return _UNNAMED.sub(r"unnamed worker '\1'", text) if "?" in text else text


def worker_name(worker: str) -> str:
    """One worker as a table cell says it."""
    if worker == "?":
        return "not named"
    return f"unnamed ({worker[1:]})" if worker.startswith("?") else worker


def _fact(key: str, value: Any) -> str:
    if isinstance(value, int) and key.endswith("_bytes"):
        return f"{human_bytes(float(value))} ({value:,} B)"
    if isinstance(value, list):
        return ", ".join(_fact(key, v) for v in value)
    if isinstance(value, dict):
        # Worker -> figure (a count, a version): "worker:0 20, worker:1 7", never a Python dict.
        return ", ".join(f"{k} {_fact(key, v)}" for k, v in sorted(value.items(), key=lambda kv: str(kv[0])))
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _evidence_json(e: EvidenceView) -> dict[str, Any]:
    return {
        "worker": e.worker,
        "source": e.source,
        "line": e.line,
        "end_line": e.end_line,
        "ts": e.ts,
        "role": e.role,
        "text": e.text,
    }


def _finding_json(f: FindingView) -> dict[str, Any]:
    drop = ("evidence", "echoes", "echoes_hidden", "clock", "cls", "facts_shown", "matrix", "per_worker")
    d = {k: v for k, v in asdict(f).items() if k not in drop}
    d["class"] = f.cls
    d["evidence"] = [_evidence_json(e) for e in f.evidence]
    d["echoes"] = [_evidence_json(e) for e in f.echoes]
    d["echoes_total"] = len(f.echoes) + f.echoes_hidden  # the list is cut; this is how many there were
    return d


def _worker_json(w: WorkerView) -> dict[str, Any]:
    drop = ("first_clock", "last_clock", "connected_clock")
    return {k: v for k, v in asdict(w).items() if k not in drop}


# --- building -------------------------------------------------------------------


class _Context:
    """Neighbouring records of an evidence record, from the events table."""

    def __init__(self, events: pa.Table, sources: set[str]) -> None:
        self._by_source: dict[str, tuple[list[int], list[str]]] = {}
        src = pc.cast(events["source"], pa.string())
        for s in sorted(sources):
            sub = events.filter(pc.equal(src, s)).select(["line", "text"])
            # In the file's order: a file of several workers' lines (docker compose
            # logs) holds each worker's records apart in the table.
            pairs = sorted(
                zip(sub["line"].to_pylist(), sub["text"].to_pylist(), strict=True), key=lambda p: p[0]
            )
            self._by_source[s] = ([p[0] for p in pairs], [p[1] for p in pairs])

    def around(self, ev: Evidence) -> list[ContextLine]:
        lines, texts = self._by_source.get(ev.source, ([], []))
        try:
            i = lines.index(ev.line)
        except ValueError:
            return []
        out = []
        for j in range(max(0, i - CONTEXT_BEFORE), min(len(lines), i + CONTEXT_AFTER + 1)):
            if j == i:
                continue
            first = texts[j].split("\n", 1)[0]
            out.append(ContextLine(lines[j], first[:300], False))
        return out


def _excerpt(ev: Evidence) -> list[tuple[int | None, str]]:
    lines = ev.text.split("\n")
    # Records keep one text line per file line, so numbers map one to one.
    one_to_one = len(lines) == ev.end_line - ev.line + 1
    numbered = [
        (ev.line + i if (one_to_one or i == 0) and ev.line else None, ln) for i, ln in enumerate(lines)
    ]
    if len(numbered) <= HEAD_LINES + TAIL_LINES + 1:
        return numbered
    cut = len(numbered) - HEAD_LINES - TAIL_LINES
    return [*numbered[:HEAD_LINES], (None, f"… {cut} lines …"), *numbered[-TAIL_LINES:]]


def _evidence_view(ev: Evidence, ctx: _Context | None) -> EvidenceView:
    return EvidenceView(
        worker=ev.worker,
        source=ev.source,
        line=ev.line,
        end_line=ev.end_line,
        ts=iso(ev.ts),
        clock=clock(ev.ts),
        role=ev.role,
        text=ev.text,
        excerpt=_excerpt(ev),
        context=ctx.around(ev) if ctx else [],
    )


def _finding_view(f: Finding, ctx: _Context) -> FindingView:
    echoes = sorted(f.echoes, key=lambda e: ts_key(e.ts))
    return FindingView(
        id=f.id,
        code=f.code,
        name=f.name,
        cls=f.cls,
        title=f.title,
        severity=f.severity,
        confidence=f.confidence,
        root_workers=f.root_workers,
        affected_workers=f.affected,
        first_ts=iso(f.first_ts),
        clock=clock(f.first_ts),
        summary=plain_names(f.summary),
        explanation=f.explanation,
        remedy=f.remedy,
        facts={k: v for k, v in sorted(f.facts.items())},
        facts_shown=[
            (k.replace("_", " "), _fact(k, v))
            for k, v in sorted(f.facts.items())
            if v not in (None, "", [], {}) and k != "matrix" and not _is_per_worker(v)
        ],
        per_worker=_per_worker(f.facts),
        matrix=_matrix(f.facts.get("matrix")),
        cascade_of=f.cascade_of,
        evidence=[_evidence_view(e, ctx) for e in f.evidence],
        echoes=[_evidence_view(e, None) for e in echoes[:MAX_ECHOES_SHOWN]],
        echoes_hidden=max(0, len(echoes) - MAX_ECHOES_SHOWN),
    )


def build_model(name: str, job: Job, analysis: Analysis, generated_at: dt.datetime) -> ReportModel:
    tables = job.tables
    sources = {e.source for f in analysis.findings for e in f.evidence}
    ctx = _Context(tables.events, sources)
    v = analysis.verdict
    root = analysis.root
    verdict = {
        "status": v.status,
        "class": v.cls,
        "class_title": v.title,
        "root_workers": v.root_workers,
        "confidence": v.confidence,
        "first_failure_ts": iso(v.first_failure_ts),
        "summary": plain_names(v.summary),
        "remedy": v.remedy,
        "finding": root.id if root else None,
        "missing": list(v.missing),
    }
    echo_workers = {e.worker for f in analysis.findings for e in f.echoes}
    worker_rows = tables.workers.to_pylist()
    workers = []
    for r in worker_rows:
        role = "root" if r["worker"] in v.root_workers else "echo" if r["worker"] in echo_workers else ""
        workers.append(
            WorkerView(
                worker=r["worker"],
                identity_from=r["identity_from"] or "",
                identity_note=r["identity_note"],
                has_log=r["has_log"],
                sources=r["sources"],
                host=r["host"],
                port=r["port"],
                pid=r["pid"],
                is_leader=bool(r["is_leader"]),
                first_ts=iso(r["first_ts"]),
                last_ts=iso(r["last_ts"]),
                first_clock=clock(r["first_ts"]),
                last_clock=clock(r["last_ts"]),
                connected_clock=clock(r["connected_ts"]),
                last_epoch=r["last_epoch"],
                epochs=r["epochs"],
                last_step=r["last_step"],
                last_progress_clock=clock(r["last_progress_ts"]),
                stuck_s=(r["last_ts"] - r["last_progress_ts"]).total_seconds()
                if r["last_ts"] and r["last_progress_ts"]
                else None,
                exit_code=r["exit_code"],
                exit_signal=r["exit_signal"],
                exit_note=r["exit_note"],
                tf_version=r["tf_version"],
                n_records=r["n_records"],
                n_errors=r["n_errors"],
                role_in_failure=role,
            )
        )
    inputs = [{"source": s, "worker": w.worker, "read_as": "worker log"} for w in workers for s in w.sources]
    inputs += [{"source": s, "worker": "", "read_as": what} for s, what in tables.other_inputs]
    inputs.sort(key=lambda d: d["source"])
    rules = []
    for st in analysis.rules:
        rules.append(
            {"code": st.code, "name": st.name, "class": st.cls, "status": st.status, "reason": st.reason}
        )
    return ReportModel(
        schema_version=REPORT_SCHEMA_VERSION,
        tool_version=__version__,
        generated_at=iso(generated_at) or "",
        job=name,
        verdict=verdict,
        findings=[_finding_view(f, ctx) for f in analysis.findings],
        unexplained=[_evidence_view(e, ctx) for e in analysis.unexplained],
        unrecognised=[
            {
                "template": t.text,
                "count": t.count,
                "workers": t.workers,
                "example": {"source": t.example.source, "line": t.example.line, "worker": t.example.worker},
            }
            for t in analysis.unrecognised
        ],
        workers=workers,
        timeline=_timeline(job, analysis, workers, worker_rows),
        inputs=inputs,
        skipped=[{"source": s, "reason": why} for s, why in sorted(tables.skipped)],
        rules=rules,
        alternatives=[
            {
                "class": a.cls,
                "class_title": CLASSES[a.cls],
                "confidence": a.confidence,
                "summary": plain_names(a.summary),
                "settle": a.settle,
                "evidence": [{"source": e.source, "line": e.line, "worker": e.worker} for e in a.evidence],
            }
            for a in analysis.alternatives
        ],
    )


# --- the timeline picture ---------------------------------------------------------

LANE_H = 34
TOP = 30
LEFT = 110
EPOCH_GAP_PX = 16  # an epoch mark's label ("E12") is about this wide
RIGHT = 130  # room for the exit label ("exit 137 SIGKILL")
WIDTH = 960


def _nice_step(span: float) -> float:
    raw = span / 8 if span > 0 else 1
    mag = 10 ** math.floor(math.log10(raw))
    return float(next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw))


def _timeline(
    job: Job, analysis: Analysis, workers: list[WorkerView], rows: list[dict[str, Any]]
) -> Timeline:
    stamps = [t for r in rows for t in (r["first_ts"], r["last_ts"]) if t is not None]
    t0 = min(stamps) if stamps else None
    span = (max(stamps) - t0).total_seconds() if stamps and t0 else 0.0
    span = max(span, 1.0)
    plot_w = WIDTH - LEFT - RIGHT

    def x(ts: dt.datetime | None) -> float | None:
        if ts is None or t0 is None:
            return None
        return float(round(LEFT + (ts - t0).total_seconds() / span * plot_w, 1))

    epochs: dict[str, list[tuple[dt.datetime, str]]] = {}
    ev = job.tables.events
    starts = ev.filter(pc.fill_null(pc.equal(pc.cast(ev["kind"], pa.string()), "keras.epoch"), False))
    starts = starts.filter(pc.is_valid(starts["ts"]))
    if starts.num_rows:
        numbers = pc.map_lookup(starts["fields"], "epoch", "first").to_pylist()
        for w, ts, n in zip(
            pc.cast(starts["worker"], pa.string()).to_pylist(), datetimes(starts["ts"]), numbers, strict=True
        ):
            if ts is not None:
                epochs.setdefault(w, []).append((ts, n or ""))
        for marks in epochs.values():
            marks.sort(key=lambda m: m[0])
    first_error: dict[str, Any] = {}
    for r in job.facts.errors:
        first_error.setdefault(r["worker"], r)
    root = analysis.root
    raw = {r["worker"]: r for r in rows}
    lanes = []
    for i, w in enumerate(workers):
        r = raw[w.worker]
        y = TOP + i * LANE_H + LANE_H / 2
        markers: list[Marker] = []
        if (px := x(r["first_ts"])) is not None:
            markers.append(
                Marker(px, "start", "", f"{worker_name(w.worker)}: first line at {clock(r['first_ts'])}")
            )
        if (px := x(r["connected_ts"])) is not None:
            markers.append(
                Marker(
                    px,
                    "connected",
                    "",
                    f"{worker_name(w.worker)}: joined the cluster at {clock(r['connected_ts'])}",
                )
            )
        kept = float(-EPOCH_GAP_PX)
        for ts, n in epochs.get(w.worker, []):
            # Epoch marks closer than their labels are wide would overlap: one
            # in so many is drawn (a job of 300 short epochs draws about 40).
            if (px := x(ts)) is None:
                continue
            mark = Marker(px, "epoch", f"E{n}", f"{worker_name(w.worker)}: epoch {n} began at {clock(ts)}")
            if px == kept and markers and markers[-1].kind == "epoch":
                markers[-1] = mark  # epochs that began at one moment (untimed lines): the latest is shown
            elif px - kept >= EPOCH_GAP_PX:
                kept = px
                markers.append(mark)
        if (fe := first_error.get(w.worker)) is not None and (px := x(fe["ts"])) is not None:
            first_line = fe["text"].split("\n", 1)[0][:160]
            markers.append(
                Marker(
                    px,
                    "error",
                    "",
                    f"{worker_name(w.worker)}: first error at {clock(fe['ts'])}: {first_line}",
                )
            )
        if root is not None and w.worker in root.root_workers and (px := x(root.first_ts)) is not None:
            markers.append(
                Marker(
                    px,
                    "root",
                    "",
                    f"{root.code} {root.name} on {worker_name(w.worker)} at {clock(root.first_ts)}",
                )
            )
        if (px := x(r["last_ts"])) is not None:
            label = f"exit {w.exit_text}" if w.exit_text != "unknown" else ""
            markers.append(
                Marker(px, "last", label, f"{worker_name(w.worker)}: last line at {clock(r['last_ts'])}")
            )
        note = "" if w.has_log else "no log from this worker"
        lanes.append(
            Lane(
                w.worker,
                y,
                x(r["first_ts"]),
                x(r["last_ts"]),
                markers,
                note,
                w.role_in_failure,
                _note_x(note, [m.x for m in markers]),
            )
        )
    step = _nice_step(span)
    ticks = [
        (round(LEFT + k * step / span * plot_w, 1), f"+{k * step:g}s") for k in range(int(span / step) + 1)
    ]
    return Timeline(
        width=WIDTH,
        height=TOP + len(lanes) * LANE_H + 10,
        left=LEFT,
        right=RIGHT,
        lanes=lanes,
        ticks=ticks,
        t0=iso(t0),
        span_s=round(span, 3),
        clock_note=clock_note(rows, job.tables.clock_basis),
    )


def _note_x(note: str, xs: list[float]) -> float:
    """Where a lane's note starts so that no marker sits on its words: after
    the markers, else before them, else at the lane's start."""
    width = 6.2 * len(note)  # the 11 px sans-serif of the timeline, about
    if not xs:
        return float(LEFT)
    gap = 14  # past a marker's radius (the root ring is the widest, 7 px)
    if max(xs) + gap + width <= WIDTH - 4:
        return round(max(xs) + gap, 1)
    if min(xs) - gap - width >= LEFT:
        return round(min(xs) - gap - width, 1)
    return float(LEFT)


def clock_note(rows: list[dict[str, Any]], basis: list[str]) -> str:
    """What the timeline's times are: corrected onto one worker's clock, checked, or as logged."""
    known = [r for r in rows if r.get("clock_offset_s") is not None]
    ref = next((r["worker"] for r in known if r["clock_offset_s"] == 0 and r.get("clock_bound_s") == 0), None)
    moved = [r for r in known if abs(r["clock_offset_s"]) >= 0.05]
    if moved and ref:
        parts = []
        for r in moved:
            bound = r.get("clock_bound_s")
            pm = f" (±{bound:.2f} s)" if bound is not None else ""
            parts.append(f"{r['worker']} {r['clock_offset_s']:+.2f} s{pm}")
        return (
            f"Times are on {ref}'s clock, corrected from events both sides logged ({' and '.join(basis)}): "
            + ", ".join(parts)
            + "."
        )
    if len(known) > 1:
        return (
            "Times as logged: the workers' clocks agree with the order of events both sides logged "
            f"({' and '.join(basis)}); no correction needed."
        )
    return "Times as each worker logged them: the logs hold no events both sides record, so clock skew could not be checked."

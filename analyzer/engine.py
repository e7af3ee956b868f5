"""The rule engine: run every rule, stamp its hits, rank root cause above echoes.

A rule says what it saw (a hit about a *subject* worker, with evidence); the
engine decides what it means for the job:

* a hit built only from other workers' reports (``local=False``: "task 1 is
  gone") is a *cascade* of a local finding about the same worker ("task 1 ran
  out of memory"): the local one explains it;
* the root cause is the earliest error finding that nothing else explains,
  local evidence first;
* every other worker's errors that came after the root cause are attached to
  it as echoes, so they are not read as more failures;
* errors that no rule explains make the verdict ``unknown``, never a forced
  known class.
"""

from __future__ import annotations

import datetime as dt
import importlib
import pkgutil
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Protocol, cast

import pyarrow as pa
import pyarrow.compute as pc

from .classes import CLASSES, CLUES, SETTLE
from .findings import Alternative, Analysis, Evidence, Finding, Hit, RuleStatus, Template, Verdict
from .query import PROGRESS_KINDS, error_records, evidence, finished_at, has_records, mask_message, records
from .tables import JobTables

__all__ = ["Analysis", "Evidence", "Finding", "Hit", "RuleStatus", "Verdict", "analyze", "load_rules"]

SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}
# An error on another worker this long *before* the root cause's first sign is
# still taken as its echo: log lines are flushed late and clocks drift a little.
ECHO_SLACK = dt.timedelta(seconds=2)


# --- rules -------------------------------------------------------------------


class Rule(Protocol):
    CODE: str
    NAME: str
    CLASS: str
    SEVERITY: str
    REQUIRES: tuple[str, ...]
    __doc__: str | None

    def check(self, tables: JobTables) -> Iterable[Hit]: ...


@dataclass(frozen=True)
class RuleDoc:
    title: str
    sections: dict[str, str]

    @property
    def meaning(self) -> str:
        return self.sections.get("What it means", "")

    @property
    def remedy(self) -> str:
        return self.sections.get("What to do", "")


def rule_doc(rule: Rule) -> RuleDoc:
    """A rule's docstring: a title line, then ``## What it means`` / ``## Why it
    happens`` / ``## What to do`` sections."""
    doc = (rule.__doc__ or "").strip()
    head, _, body = doc.partition("\n")
    title = head.split(":", 1)[1].strip() if ":" in head else head
    sections: dict[str, str] = {}
    for chunk in re.split(r"^## ", body, flags=re.M)[1:]:
        name, _, text = chunk.partition("\n")
        # Reflow: docstring line breaks are not the reader's; blank lines are.
        paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text.strip())]
        sections[name.strip()] = "\n\n".join(p for p in paragraphs if p)
    return RuleDoc(title, sections)


REQUIRED_SECTIONS = ("What it means", "Why it happens", "What to do")


def load_rules() -> list[Rule]:
    """Every rule module under ``mwms_doctor.rules``, sorted by code."""
    from . import rules as pkg  # the rules/ folder, installed as mwms_doctor.rules

    found: list[Rule] = []
    for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        module: ModuleType = importlib.import_module(info.name)
        if hasattr(module, "CODE") and hasattr(module, "check"):
            found.append(cast(Rule, module))
    found.sort(key=lambda r: r.CODE)
    codes = [r.CODE for r in found]
    if len(set(codes)) != len(codes):
        raise RuntimeError(f"duplicate rule codes: {codes}")
    for r in found:
        if r.CLASS not in CLASSES:
            raise RuntimeError(f"rule {r.CODE} has unknown class {r.CLASS!r}")
    return found


def rules_page(rules: list[Rule] | None = None) -> str:
    """The rules page of the docs (docs/rules.md), generated from the rules' docstrings."""
    rules = load_rules() if rules is None else rules
    out = [
        "# Rules",
        "",
        "Generated from the rules' docstrings by `mwms-doctor rules --format md`; "
        "`tests/test_docs.py` keeps this page current.",
        "",
        "| code | name | class | severity | reads |",
        "|---|---|---|---|---|",
    ]
    out += [
        f"| [{r.CODE}](#{r.CODE.lower()}) | {r.NAME} | `{r.CLASS}` | {r.SEVERITY} | {', '.join(r.REQUIRES)} |"
        for r in rules
    ]
    for r in rules:
        doc = rule_doc(r)
        out += ["", f"## {r.CODE}", "", f"**{r.NAME}**: {doc.title}", ""]
        for section in REQUIRED_SECTIONS:
            out += [f"### {section}", "", doc.sections.get(section, ""), ""]
    return "\n".join(out).rstrip() + "\n"


def find_rule(code: str) -> Rule | None:
    code = code.upper()
    return next((r for r in load_rules() if code == r.CODE or code.lower() == r.NAME), None)


# --- running and ranking ------------------------------------------------------


def analyze(tables: JobTables, rules: list[Rule] | None = None) -> Analysis:
    rules = load_rules() if rules is None else rules
    findings: list[Finding] = []
    generic: list[Finding] = []
    fallback: list[Finding] = []
    statuses: list[RuleStatus] = []
    for rule in rules:
        missing = [name for name in rule.REQUIRES if tables.get(name) is None]
        if missing:
            statuses.append(
                RuleStatus(
                    rule.CODE, rule.NAME, rule.CLASS, "not evaluated", f"no {', '.join(missing)} table"
                )
            )
            continue
        try:
            hits = list(rule.check(tables))
        except Exception as exc:  # noqa: BLE001 - one broken rule must not hide the others' findings
            statuses.append(
                RuleStatus(rule.CODE, rule.NAME, rule.CLASS, "crashed", f"{type(exc).__name__}: {exc}")
            )
            continue
        doc = rule_doc(rule)
        for hit in hits:
            bucket = fallback if getattr(rule, "FALLBACK", False) else findings
            (generic if getattr(rule, "GENERIC", False) else bucket).append(
                Finding(
                    code=rule.CODE,
                    name=rule.NAME,
                    cls=rule.CLASS,
                    title=doc.title,
                    severity=rule.SEVERITY,
                    confidence=round(hit.confidence, 2),
                    root_workers=[hit.subject, *hit.also],
                    first_ts=hit.ts,
                    summary=hit.summary,
                    evidence=hit.evidence,
                    explanation=doc.meaning,
                    remedy=doc.remedy,
                    facts=hit.facts,
                    local=hit.local,
                )
            )
        statuses.append(RuleStatus(rule.CODE, rule.NAME, rule.CLASS, "fired" if hits else "quiet"))
    # A generic finding (an uncaught exception) whose record a specific local
    # finding already explains (that exception is an OOM, a NaN check, a
    # TF_CONFIG error) is that finding, not a second one. Others' reports
    # that merely cite it (a handshake that waited for it) do not explain it.
    cited = {(ev.source, ev.line) for f in findings if f.local for ev in f.evidence}
    findings += [f for f in generic if not any((ev.source, ev.line) in cited for ev in f.evidence)]
    # A fallback (the job stopped progressing) stands only when nothing more
    # specific explains the failure.
    if not any(f.severity == "error" for f in findings):
        findings += fallback
    kept = {f.code for f in findings}
    statuses = [
        replace(st, status="quiet", reason="superseded: a more specific finding explains the same failure")
        if st.status == "fired" and st.code not in kept
        else st
        for st in statuses
    ]
    ordered = _rank(findings)
    _later_deaths_are_echoes(ordered, tables)
    ordered = _rank(ordered)
    unexplained = _attach_echoes(ordered, tables)
    # Errors a worker printed after it completed its training are shutdown
    # noise (a peer that exited first is gone): listed, not failing the job.
    finished = finished_at(tables)
    noise = [
        ev
        for ev in unexplained
        if ev.ts is not None and (done := finished.get(ev.worker)) is not None and ev.ts >= done
    ]
    failing = [ev for ev in unexplained if ev not in noise]
    unexplained = [
        replace(ev, role="after its training finished; it exited 0") if ev in noise else ev
        for ev in unexplained
    ]
    verdict = _verdict(ordered, failing, tables.workers, _recognised(tables))
    if verdict.status == "healthy" and (stalled := _stalled_at_start(tables)) is not None:
        verdict = _inconclusive(stalled)
    skipped = [s for s in statuses if s.status == "not evaluated"]
    if verdict.status != "failure" and skipped:
        # "No problem" is not "no data": say what could not be checked.
        checks = "; ".join(f"{s.code} {s.name} ({s.reason})" for s in skipped)
        verdict.summary += f" Not checked, for lack of data: {checks}."
    verdict.missing, factor = _partial_evidence(tables, verdict)
    verdict.confidence = round(verdict.confidence * factor, 2)
    return Analysis(
        verdict,
        ordered,
        statuses,
        unexplained,
        unrecognised_templates(tables),
        _alternatives(verdict, ordered, failing),
    )


# How much each gap in the evidence lowers a verdict's confidence.
PARTIAL = {
    "logs": 0.85,  # some task of the cluster left no log
    "times": 0.85,  # no time stamps: order is file order only
    "identity": 0.9,  # which worker wrote the text is unknown
    "exits": 0.95,  # no exit status for any worker
}


def _partial_evidence(tables: JobTables, verdict: Verdict) -> tuple[list[str], float]:
    """What this evidence lacks that a whole job's would have, and the factor
    it takes off the verdict's confidence."""
    rows = tables.workers.to_pylist()
    missing: list[str] = []
    factor = 1.0
    without = [r["worker"] for r in rows if not r["has_log"] and r["worker"] not in verdict.root_workers]
    if without:
        missing.append(f"no log from {', '.join(without)}")
        factor *= PARTIAL["logs"]
    ev = tables.events
    if ev.num_rows and pc.all(pc.is_null(ev["ts"])).as_py():
        missing.append("no time stamps (order is taken from the file)")
        factor *= PARTIAL["times"]
    named = [r for r in rows if r["has_log"] and not r["worker"].startswith("?")]
    if rows and not named:
        missing.append("no worker identity (no task name, TF_CONFIG or file name says who wrote the text)")
        factor *= PARTIAL["identity"]
    if verdict.status == "failure" and all(r["exit_code"] is None for r in rows):
        missing.append("no exit codes")
        factor *= PARTIAL["exits"]
    return missing, factor


MAX_ALTERNATIVES = 3


def _alternatives(
    verdict: Verdict, findings: list[Finding], unexplained: list[Evidence]
) -> list[Alternative]:
    """Other classes the evidence allows, most likely first: other findings'
    classes, and for an unknown verdict, guesses from the words of the errors
    no rule explained."""
    out: dict[str, Alternative] = {}
    for f in sorted(findings, key=lambda f: -f.confidence):
        # A cascade is explained by its cause: it is not another candidate.
        if f.cls == verdict.cls or f.cls in out or f.severity == "info" or f.cascade_of:
            continue
        out[f.cls] = Alternative(f.cls, f.confidence, f.summary, f.evidence[:2], SETTLE.get(f.cls, ""))
    if verdict.cls == "unknown":
        for cls, pattern in CLUES:
            hits = [e for e in unexplained if pattern.search(e.text)]
            if hits and cls not in out:
                out[cls] = Alternative(
                    cls,
                    round(min(0.3, 0.1 * len(hits)), 2),
                    f"{len(hits)} unexplained error(s) use words of this class: {hits[0].text.splitlines()[0][:120]}",
                    hits[:2],
                    SETTLE.get(cls, ""),
                )
    return sorted(out.values(), key=lambda a: -a.confidence)[:MAX_ALTERNATIVES]


TOP_TEMPLATES = 10


def unrecognised_templates(tables: JobTables) -> list[Template]:
    """The most frequent error messages no template recognises, over all workers."""
    groups: dict[str, list[Evidence]] = {}
    for row in error_records(tables):
        if row["kind"] is not None:
            continue
        groups.setdefault(mask_message(row["text"]), []).append(evidence(row, "unrecognised"))
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return [
        Template(text, len(evs), sorted({e.worker for e in evs}), evs[0])
        for text, evs in ranked[:TOP_TEMPLATES]
        if text
    ]


def _recognised(tables: JobTables) -> bool:
    """Whether anything in the evidence is known output of a TF job or script:
    a template, a log header (C++ origin or Python logger), or an error."""
    ev = tables.events
    if ev.num_rows == 0:
        return False
    known = pc.or_(pc.is_valid(ev["kind"]), pc.is_valid(ev["origin"]))
    known = pc.or_(known, pc.is_valid(ev["severity"]))
    return bool(pc.any(known).as_py())


# A Keras progress bar inside an epoch ("  10/150 [=>....] - ETA: ..." or
# "937/Unknown - 3s ..."): steps being done, though no template names it.
_IN_EPOCH_BAR = r"(?m)^\s*\d+/(?:\d+|Unknown)\s"


def _stalled_at_start(tables: JobTables) -> Evidence | None:
    """The start of an epoch when it is the last sign of training and nothing
    follows it: no step, no progress bar, no epoch end, no worker finished.
    Then "no failure found" is not "healthy": the text either was cut there or
    the job hung at its first step. None otherwise."""
    if finished_at(tables) or has_records(tables, [k for k in PROGRESS_KINDS if k != "keras.epoch"]):
        return None
    progress = records(tables, ["keras.epoch"])
    if not progress:
        return None
    ev = tables.events
    bars = pc.match_substring_regex(pc.cast(ev["text"], pa.string()), _IN_EPOCH_BAR)
    if pc.any(pc.fill_null(bars, False)).as_py():
        return None
    return evidence(progress[-1], "training started")


def _when(f: Finding) -> dt.datetime:
    return f.first_ts or dt.datetime.max.replace(tzinfo=dt.timezone.utc)


def _rank(findings: list[Finding]) -> list[Finding]:
    local = [f for f in findings if f.local]
    for f in findings:
        if f.local:
            continue
        for cause in sorted(local, key=_when):
            if SEVERITY_RANK[cause.severity] <= SEVERITY_RANK[f.severity] and set(f.root_workers) & set(
                cause.root_workers
            ):
                f.cascade_of = cause.id
                break

    # A finding without a time is not "the latest": it ranks with the earliest
    # timed one, and confidence decides between them.
    earliest = min((f.first_ts for f in findings if f.first_ts is not None), default=None)

    def key(f: Finding) -> tuple[int, int, int, dt.datetime, float]:
        return (
            f.cascade_of is not None,
            SEVERITY_RANK[f.severity],
            not f.local,
            f.first_ts or earliest or _when(f),
            -f.confidence,
        )

    return sorted(findings, key=key)


def _later_deaths_are_echoes(findings: list[Finding], tables: JobTables) -> None:
    """A finding built from others' reports about a worker that failed only
    after the root cause (the leader exits on the root's error, and then its
    peers report it gone) is a consequence of the root cause, not a second
    failure."""
    root = next((f for f in findings if f.severity == "error" and f.cascade_of is None), None)
    if root is None or root.first_ts is None:
        return
    for f in findings:
        if f is root or f.local or f.cascade_of is not None or f.code == root.code:
            continue
        if set(f.root_workers) & set(root.root_workers):
            continue
        firsts = [
            next((r["ts"] for r in error_records(tables, w) if r["ts"] is not None), None)
            for w in f.root_workers
        ]
        if firsts and all(t is not None and t >= root.first_ts - ECHO_SLACK for t in firsts):
            f.cascade_of = root.id


def _attach_echoes(findings: list[Finding], tables: JobTables) -> list[Evidence]:
    """Attach each worker's errors to the finding they echo; return the rest."""
    used = {(ev.source, ev.line) for f in findings for ev in f.evidence}
    errors = [evidence(r, "echo") for r in error_records(tables)]
    root = findings[0] if findings and findings[0].severity == "error" else None
    unexplained: list[Evidence] = []
    seen_workers: set[str] = set()
    for ev in errors:
        if (ev.source, ev.line) in used:
            continue
        if root is not None and (
            ev.ts is None or root.first_ts is None or ev.ts >= root.first_ts - ECHO_SLACK
        ):
            # Each other worker's first echo stands for the rest of its errors;
            # the root worker's own later errors are the failure going on, not echoes.
            if ev.worker not in root.root_workers and ev.worker not in {e.worker for e in root.echoes}:
                root.echoes.append(ev)
            continue
        if ev.worker not in seen_workers:
            seen_workers.add(ev.worker)
            unexplained.append(ev)
    return unexplained


def _verdict(
    findings: list[Finding], unexplained: list[Evidence], workers: pa.Table, recognised: bool = True
) -> Verdict:
    errors = [f for f in findings if f.severity == "error" and f.cascade_of is None]
    if errors:
        root = errors[0]
        roots = list(root.root_workers)
        for f in errors[1:]:  # the same failure on several workers at once
            if f.cls == root.cls and f.code == root.code:
                roots += [w for w in f.root_workers if w not in roots]
        return Verdict("failure", root.cls, roots, root.confidence, root.first_ts, root.summary, root.remedy)
    bad_exits = [
        r["worker"] for r in workers.to_pylist() if r["exit_code"] not in (None, 0) or r["exit_signal"]
    ]
    if unexplained or bad_exits:
        first = unexplained[0] if unexplained else None
        roots = [first.worker] if first else bad_exits[:1]
        what = (
            f"{first.worker} reported an error that no rule recognises"
            if first
            else f"{', '.join(bad_exits)} exited abnormally with no error in the logs"
        )
        return Verdict(
            "failure",
            "unknown",
            roots,
            0.3,
            first.ts if first else None,
            f"Unknown failure: {what}. Each worker's first error is listed below.",
            "Read each worker's first error below, earliest first; the earliest is most likely the cause.",
        )
    warnings = [f for f in findings if f.severity == "warning" and f.cascade_of is None]
    if warnings:
        w = warnings[0]
        return Verdict("warning", w.cls, list(w.root_workers), w.confidence, w.first_ts, w.summary, w.remedy)
    if not recognised:
        # "Healthy" needs evidence of a job: text with nothing TensorFlow or a
        # training script prints says nothing either way.
        return Verdict(
            "warning",
            "unknown",
            [],
            0.1,
            None,
            "Nothing in this evidence was recognised as the output of a TensorFlow job: no TensorFlow "
            "log line, no error, no training progress. It cannot say whether the job failed.",
            "Pass the workers' own output (each task's stdout and stderr), or paste the error and the "
            "lines before it.",
        )
    return Verdict("healthy", "healthy", [], 1.0, None, "No failure found.", "")


def _inconclusive(stalled: Evidence) -> Verdict:
    """What a job with no failure, whose training started and never made a
    step, is: not healthy, and not a failure the evidence shows."""
    line = stalled.text.split("\n", 1)[0].strip()[:80]
    return Verdict(
        "warning",
        "unknown",
        [],
        0.2,
        None,  # no failure, so no time of one: the epoch line is named in the summary
        f"Training started ({line}, {stalled.source}:{stalled.line}) but no step of it follows, and "
        "there is no error: the evidence ends there. Either it was cut there, or the job hung at its "
        "first step.",
        "If the job stopped there, it hung at its first step: in multi-GPU and multi-worker jobs that "
        "is usually a collective that never completes (NCCL peer-to-peer traffic blocked by the "
        "IOMMU or PCI ACS, a worker that cannot reach another's port, workers that disagree on the "
        "model). Get every worker's whole log, rerun with NCCL_DEBUG=INFO on GPUs, and check that each "
        "worker reaches the others' ports. If the job went on, pass the rest of its output.",
    )

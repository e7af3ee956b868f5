"""The rule engine: run every rule, apply the rules' declared precedence, and
rank root cause above echoes; ``verdict.py`` then says what it all means.

A rule says what it saw (a hit about a *subject* worker, with evidence); the
engine decides how the findings relate:

* precedence, as each rule declares it (``registry.PRECEDENCES``,
  ``DEFERS_TO``): a generic finding that a specific one already explains is
  that finding; a fallback stands only when no other error finding does; a
  rule's hits stand down when a rule it defers to fired;
* a hit built only from other workers' reports (``local=False``: "task 1 is
  gone") is a *cascade* of a local finding about the same worker ("task 1 ran
  out of memory"): the local one explains it;
* the root cause is the earliest error finding that nothing else explains,
  local evidence first;
* every other worker's errors that came after the root cause are attached to
  it as echoes, so they are not read as more failures;
* errors that no rule explains are listed (the verdict is then ``unknown``,
  never a forced known class).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace

from .classes import CLASSES, SETTLE
from .facts import Job
from .findings import Alternative, Evidence, Finding, Hit, RuleStatus, UnknownMessage
from .ingest import emitted
from .ingest.messages import clues, says
from .registry import Rule, load_rules, rule_doc
from .rows import evidence
from .text import mask_message
from .verdict import Case, Verdict, decide, split_noise

SEVERITY_RANK = {"error": 0, "warning": 1, "info": 2}
# An error on another worker this long *before* the root cause's first sign is
# still taken as its echo: log lines are flushed late and clocks drift a little.
ECHO_SLACK = dt.timedelta(seconds=2)
SUPERSEDED = "superseded: a more specific finding explains the same failure"


@dataclass
class Analysis:
    verdict: Verdict
    findings: list[Finding]  # root cause first, then other findings; cascades last
    rules: list[RuleStatus]
    unexplained: list[Evidence]  # errors no finding explains (first per worker)
    unrecognised: list[UnknownMessage] = field(default_factory=list)  # most frequent unknown error messages
    alternatives: list[Alternative] = field(default_factory=list)  # other classes, most likely first

    @property
    def root(self) -> Finding | None:
        return self.findings[0] if self.findings and self.verdict.cls not in ("healthy", "unknown") else None


def run_rules(job: Job, rules: list[Rule] | None = None) -> Analysis:
    """Every rule over one job, their findings ranked, and the verdict."""
    rules = load_rules() if rules is None else rules
    statuses, fired = _run(job, rules)
    findings, superseded = _apply_precedence(rules, fired)
    statuses = [
        replace(st, status="quiet", reason=superseded[st.code]) if st.code in superseded else st
        for st in statuses
    ]
    ordered = _rank(findings)
    _later_deaths_are_echoes(ordered, job)
    ordered = _rank(ordered)
    unexplained = _attach_echoes(ordered, job)
    failing, unexplained = split_noise(unexplained, job.facts)
    verdict = decide(Case(ordered, failing, job.facts, statuses))
    return Analysis(
        verdict,
        ordered,
        statuses,
        unexplained,
        unrecognised_messages(job),
        _alternatives(verdict, ordered, failing),
    )


def _run(job: Job, rules: list[Rule]) -> tuple[list[RuleStatus], dict[str, list[Finding]]]:
    """Each rule's status, and the findings of those that fired, by code."""
    statuses: list[RuleStatus] = []
    fired: dict[str, list[Finding]] = {}
    for rule in rules:
        missing = [name for name in rule.REQUIRES if job.tables.get(name) is None]
        if missing:
            statuses.append(
                RuleStatus(
                    rule.CODE, rule.NAME, rule.CLASS, "not evaluated", f"no {', '.join(missing)} table"
                )
            )
            continue
        try:
            hits = list(rule.check(job))
        except Exception as exc:  # noqa: BLE001 - one broken rule must not hide the others' findings
            statuses.append(
                RuleStatus(rule.CODE, rule.NAME, rule.CLASS, "crashed", f"{type(exc).__name__}: {exc}")
            )
            continue
        if hits:
            fired[rule.CODE] = [_finding(rule, hit) for hit in hits]
        statuses.append(RuleStatus(rule.CODE, rule.NAME, rule.CLASS, "fired" if hits else "quiet"))
    return statuses, fired


def _finding(rule: Rule, hit: Hit) -> Finding:
    doc = rule_doc(rule)
    return Finding(
        code=rule.CODE,
        name=rule.NAME,
        cls=hit.cls if hit.cls in CLASSES else rule.CLASS,
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
        proof=hit.proof,
    )


def _apply_precedence(
    rules: list[Rule], fired: dict[str, list[Finding]]
) -> tuple[list[Finding], dict[str, str]]:
    """The findings that stand (specific ones in rule order, then generic, then
    fallback: the order ranking keeps among equals), and why the others'
    rules stood down (by code)."""
    by_code = {r.CODE: r for r in rules}
    superseded: dict[str, str] = {}
    for code in fired:
        if deferred := [c for c in by_code[code].DEFERS_TO if c in fired]:
            superseded[code] = f"superseded: {', '.join(deferred)} explains what it saw"

    def standing(precedence: str) -> list[Finding]:
        return [
            f
            for r in rules
            if precedence == r.PRECEDENCE and r.CODE not in superseded
            for f in fired.get(r.CODE, [])
        ]

    findings = standing("specific")
    # A generic finding (an uncaught exception) whose record a specific local
    # finding already explains (that exception is an OOM, a NaN check, a
    # TF_CONFIG error) is that finding, not a second one. Others' reports
    # that merely cite it (a handshake that waited for it) do not explain it.
    cited = {(ev.source, ev.line) for f in findings if f.local for ev in f.evidence}
    findings += [
        f for f in standing("generic") if not any((ev.source, ev.line) in cited for ev in f.evidence)
    ]
    # A fallback (the job stopped progressing) stands only when nothing more
    # specific explains the failure.
    if not any(f.severity == "error" for f in findings):
        findings += standing("fallback")
    kept = {f.code for f in findings}
    for code in fired:
        if code not in kept:
            superseded.setdefault(code, SUPERSEDED)
    return findings, superseded


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
        # An error printed from an emitter's format string whose meaning is a
        # class: its source says what it is.
        for e in unexplained:
            said = emitted.lookup(e.text)
            if said is None or said.meaning not in CLASSES or said.meaning in out:
                continue
            out[said.meaning] = Alternative(
                said.meaning,
                0.4,
                f"{e.worker} printed {said.emitter}'s own message ({said.where}), which points at this class: "
                f"{e.text.splitlines()[0][:120]}",
                [e],
                SETTLE.get(said.meaning, ""),
            )
        for cls, pattern in clues():
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


TOP_MESSAGES = 10


def unrecognised_messages(job: Job) -> list[UnknownMessage]:
    """The most frequent error messages no template recognises, over all workers."""
    groups: dict[str, list[Evidence]] = {}
    for row in job.facts.errors:
        if row["kind"] is not None:
            continue
        groups.setdefault(mask_message(row["text"]), []).append(evidence(row, "unrecognised"))
    ranked = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return [
        UnknownMessage(text, len(evs), sorted({e.worker for e in evs}), evs[0])
        for text, evs in ranked[:TOP_MESSAGES]
        if text
    ]


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


def _later_deaths_are_echoes(findings: list[Finding], job: Job) -> None:
    """A finding built from others' reports about a worker that failed only
    after the root cause (the leader exits on the root's error, and then its
    peers report it gone) is a consequence of the root cause, not a second
    failure."""
    root = next((f for f in findings if f.severity == "error" and f.cascade_of is None), None)
    if root is None or root.first_ts is None:
        return
    for f in findings:
        if f is root or f.cascade_of is not None or set(f.root_workers) & set(root.root_workers):
            continue
        first_errors = [
            next((r for r in job.rows.errors(w) if r["ts"] is not None), None) for w in f.root_workers
        ]
        later = bool(first_errors) and all(
            r is not None and r["ts"] >= root.first_ts - ECHO_SLACK for r in first_errors
        )
        if not later:
            continue
        # Built from others' reports (another rule's), or a worker whose own
        # first error only says it lost a peer: it went down with the root cause.
        lost = all(r is not None and says(r["text"], "peer_lost") for r in first_errors)
        if (not f.local and f.code != root.code) or lost:
            f.cascade_of = root.id


def _attach_echoes(findings: list[Finding], job: Job) -> list[Evidence]:
    """Attach each worker's errors to the finding they echo; return the rest."""
    used = {(ev.source, ev.line) for f in findings for ev in f.evidence}
    errors = [evidence(r, "echo") for r in job.facts.errors]
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

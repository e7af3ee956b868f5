"""What rules and the engine produce: evidence, hits, findings.

Shared by the rules (which yield ``Hit``), the engine (which turns hits into
ranked ``Finding``s), the verdict policy and the report's view model.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

_EPOCH = dt.datetime.min.replace(tzinfo=dt.timezone.utc)


def ts_key(ts: dt.datetime | None) -> tuple[bool, dt.datetime]:
    """Sort key for optional times: timed first, in order; untimed last."""
    return (ts is None, ts or _EPOCH)


@dataclass(frozen=True)
class Evidence:
    worker: str
    source: str
    line: int
    end_line: int
    ts: dt.datetime | None
    text: str
    role: str = ""  # what this line shows: "cause", "last words", "peer report" ...


@dataclass
class Hit:
    """What a rule yields: one observed failure about one worker."""

    subject: str
    summary: str
    evidence: list[Evidence]
    confidence: float
    ts: dt.datetime | None
    local: bool = True  # the evidence is the subject's own log
    also: list[str] = field(default_factory=list)  # more root workers (several missing tasks)
    facts: dict[str, Any] = field(default_factory=dict)
    # What shows that something failed: "error" (an error record), "stall" (a
    # measured stretch without progress while the log or a peer went on),
    # "stacks" (thread dumps taken while it hung: one worker's main thread in
    # its own code or input, every other's in TensorFlow's step), or
    # "" when the evidence simply ends (the verdict policy then needs a kill
    # or a bad exit to call it a failure).
    proof: str = "error"
    # The class the evidence itself names, for a rule whose findings take the
    # class their message's source gives (EM001); None: the rule's CLASS.
    cls: str | None = None


@dataclass
class Finding:
    code: str
    name: str
    cls: str
    title: str
    severity: str
    confidence: float
    root_workers: list[str]
    first_ts: dt.datetime | None
    summary: str
    evidence: list[Evidence]
    explanation: str
    remedy: str
    facts: dict[str, Any]
    local: bool
    cascade_of: str | None = None
    echoes: list[Evidence] = field(default_factory=list)
    proof: str = "error"  # as the hit said (Hit.proof)

    @property
    def id(self) -> str:
        return f"{self.code}@{','.join(self.root_workers)}"

    @property
    def affected(self) -> list[str]:
        seen = dict.fromkeys(self.root_workers)
        for ev in [*self.evidence, *self.echoes]:
            seen.setdefault(ev.worker, None)
        return list(seen)


@dataclass(frozen=True)
class RuleStatus:
    code: str
    name: str
    cls: str
    status: str  # fired | quiet | not evaluated | crashed (the reason says why)
    reason: str = ""


@dataclass(frozen=True)
class Alternative:
    """Another class the evidence allows, ranked after the verdict."""

    cls: str
    confidence: float
    summary: str
    evidence: list[Evidence]
    settle: str  # the evidence that would decide between it and the verdict


@dataclass(frozen=True)
class UnknownMessage:
    """An error message no rule knows, with its numbers, addresses and paths
    masked, counted over the job: what to read first when the verdict is unknown."""

    text: str
    count: int
    workers: list[str]
    example: Evidence

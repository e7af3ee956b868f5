"""The rules: what a rule module declares, where rules are found, and the
rules page of the docs, generated from the rules themselves.

A rule is a module under ``rules/`` (installed as ``mwms_doctor.rules``) that
declares:

* ``CODE`` (``PD001``), ``NAME`` (the failure observed: ``peer-died``),
  ``CLASS`` (a verdict class of ``classes.py``), ``SEVERITY`` (error, warning, info);
* ``REQUIRES``: the tables it reads (without one, the rule is "not
  evaluated", never silently passed);
* ``PRECEDENCE``: how its hits stand beside other rules' (see ``PRECEDENCES``);
* ``DEFERS_TO``: the codes of rules that, when they fire, explain what this
  rule saw better (its hits then stand down);
* ``check(job) -> Iterable[Hit]``: what it saw, with evidence;
* its docstring: a title line, then ``## What it means``, ``## Why it
  happens`` and ``## What to do``.

Rules report what they saw; the engine decides which finding is the root
cause, and ``verdict.py`` what that means for the job.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Protocol, cast

from .classes import CLASSES

if TYPE_CHECKING:
    from .facts import Job
    from .findings import Hit

# How a rule's hits stand beside the other rules' (the engine applies these).
PRECEDENCES: dict[str, str] = {
    "specific": "its hits stand on their own",
    "generic": (
        "a hit whose evidence a specific rule's local finding already cites is that finding, "
        "not a second one (an uncaught exception that is an OOM)"
    ),
    "fallback": "its hits stand only when no other error finding does (what is left once the causes are ruled out)",
}


class Rule(Protocol):
    CODE: str
    NAME: str
    CLASS: str
    SEVERITY: str
    REQUIRES: tuple[str, ...]
    PRECEDENCE: str
    DEFERS_TO: tuple[str, ...]
    __doc__: str | None

    def check(self, job: Job) -> Iterable[Hit]: ...


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


REQUIRED_SECTIONS = ("What it means", "Why it happens", "What to do")
_DECLARED = ("CODE", "NAME", "CLASS", "SEVERITY", "REQUIRES", "PRECEDENCE", "DEFERS_TO", "check")


def _class_cell(rule: Rule) -> str:
    # A rule declared ``unknown`` takes each finding's class from its evidence (Hit.cls).
    return "each finding's own (from its message's source)" if rule.CLASS == "unknown" else f"`{rule.CLASS}`"


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


def load_rules() -> list[Rule]:
    """Every rule module under ``mwms_doctor.rules``, sorted by code; each
    checked for what a rule must declare."""
    from . import rules as pkg  # the rules/ folder, installed as mwms_doctor.rules

    found: list[Rule] = []
    for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
        module: ModuleType = importlib.import_module(info.name)
        if hasattr(module, "CODE") and hasattr(module, "check"):
            missing = [name for name in _DECLARED if not hasattr(module, name)]
            if missing:
                raise RuntimeError(f"rule module {info.name} does not declare {', '.join(missing)}")
            found.append(cast(Rule, module))
    found.sort(key=lambda r: r.CODE)
    codes = [r.CODE for r in found]
    if len(set(codes)) != len(codes):
        raise RuntimeError(f"duplicate rule codes: {codes}")
    for r in found:
        if r.CLASS not in CLASSES:
            raise RuntimeError(f"rule {r.CODE} has unknown class {r.CLASS!r}")
        if r.PRECEDENCE not in PRECEDENCES:
            raise RuntimeError(f"rule {r.CODE} has unknown precedence {r.PRECEDENCE!r}")
        if unknown := [c for c in r.DEFERS_TO if c not in codes]:
            raise RuntimeError(f"rule {r.CODE} defers to unknown rules {unknown}")
    return found


def find_rule(code: str) -> Rule | None:
    code = code.upper()
    return next((r for r in load_rules() if code == r.CODE or code.lower() == r.NAME), None)


def rules_page(rules: list[Rule] | None = None) -> str:
    """The rules page of the docs (docs/rules.md), generated from the rules' docstrings."""
    rules = load_rules() if rules is None else rules
    out = [
        "# Rules",
        "",
        "Generated from the rules' docstrings by `mwms-doctor rules --format md`; "
        "`tests/test_docs.py` keeps this page current.",
        "",
        "| code | name | class | severity | reads | precedence | defers to |",
        "|---|---|---|---|---|---|---|",
    ]
    out += [
        f"| [{r.CODE}](#{r.CODE.lower()}) | {r.NAME} | {_class_cell(r)} | {r.SEVERITY} | {', '.join(r.REQUIRES)} "
        f"| {r.PRECEDENCE} | {', '.join(r.DEFERS_TO)} |"
        for r in rules
    ]
    out += ["", "Precedence, as the engine applies it:", ""]
    out += [f"- **{name}**: {what}." for name, what in PRECEDENCES.items()]
    out += ["- **defers to**: its hits stand down when a rule it defers to fires in the same job."]
    for r in rules:
        doc = rule_doc(r)
        out += ["", f"## {r.CODE}", "", f"**{r.NAME}**: {doc.title}", ""]
        for section in REQUIRED_SECTIONS:
            out += [f"### {section}", "", doc.sections.get(section, ""), ""]
    return "\n".join(out).rstrip() + "\n"

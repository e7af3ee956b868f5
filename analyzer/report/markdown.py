"""A Markdown summary short enough to paste into an incident ticket."""

from __future__ import annotations

import re

from .viewmodel import EvidenceView, ReportModel, who

MAX_EVIDENCE = 3
MAX_EVIDENCE_LINES = 4


def _fence(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return fence


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]|\x1b\[[0-?]*[ -/]*[@-~]")
# What can start formatting, a link, an HTML tag or a table cell in GitHub's
# Markdown; a heading's # only counts at the start of a line.
_SPECIAL = re.compile(r"([\\`*_\[\]<>|~]|^#)")


def _plain(text: str) -> str:
    """Log text without escape sequences or control characters."""
    return _CONTROL.sub("", text)


def _text(text: str) -> str:
    """Text that may hold anything a log printed, shown as itself: Markdown's
    special characters escaped, one line."""
    return _SPECIAL.sub(r"\\\1", _plain(text).replace("\n", " "))


def _code(text: str) -> str:
    """An inline code span that holds ``text`` whatever backticks it has."""
    text = _plain(text).replace("\n", " ").replace("|", "\\|")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or longest else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _cell(text: str) -> str:
    return _text(text)


def _evidence(e: EvidenceView) -> list[str]:
    lines = [text for _, text in e.excerpt if text.strip()]
    if len(lines) > MAX_EVIDENCE_LINES:  # the head names the error, the tail says how it ended
        lines = [*lines[:2], "…", *lines[-(MAX_EVIDENCE_LINES - 2) :]]
    body = "\n".join(_plain(line)[:200] for line in lines)
    f = _fence(body)
    role = f" ({e.role})" if e.role else ""
    return [f"{_code(e.location)}{_text(role)}, {_text(e.worker)}, {e.clock}", f, body, f]


def render_markdown(model: ReportModel) -> str:
    v = model.verdict
    out = [f"## mwms-doctor: {_code(model.job)}", ""]
    roots = _text(who(v["root_workers"])) if v["root_workers"] else "none"
    out.append(
        f"**Verdict:** {v['status']}: {v['class_title']} · **class:** `{v['class']}` · **root worker:** {roots} · "
        f"**confidence:** {v['confidence']:.0%}"
        + (f" · **first failure:** {v['first_failure_ts']}" if v["first_failure_ts"] else "")
    )
    out += ["", _text(v["summary"]), ""]
    # How sure, in one paragraph: what the evidence lacked, and what else it allows.
    sure = []
    if v.get("missing"):
        sure.append(f"**Partial evidence** (confidence lowered): {_text('; '.join(v['missing']))}.")
    if model.alternatives:
        alts = "; ".join(
            f"{_code(a['class'])} {a['confidence']:.0%} (settle: {_text(a['settle'])})"
            for a in model.alternatives[:2]
        )
        sure.append(f"**Other possible causes:** {alts}.")
    if sure:
        out += [" ".join(sure), ""]
    if v["remedy"]:
        # The rules' own words, with their `code` marks: not log text.
        out += ["**What to do:** " + _plain(" ".join(v["remedy"].split())), ""]
    root = model.findings[0] if model.findings and v["finding"] else None
    if root is not None:
        out.append(f"**Evidence** ({root.code} {root.name}):")
        out.append("")
        for e in root.evidence[:MAX_EVIDENCE]:
            out += _evidence(e)
        if root.echoes:
            echoes = ", ".join(f"{_text(e.worker)} ({_code(e.location)})" for e in root.echoes)
            more = f" (and {root.echoes_hidden} more)" if root.echoes_hidden else ""
            out += ["", f"Errors on {echoes}{more} are echoes of this failure."]
        out.append("")
    elif model.unexplained:
        out += ["**First error on each worker:**", ""]
        for e in model.unexplained[:MAX_EVIDENCE]:
            out += _evidence(e)
        out.append("")
        if model.unrecognised:
            out += [
                "**Most frequent unrecognised errors:**",
                "",
                "| count | workers | message |",
                "|---|---|---|",
            ]
            out += [
                f"| {t['count']} | {_cell(', '.join(t['workers']))} | {_code(t['template'])} |"
                for t in model.unrecognised[:5]
            ]
            out.append("")
    if root is not None and root.matrix:
        peers, rows = root.matrix
        out += ["**Who could not reach whom** (row connected to column):", ""]
        out += ["| | " + " | ".join(_cell(p) for p in peers) + " |", "|---" * (len(peers) + 1) + "|"]
        out += [f"| {_cell(obs)} | " + " | ".join(_cell(c) for c in cells) + " |" for obs, cells in rows]
        out.append("")
    if root is not None and root.per_worker:
        workers, rows2 = root.per_worker
        out += ["**By worker** (a value fewer workers have than another is in bold):", ""]
        out += ["| | " + " | ".join(_cell(w) for w in workers) + " |", "|---" * (len(workers) + 1) + "|"]
        out += [
            f"| {_cell(name)} | "
            + " | ".join(f"**{_cell(v)}**" if odd else _cell(v) for v, odd in cells)
            + " |"
            for name, cells in rows2
        ]
        out.append("")
    others = [f for f in model.findings[1:] if f.cascade_of is None]
    if others:
        out.append(
            "**Also found:** "
            + "; ".join(f"{f.code} {f.name} on {_text(who(f.root_workers))}" for f in others)
        )
        out.append("")
    out += ["| worker | last line | epoch | exit | errors |", "|---|---|---|---|---|"]
    for w in model.workers:
        last = w.last_clock if w.has_log else "no log"
        out.append(
            f"| {_cell(w.worker)} | {last} | {w.last_epoch if w.last_epoch is not None else '—'} | "
            f"{_cell(w.exit_text)} | {w.n_errors} |"
        )
    if model.skipped:
        out += [
            "",
            f"Not read: {len(model.skipped)} file(s): "
            + ", ".join(_code(s["source"]) for s in model.skipped[:5]),
        ]
    out += ["", f"<sub>mwms-doctor {model.tool_version}, report schema {model.schema_version}</sub>", ""]
    return "\n".join(out)

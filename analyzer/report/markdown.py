"""A Markdown summary short enough to paste into an incident ticket."""

from __future__ import annotations

from .viewmodel import EvidenceView, ReportModel

MAX_EVIDENCE = 3
MAX_EVIDENCE_LINES = 4


def _fence(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return fence


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _evidence(e: EvidenceView) -> list[str]:
    lines = [text for _, text in e.excerpt if text.strip()]
    if len(lines) > MAX_EVIDENCE_LINES:  # the head names the error, the tail says how it ended
        lines = [*lines[:2], "…", *lines[-(MAX_EVIDENCE_LINES - 2) :]]
    body = "\n".join(line[:200] for line in lines)
    f = _fence(body)
    role = f" ({e.role})" if e.role else ""
    return [f"`{e.location}`{role}, {e.worker}, {e.clock}", f, body, f]


def render_markdown(model: ReportModel) -> str:
    v = model.verdict
    out = [f"## mwms-doctor: `{model.job}`", ""]
    roots = ", ".join(v["root_workers"]) or "none"
    out.append(
        f"**Verdict:** {v['status']}: {v['class_title']} · **class:** `{v['class']}` · **root worker:** {roots} · "
        f"**confidence:** {v['confidence']:.0%}"
        + (f" · **first failure:** {v['first_failure_ts']}" if v["first_failure_ts"] else "")
    )
    out += ["", v["summary"], ""]
    # How sure, in one paragraph: what the evidence lacked, and what else it allows.
    sure = []
    if v.get("missing"):
        sure.append(f"**Partial evidence** (confidence lowered): {'; '.join(v['missing'])}.")
    if model.alternatives:
        alts = "; ".join(
            f"`{a['class']}` {a['confidence']:.0%} (settle: {a['settle']})" for a in model.alternatives[:2]
        )
        sure.append(f"**Other possible causes:** {_cell(alts)}.")
    if sure:
        out += [" ".join(sure), ""]
    if v["remedy"]:
        out += ["**What to do:** " + " ".join(v["remedy"].split()), ""]
    root = model.findings[0] if model.findings and v["finding"] else None
    if root is not None:
        out.append(f"**Evidence** ({root.code} {root.name}):")
        out.append("")
        for e in root.evidence[:MAX_EVIDENCE]:
            out += _evidence(e)
        if root.echoes:
            echoes = ", ".join(f"{e.worker} (`{e.location}`)" for e in root.echoes)
            out += ["", f"Errors on {echoes} are echoes of this failure."]
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
                f"| {t['count']} | {_cell(', '.join(t['workers']))} | `{_cell(t['template'])}` |"
                for t in model.unrecognised[:5]
            ]
            out.append("")
    if root is not None and root.matrix:
        peers, rows = root.matrix
        out += ["**Who could not reach whom** (row connected to column):", ""]
        out += ["| | " + " | ".join(peers) + " |", "|---" * (len(peers) + 1) + "|"]
        out += [f"| {obs} | " + " | ".join(cells) + " |" for obs, cells in rows]
        out.append("")
    others = [f for f in model.findings[1:] if f.cascade_of is None]
    if others:
        out.append(
            "**Also found:** "
            + "; ".join(f"{f.code} {f.name} on {', '.join(f.root_workers)}" for f in others)
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
            + ", ".join(f"`{s['source']}`" for s in model.skipped[:5]),
        ]
    out += ["", f"<sub>mwms-doctor {model.tool_version}, report schema {model.schema_version}</sub>", ""]
    return "\n".join(out)

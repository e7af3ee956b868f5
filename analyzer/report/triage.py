"""The triage's index page: every job of the night, grouped by recurring cause."""

from __future__ import annotations

import datetime as dt
from typing import Any

from markupsafe import Markup

from .html import environment


def render_index(
    rows: list[dict[str, Any]],
    groups: list[dict[str, Any]],
    with_since: bool,
    interrupted: bool,
    schema_version: int = 2,
    earlier: int = 0,
    night: str = "",
) -> str:
    from collections import Counter

    counts = Counter(r["class"] if r["status"] not in ("healthy", "error") else r["status"] for r in rows)
    statuses = Counter(r["status"] for r in rows)
    status_of_class: dict[str, str] = {}
    for r in rows:
        # A class counts as a failure if any of its jobs failed, else as a warning.
        if r["status"] not in ("healthy", "error") and status_of_class.get(r["class"]) != "failure":
            status_of_class[r["class"]] = r["status"]
    for g in groups:
        g["trend_svg"] = trend_svg(g.get("trend") or [])
        # The one-line why: what the verdict says, without what it could not check.
        g["summary"] = str(g.get("summary") or "").split(" Not checked, for lack of data:")[0]
        g["examples"] = [j["report"] for j in g["jobs"] if j.get("report")][:2]
    by_cluster = {g["cluster"]: g for g in groups}
    ordered = sorted(
        rows,
        key=lambda r: (
            -len(by_cluster[r["cluster"]]["jobs"]) if r["cluster"] in by_cluster else 0,
            r["cluster"],
            r["job"],
        ),
    )
    from .. import __version__

    return str(
        environment()
        .get_template("triage.html.j2")
        .render(
            rows=ordered,
            groups=groups,
            counts=sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])),
            status_of_class=status_of_class,
            statuses=[(s, statuses.get(s, 0)) for s in ("failure", "warning", "healthy", "error")],
            total=len(rows),
            with_since=with_since,
            interrupted=interrupted,
            version=__version__,
            schema_version=schema_version,
            earlier=earlier,
            night=night,
            generated=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        )
    )


def trend_svg(counts: list[int]) -> Markup:
    """Jobs per night as small bars (oldest left, this night right), drawn
    inline: the page runs no script."""
    if len(counts) < 2:
        return Markup("")
    top = max(max(counts), 1)
    w, h, gap = 6, 18, 2
    rects = []
    for i, n in enumerate(counts):
        height = max(1, round(h * n / top))  # a night without jobs is a 1 px line
        colour = "#c62828" if i == len(counts) - 1 else ("#8a94a6" if n else "#d9dee7")
        rects.append(
            f'<rect x="{i * (w + gap)}" y="{h - height}" width="{w}" height="{height}" fill="{colour}"/>'
        )
    bars = "".join(rects)
    title = "jobs per night, oldest first: " + ", ".join(str(n) for n in counts)
    return Markup(
        f'<svg width="{len(counts) * (w + gap)}" height="{h}" role="img" aria-label="{title}"><title>{title}</title>{bars}</svg>'
    )

"""The triage's index page: every job of the night, grouped by recurring cause."""

from __future__ import annotations

import datetime as dt
from typing import Any

from .html import environment


def render_index(
    rows: list[dict[str, Any]], groups: list[dict[str, Any]], with_since: bool, interrupted: bool
) -> str:
    from collections import Counter

    counts = Counter(r["class"] if r["status"] not in ("healthy", "error") else r["status"] for r in rows)
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
            total=len(rows),
            with_since=with_since,
            interrupted=interrupted,
            version=__version__,
            generated=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        )
    )

"""What recurs: a failure's signature, the clusters of jobs that share one,
and, against a previous triage (``since``), what is new, recurring or gone."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def signature(cls: str, root_workers: list[str], first_error: str) -> str:
    from ..text import mask_message

    role = root_workers[0].split(":", 1)[0] if root_workers else "-"
    return f"{cls} | {role} | {mask_message(first_error)[:160]}"


def cluster_id(sig: str) -> str:
    return hashlib.sha256(sig.encode("utf-8", "surrogateescape")).hexdigest()[:10]


def _previous(since: Path | None) -> dict[str, dict[str, Any]]:
    """The previous triage's clusters: cluster id -> its first row."""
    if since is None:
        return {}
    path = since / "triage.jsonl" if since.is_dir() else since
    prev: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("cluster"):
            prev.setdefault(row["cluster"], row)
    return prev


def mark_recurrence(rows: list[dict[str, Any]], since: Path | None) -> None:
    """New or recurring (with ``since``), and since when each signature fails:
    the earliest time of this run, or of the previous triages it carries."""
    prev = _previous(since)
    earliest: dict[str, str] = {}
    for r in rows:
        ts = r["first_failure_ts"]
        if r["cluster"] and ts and (r["cluster"] not in earliest or ts < earliest[r["cluster"]]):
            earliest[r["cluster"]] = ts
    for r in rows:
        if not r["cluster"] or r["status"] in ("healthy", "error"):
            continue
        before = prev.get(r["cluster"], {})
        seen = [
            t
            for t in (
                earliest.get(r["cluster"], ""),
                before.get("first_seen") or before.get("first_failure_ts"),
            )
            if t
        ]
        r["first_seen"] = min(seen) if seen else ""
        if since is not None:
            r["recurrence"] = "recurring" if before else "new"


def clusters(rows: list[dict[str, Any]], since: Path | None = None) -> list[dict[str, Any]]:
    """Jobs grouped by signature, biggest first; with ``since``, the clusters
    of the previous triage that are gone are listed last."""
    groups: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r["status"] in ("healthy", "error") or not r["cluster"]:
            continue
        g = groups.setdefault(
            r["cluster"],
            {
                "cluster": r["cluster"],
                "signature": r["signature"],
                "class": r["class"],
                "jobs": [],
                "first_seen": "",
                "recurrence": r["recurrence"],
            },
        )
        g["jobs"].append(r)
        ts = r["first_seen"] or r["first_failure_ts"]
        if ts and (not g["first_seen"] or ts < g["first_seen"]):
            g["first_seen"] = ts
    out = sorted(groups.values(), key=lambda g: (-len(g["jobs"]), g["signature"]))
    if since is not None:
        now = set(groups)
        for cid, row in _previous(since).items():
            if cid not in now and row.get("status") not in ("healthy", "error"):
                out.append(
                    {
                        "cluster": cid,
                        "signature": row["signature"],
                        "class": row["class"],
                        "jobs": [],
                        "first_seen": row.get("first_failure_ts", ""),
                        "recurrence": "gone",
                    }
                )
    return out

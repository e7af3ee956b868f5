"""What recurs: a failure's signature, the clusters of jobs that share one,
and, against a previous triage (``since``), what is new, recurring or gone."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

# The fingerprint's version: a change to how it is made is a new version, and
# rows of another version are never compared with this one's (no regrouping
# of history by an upgrade). 1: class | role | masked first line of the
# root's first evidence. 2: below.
FINGERPRINT_VERSION = 2

# Lines that say nothing of the cause: a traceback's header and joints, a
# logger's level with no message.
_GENERIC = re.compile(
    r"^\s*(?:Traceback \(most recent call last\):|During handling of the above exception"
    r"|The above exception was the direct cause|(?:[A-Z]+:)?(?:root|tensorflow|absl)?:?\s*$)"
)


def what_failed(text: str) -> str:
    """What a record says failed, as an error tracker groups it: for a Python
    exception, its type and the innermost frame of the script's own code
    (without the line number) or, without one, its masked message; for a
    message of an emitter's source, the file and line that print it; for a
    catalogue message, its kind (and its masked words when the kind is a
    general one); else the masked first line that is not generic."""
    from ..ingest.emitted import lookup
    from ..ingest.messages import MESSAGES
    from ..ingest.templates import classify
    from ..text import mask_message, user_frame

    kind, fields, _ = classify(text)
    if exc := fields.get("exc_type"):
        exc = exc.rsplit(".", 1)[-1]
        where = user_frame(text, line=False)
        return f"{exc} in {where}" if where else f"{exc}: {mask_message(fields.get('exc_message', ''))}"
    if (said := lookup(text)) is not None:
        return f"{said.emitter} {said.where}"
    meaningful = next((ln for ln in text.splitlines() if ln.strip() and not _GENERIC.match(ln)), "")
    if kind is not None:
        general = any(m.kind == kind and m.tier != "specific" for m in MESSAGES)
        return f"{kind}: {mask_message(meaningful)}" if general else kind
    return mask_message(meaningful)


def _generic(text: str) -> bool:
    """Evidence that says nothing of the cause: harmless (a banner), or
    nothing but generic lines."""
    from ..ingest.templates import classify

    lines = [ln for ln in text.splitlines() if ln.strip()]
    return not lines or classify(text)[2] or all(_GENERIC.match(ln) for ln in lines)


def signature(cls: str, root_workers: list[str], code: str, texts: list[str]) -> str:
    """One failure's fingerprint: its class, the root worker's role, the rule
    that concluded it, and what its first evidence that is not a generic line
    (a banner, a harmless message) says failed."""
    role = root_workers[0].split(":", 1)[0] if root_workers else "-"
    text = next((t for t in texts if not _generic(t)), texts[0] if texts else "")
    return f"{cls} | {role} | {code or '-'} | {what_failed(text)[:160]}"


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
        # Fingerprints of another version are not comparable with this one's.
        if row.get("fingerprint_version", 1) != FINGERPRINT_VERSION:
            continue
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

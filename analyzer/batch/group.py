"""A failure's signature (its fingerprint, as an error tracker makes one) and
the cluster id of the jobs that share it; ``history.py`` says what recurs."""

from __future__ import annotations

import hashlib
import re

# The fingerprint's version: a change to how it is made is a new version, and
# rows of another version are never compared with this one's (no regrouping
# of history by an upgrade). 1: class | role | masked first line of the
# root's first evidence. 2: what failed, from the first evidence not
# generic. 3: below (peer reports, last words and banners never stand for
# what failed; the rule does).
FINGERPRINT_VERSION = 3

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
    if not lines:
        return True
    kind, _, benign = classify(text)
    return benign or (kind or "").startswith("benign.") or all(_GENERIC.match(ln) for ln in lines)


# Evidence that shows where the failure was seen, not what failed: another
# worker's report of it, a worker's last words, a banner of versions.
_NOT_WHAT = frozenset(
    {"peer report", "echo", "its last line", "last words", "last progress", "stopped", "version", "worker"}
)


def signature(cls: str, root_workers: list[str], code: str, evidence: list[tuple[str, str]]) -> str:
    """One failure's fingerprint: its class, the root worker's role, the rule
    that concluded it, and what failed, from its first evidence that shows the
    failure itself (not a peer's report of it, not a banner, not a generic
    line). Where no evidence does (a worker that died silently, versions that
    differ), the rule is the fingerprint: ``-`` stands for what failed."""
    role = root_workers[0].split(":", 1)[0] if root_workers else "-"
    text = next((t for r, t in evidence if r not in _NOT_WHAT and not _generic(t)), None)
    return f"{cls} | {role} | {code or '-'} | {what_failed(text)[:160] if text is not None else '-'}"


def cluster_id(sig: str) -> str:
    return hashlib.sha256(sig.encode("utf-8", "surrogateescape")).hexdigest()[:10]

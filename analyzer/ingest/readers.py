"""Which reader claims a file: every kind of evidence has its reader, and each
reader says from a file's first bytes (and its name) whether the file is its
kind. ``discover`` asks them in turn and never decides by itself.

In order: exit records and profiler traces (by name), environment dumps
(pip, TF_CONFIG, nvidia-smi, kubectl describe, dmesg, Slurm), then worker
logs. A structured document (JSON, YAML) that no reader claims is not a log,
whatever words it holds: the JSON report of an earlier run, a job's metadata
file that mentions ``ResourceExhaustedError``. A log viewer's export is a
log, though, in either form: one JSON entry per line (the ``json_lines``
wrapper), or a document of entries with a message field (``textPayload``,
``jsonPayload.message``, ``message``, ``log``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from .ends import tells_ends
from .env import sniff_env
from .exit_status import is_exit_record
from .logfile import sniff_log
from .probes import tells_probes
from .wrappers import strip_ansi
from .xplane import is_trace_file


@dataclass(frozen=True)
class Claim:
    reader: str  # exit | trace | env | log | document (claimed by no reader: not read)
    kind: str | None = None  # the env kind; for a document, what it is in words


def claim_by_name(path: Path) -> Claim | None:
    """Readers that know their files by name alone (nothing is read)."""
    if is_exit_record(path.name):
        return Claim("exit")
    if is_trace_file(path):
        return Claim("trace")
    return None


def claim(head: str, rel: str) -> Claim | None:
    """The reader that claims a file from its first bytes, or None. A
    record captured through a terminal keeps its colours (a coloured ``sacct``,
    ``kubectl``): they are no part of what it says."""
    if (kind := sniff_env(strip_ansi(head), rel)) is not None:
        return Claim("env", kind)
    if (doc := structured_document(head, rel)) is not None:
        return Claim("document", doc)
    if sniff_log(head) or tells_ends(head) or tells_probes(head):
        # (a runner's log that says how the workers ended is read with theirs,
        # and so is a connectivity check's capture)
        return Claim("log")
    return None


# The message field of a log viewer's entry, at the top of an entry.
_ENTRY_KEYS = ("textPayload", "jsonPayload", "message", "msg", "log", "MESSAGE", "logmsg")
_JSON_ENTRY_KEY = re.compile(r'^\s{0,6}"(?:' + "|".join(_ENTRY_KEYS) + r')"\s*:', re.M)
_YAML_ENTRY_KEY = re.compile(r"^\s{0,4}(?:-\s+)?(?:" + "|".join(_ENTRY_KEYS) + r")\s*:", re.M)
_YAML_START = re.compile(r"(?:---[ \t]*(?:\n|$)|%YAML\b|apiVersion:[ \t])")


def structured_document(head: str, rel: str) -> str | None:
    """What a file is in words ("a JSON document") when it is one structured
    document that holds no log entries; None for anything else (a log, JSON
    lines, a log viewer's export of entries, plain text)."""
    text = head.lstrip("\ufeff \t\r\n")
    if not text:
        return None
    name = rel.rsplit("/", 1)[-1].lower()
    if text[0] in "{[":
        first, _, rest = text.partition("\n")
        if rest.strip() and _is_json_object(first):
            return None  # JSON lines: a stream of entries (a script's or a log viewer's)
        if _json_document(text) is None or _json_holds_entries(text):
            return None
        return "a JSON document"
    if name.endswith((".yaml", ".yml")) or _YAML_START.match(text):
        return None if _YAML_ENTRY_KEY.search(text) else "a YAML document"
    return None


def _is_json_object(line: str) -> bool:
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def _json_holds_entries(text: str) -> bool:
    """A JSON document of log entries: an entry, or a list of them."""
    doc = _json_document(text)
    if doc is _CUT:
        # Cut short by the sniff (a long export): its keys must say.
        return bool(_JSON_ENTRY_KEY.search(text))
    entries = doc if isinstance(doc, list) else [doc]
    return any(isinstance(e, dict) and _holds_entry(e) for e in entries[:50])


def _holds_entry(e: dict[str, object], depth: int = 3) -> bool:
    """An entry: a message field at its top, or inside an envelope (OCI
    Logging's ``logContent.data.message``)."""
    if any(k in e for k in _ENTRY_KEYS):
        return True
    return depth > 0 and any(isinstance(v, dict) and _holds_entry(v, depth - 1) for v in e.values())


_CUT = object()
# A document whose parse fails this close to the end of what was sniffed was
# cut there, not malformed.
_CUT_WITHIN = 4096


def _json_document(text: str) -> object:
    """The JSON document ``text`` is (``_CUT`` when it is one cut short), or
    None when it is not one: a log whose lines open with ``[`` (``[pod/x/c]``,
    ``[1,3]<stdout>:``) or with JSON followed by more text."""
    try:
        doc, end = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError as exc:
        return _CUT if exc.pos >= len(text) - _CUT_WITHIN and len(text) > _CUT_WITHIN else None
    return doc if not text[end:].strip() else None

"""The emitters' own vocabulary: every error and warning format string that
TensorFlow, tf-keras, Horovod and NCCL print, taken from their source, each
with the meaning ``scripts/coverage.py`` gave it (a verdict class, or a role:
a report of an earlier error, shutdown noise, the user's misuse of an API, an
internal error, a hint).

The hand-written catalogue (``messages.py``) comes first: it names the
records rules read, with their fields. A warning or error record none of its
messages recognises is looked up here, so that a message no recording of
this project holds is still known by what its source says it is: which
program printed it, in which file, and what it points at. A record found
here has the kind ``emitted.<meaning>`` and the fields ``emitted_at``
(``file:line`` in the emitter's source), ``emitted_by`` and ``meaning``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, cached_property, lru_cache

from .emitted_table import SCOPES, STRINGS

KIND_PREFIX = "emitted."
# A format string's gaps: ``{}`` as coverage.py extracts C++ and Python
# strings, and printf's conversions that Python's % formatting kept.
GAP = re.compile(r"\{\}|%[-#0 +]*\d*(?:\.\d+)?[rsdifgx]")


def literal_parts(text: str) -> list[str]:
    """A format string's literal parts (not blank)."""
    return [p for p in GAP.split(text) if p.strip()]


@dataclass(frozen=True)
class Emitted:
    scope: str
    file: str
    line: int
    level: str
    text: str
    meaning: str

    @property
    def emitter(self) -> str:
        return SCOPES[self.scope][0].split(" (")[0]

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}"

    @cached_property
    def key(self) -> str:
        """The longest literal part: a record holds it wherever the format string was printed."""
        return max(GAP.split(self.text), key=len)

    @property
    def pattern(self) -> re.Pattern[str]:
        return _compiled(self.text)


@cache
def _compiled(text: str) -> re.Pattern[str]:
    parts = GAP.split(text)
    return re.compile(".+?".join(re.escape(p) for p in parts) if len(parts) > 1 else re.escape(text), re.S)


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@cache
def _index() -> tuple[dict[str, tuple[int, ...]], tuple[int, ...], tuple[Emitted, ...]]:
    """(anchor word -> entries, entries without an anchor, every entry with
    the longest keys first). An entry's anchor is the longest word inside its
    key, not at its edges: wherever the key is printed, that word is a whole
    word of the text. Of two format strings that both match, the one with
    the longer key (the more specific) decides."""
    entries = tuple(sorted((Emitted(*row) for row in STRINGS), key=lambda e: -len(e.key)))
    index: dict[str, list[int]] = {}
    loose: list[int] = []
    for i, e in enumerate(entries):
        key = e.key
        inner = [m.group() for m in _WORD.finditer(key) if m.start() > 0 and m.end() < len(key)]
        if inner:
            index.setdefault(max(inner, key=len), []).append(i)
        else:
            loose.append(i)
    return {w: tuple(ix) for w, ix in index.items()}, tuple(loose), entries


@lru_cache(maxsize=4096)
def lookup(text: str) -> Emitted | None:
    """The emitter's format string ``text`` was printed from, if any (the
    same warning printed every step is looked up once)."""
    index, loose, entries = _index()
    candidates = set(loose)
    for word in set(_WORD.findall(text)):
        if (ix := index.get(word)) is not None:
            candidates.update(ix)
    for i in sorted(candidates):
        e = entries[i]
        if e.key in text and e.pattern.search(text):
            return e
    return None


def fields_of(e: Emitted) -> dict[str, str]:
    return {"emitted_at": e.where, "emitted_by": e.emitter, "meaning": e.meaning}


def kind_of(e: Emitted) -> str:
    return KIND_PREFIX + e.meaning


def meaning_of(kind: str | None) -> str | None:
    """The meaning an ``emitted.*`` kind carries."""
    return kind[len(KIND_PREFIX) :] if kind and kind.startswith(KIND_PREFIX) else None

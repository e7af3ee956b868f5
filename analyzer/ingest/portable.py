"""A message's regex turned into a scanner signature: the same matches or
more, in the subset of syntax that grep -E, RE2, hyperscan, ripgrep and
Python's re read alike.

Python's own parser reads the regex; each part is written back in portable
form: ``\\d`` as ``[0-9]``, named and non-capturing groups as plain groups,
a case-insensitive letter as ``[Aa]``. What cannot be written portably is
widened, never narrowed: anchors, word boundaries and lookarounds are
dropped, a back reference is any text. A signature is matched line by line, so a regex that
spans lines is cut at its first newline (what comes before it is on one line).
"""

from __future__ import annotations

import re
from typing import Any

try:  # Python 3.11+
    import re._constants as C  # type: ignore[import-not-found, unused-ignore]
    import re._parser as P  # type: ignore[import-not-found, unused-ignore]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as C  # type: ignore[no-redef, unused-ignore]
    import sre_parse as P  # type: ignore[no-redef, unused-ignore]

_SPECIAL = set(".[]()*+?{}|^$\\")
_SPACE = " \t\f\v\r"
_WORD = "A-Za-z0-9_"


class _Cut(Exception):
    """The regex needs a newline here: the signature ends before it."""


def signature(regex: str, flags: int = 0) -> str:
    """A portable signature of ``regex``: it matches every line where ``regex`` matches."""
    parsed = P.parse(regex, flags)
    caseless = bool((flags | parsed.state.flags) & re.I)
    out = _seq(list(parsed), caseless)
    return out or "."


def _seq(items: list[Any], caseless: bool) -> str:
    out = []
    for op, av in items:
        try:
            out.append(_one(op, av, caseless))
        except _Cut:
            break
    return "".join(out)


def _literal(ch: str, caseless: bool) -> str:
    if ch == "\n":
        raise _Cut
    if caseless and ch.isalpha() and ch.lower() != ch.upper():
        return f"[{ch.upper()}{ch.lower()}]"
    if ch in _SPECIAL:
        return "\\" + ch
    return ch


def _bracket(members: list[str], negate: bool) -> str:
    """A bracket expression every engine reads alike: a "]" first, a "-" last,
    "^" never first, "[" and "\\" escaped (POSIX reads the escape as one more
    member: the class only grows)."""
    # Lines hold no newline: one in a class matches nothing a line holds.
    singles = [m for m in members if len(m) == 1 and m != "\n"]
    ranges = [m for m in members if len(m) != 1]
    body = ("]" if "]" in singles else "") + "".join(
        {"\\": "\\\\", "[": "\\["}.get(c, c) for c in singles if c not in "]-^"
    )
    body += "".join(ranges) + ("^" if "^" in singles else "") + ("-" if "-" in singles else "")
    if body == "^":
        body = "\\^"
    return f"[{'^' if negate else ''}{body}]"


def _category(cat: Any, negate: bool) -> tuple[str, bool]:
    table = {
        C.CATEGORY_DIGIT: ("0-9", False),
        C.CATEGORY_NOT_DIGIT: ("0-9", True),
        C.CATEGORY_SPACE: (_SPACE, False),
        C.CATEGORY_NOT_SPACE: (_SPACE + "\n", True),
        C.CATEGORY_WORD: (_WORD, False),
        C.CATEGORY_NOT_WORD: (_WORD, True),
    }
    members, neg = table[cat]
    return members, neg != negate


def _in(av: list[Any], caseless: bool) -> str:
    negate = bool(av) and av[0][0] == C.NEGATE
    members: list[str] = []
    for op, val in av[1:] if negate else av:
        if op == C.LITERAL:
            ch = chr(val)
            members.append(ch)
            if caseless and ch.isalpha():
                members.append(ch.swapcase())
        elif op == C.RANGE:
            lo, hi = (chr(v) for v in val)
            if not (lo.isalnum() and hi.isalnum()):
                return "."  # a range of punctuation: any character, rather than a misread range
            members.append(f"{lo}-{hi}")
            if caseless and lo.isalpha() and hi.isalpha():
                members.append(f"{lo.swapcase()}-{hi.swapcase()}")
        elif op == C.CATEGORY:
            text, neg = _category(val, False)
            if neg:
                return "."  # a negated class inside a class: widen to any character
            members.extend(_members(text))
        else:
            return "."
    members = [m for m in members if m != "\n"]
    if (wide := _nonascii_alternatives(members, negate)) is not None:
        return wide
    if not members:
        return "."  # only a newline, which no line holds: any character, to be safe
    return _bracket(members, negate)


def _members(text: str) -> list[str]:
    """``0-9`` / ``A-Za-z0-9_`` / spaces as bracket members."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if i + 2 < len(text) and text[i + 1] == "-":
            out.append(text[i : i + 3])
            i += 3
        else:
            out.append(text[i])
            i += 1
    return out


def _nonascii_alternatives(members: list[str], negate: bool) -> str | None:
    """A class with characters beyond ASCII, as an alternation: hyperscan reads
    bytes, and a character of several bytes is no member of a byte class."""
    wide = [m for m in members if len(m) == 1 and ord(m) > 127]
    if not wide:
        return None
    if negate or any(len(m) != 1 and any(ord(c) > 127 for c in m) for m in members):
        return "."  # widened: any character
    narrow = [m for m in members if m not in wide]
    parts = ([_bracket(narrow, False)] if narrow else []) + [_literal(c, False) for c in wide]
    return "(" + "|".join(parts) + ")"


def _repeat(lo: int, hi: int, item: str) -> str:
    if (lo, hi) == (0, C.MAXREPEAT):
        return item + "*"
    if (lo, hi) == (1, C.MAXREPEAT):
        return item + "+"
    if (lo, hi) == (0, 1):
        return item + "?"
    if hi == C.MAXREPEAT:
        return f"{item}{{{lo},}}"
    if lo == hi:
        return f"{item}{{{lo}}}"
    return f"{item}{{{lo},{hi}}}"


def _one(op: Any, av: Any, caseless: bool) -> str:
    if op == C.LITERAL:
        return _literal(chr(av), caseless)
    if op == C.NOT_LITERAL:
        return "." if av == 10 else _bracket([chr(av)], True)
    if op == C.ANY:
        return "."
    if op == C.IN:
        return _in(av, caseless)
    if op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
        lo, hi, sub = av
        inner = _seq(list(sub), caseless)
        if inner != _seq_full(list(sub), caseless):
            raise _Cut  # a newline inside a repeated part
        if not inner:
            return ""
        item = inner if _atomic(list(sub)) and inner.isascii() else f"({inner})"
        return _repeat(lo, hi, item)
    if op == C.SUBPATTERN:
        sub = av[-1]
        sub_flags = av[1] if len(av) >= 4 else 0
        inner = _seq_full(list(sub), caseless or bool(sub_flags & re.I))
        return f"({inner})"
    if op == C.BRANCH:
        _, branches = av
        return "(" + "|".join(_seq_full(list(b), caseless) for b in branches) + ")"
    if op == C.AT:
        # Anchors and word boundaries are dropped (the signature matches more):
        # the scanner embeds each signature in a line pattern of its own, and
        # hyperscan refuses an anchor inside one.
        return ""
    if op in (C.ASSERT, C.ASSERT_NOT):
        return ""  # lookarounds: dropped
    if op == C.GROUPREF:
        return ".*"
    if op == C.CATEGORY:
        text, neg = _category(av, False)
        return _bracket(_members(text), neg)
    if op == getattr(C, "ATOMIC_GROUP", None):
        return "(" + _seq_full(list(av), caseless) + ")"
    raise ValueError(f"no portable form for {op}")


def _seq_full(items: list[Any], caseless: bool) -> str:
    """A part that must be whole: a newline inside it makes it match anything on the line."""
    out = []
    for op, av in items:
        try:
            out.append(_one(op, av, caseless))
        except _Cut:
            return ".*"
    return "".join(out)


def _atomic(items: list[Any]) -> bool:
    """Whether a repeated part is one item (no group needed around it)."""
    if len(items) != 1:
        return False
    op, av = items[0]
    if op == C.LITERAL:
        return True
    return op in (C.ANY, C.IN, C.NOT_LITERAL, C.CATEGORY, C.SUBPATTERN, C.BRANCH)

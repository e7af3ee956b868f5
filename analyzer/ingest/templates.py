"""Templates: what a log record *is*, and the fields it carries.

A record's ``kind`` is the first message of the catalogue (``messages.py``,
tried in its order: by tier, then catalogue order) whose regex matches its
text; the regex's named groups become the record's ``fields``. Messages
name what a program said, never what it means for a diagnosis: that is the
rules' business. A record whose first line is a known harmless message is
marked ``benign``; a Python traceback is parsed for its exception and the
message it ends in.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from itertools import accumulate
from typing import Any

from .messages import MESSAGES, Message, in_order, messages_tagged

# The messages records are classified by, in the order they are tried; the
# harmless ones are tried first, on a record's first line.
TEMPLATES: tuple[Message, ...] = tuple(in_order(m for m in MESSAGES if m.benign is None))
BENIGN: tuple[Message, ...] = tuple(m for m in MESSAGES if m.benign is not None)


def benign_kind(text: str) -> str | None:
    """The harmless message a record's text is, if any."""
    for b in BENIGN:
        if b.pattern.search(text):
            return b.kind
    return None


def _unnamed(regex: str) -> str:
    """A regex without its group names, to be joined with others (a kind's
    wordings share the names of their fields)."""
    return re.sub(r"\(\?P<\w+>", "(?:", regex)


# Records that show a worker made training progress (Keras' and the script's own).
PROGRESS_KINDS: tuple[str, ...] = messages_tagged("progress")
WHOAMI = "script.whoami"
# What a script's line says beyond who wrote it, read in its own words.
_SAYS_MORE = frozenset((*PROGRESS_KINDS, "script.input_ended", "train.loss_not_finite"))

# A script's progress print: never the continuation of a C++ record before it.
PROGRESS_LINE = re.compile(
    "|".join(
        f"(?:{_unnamed(t.regex.removeprefix('(?i)'))})"
        for t in TEMPLATES
        if t.kind in ("train.step", "train.epoch")
    ),
    re.I,
)

# The least severity a record of a kind has, whatever it was printed at (a
# bare "Killed" prints none; TF1 prints some failures at INFO level).
TEMPLATE_SEVERITY: dict[str, str] = {t.kind: t.severity for t in TEMPLATES if t.severity}

# Lines that start a record of their own even right after a C++ record, whose
# unheadered followers are otherwise its continuation.
STANDALONE = re.compile(
    "|".join(
        [
            *(f"(?:{_unnamed(t.regex)})" for t in TEMPLATES if t.standalone),
            r"^\d+/\d+ \[",  # a Keras progress bar
            r"^WARNING: All log messages before absl::InitializeLog",
        ]
    ),
    re.I,
)

_EXC_LINE = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Failure|Abort|Fault))(?::\s?(?P<msg>.*))?$"
)
_INLINE_EXC = re.compile(r".*\b(?P<type>[A-Za-z_][\w.]*(?:Error|Exception)): (?P<msg>[^\n]*)$", re.S)
IPYTHON_HEAD = re.compile(r"^(?P<type>\w+)\s{2,}Traceback \(most recent call last\)")
# A Python exception printed without its traceback (pasted alone, or the last
# line kept of a long one): an error record of its own. Warnings are not.
BARE_EXCEPTION = re.compile(
    r"^ {0,8}(?:[a-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Fault)(?::\s.*|:?\s*)$"
)


def _traceback(text: str) -> dict[str, str]:
    """The exception that ended a traceback: its type and message.

    With chained exceptions ("During handling of the above exception ...")
    the last exception line is the one that was raised."""
    exc_type = exc_msg = ""
    for line in text.splitlines():
        if line[:1].isspace() or not line or "Traceback (most recent call last)" in line:
            continue
        m = _EXC_LINE.match(line)
        if m:
            exc_type, exc_msg = m["type"], m["msg"] or ""
    if not exc_type and (m := IPYTHON_HEAD.match(text)):
        exc_type = m["type"]  # Jupyter printed the type in the traceback's head; its last line is cut off
    if not exc_type and (m := _INLINE_EXC.search(text)):
        # A traceback flattened onto one line (a launcher's status message): the last exception named.
        exc_type, exc_msg = m["type"], m["msg"]
    out = {"exc_type": exc_type, "exc_message": exc_msg[:500]} if exc_type else {}
    # The modules the exception passed through (file names, innermost last):
    # where it came from says more than its type (a ValueError raised while
    # reading TF_CONFIG is a configuration error).
    frames = list(dict.fromkeys(m[1] for m in _FRAME.finditer(text)))
    if frames:
        out["frames"] = ",".join(frames[-12:])
    # Graph errors name the op that failed and where the program created it
    # ("Detected at node X defined at (most recent call last): File ..."): the
    # innermost frame there is the code site, comparable across workers.
    if (m := _DETECTED.search(text)) is not None:
        out["node"] = m["node"]
        sites = _SITE.findall(text[m.end() :])
        if sites:
            file, line, func = sites[-1]
            out["node_site"] = f"{file}:{line} in {func}"
    return out


_DETECTED = re.compile(r"Detected at node '?(?P<node>[^'\s]+)'? defined at \(most recent call last\):")
_SITE = re.compile(r'^\s*File "(?:[^"]*/)?([^"/]+)", line (\d+), in (\S+)', re.M)


_FRAME = re.compile(r'^\s*File "(?:[^"]*/)?([^"/]+)", line \d+', re.M)


TRACEBACK_KIND = "py.traceback"

# TF errors whose message a traceback that ends in them keeps (as ``tf_kind``).
_IN_TRACEBACKS = frozenset(messages_tagged("in_traceback"))


def classify(text: str) -> tuple[str | None, dict[str, str], bool]:
    """(kind, fields, benign) for a record's text; kind None when no template matches."""
    return _classify(text, _candidates)


def classify_many(texts: list[str]) -> list[tuple[str | None, dict[str, str], bool]]:
    """``classify`` of each text, with one multi-pattern pass over all of them
    to find each one's candidate templates (instead of one pass per text)."""
    many = _candidates_many(texts)
    if many is None:
        return [_classify(t, _candidates) for t in texts]
    return [_classify(t, _known(maybe)) for t, maybe in zip(texts, many, strict=True)]


_Candidates = Callable[[str], "set[int] | None"]


def _known(maybe: set[int]) -> _Candidates:
    """Candidates found beforehand, for a text and any part of it."""

    def candidates(_text: str) -> set[int] | None:
        return maybe

    return candidates


def _classify(text: str, candidates: _Candidates) -> tuple[str | None, dict[str, str], bool]:
    first, _, rest = text.partition("\n")
    if (harmless := benign_kind(first)) is not None:
        # Lines a script printed right after it can be folded into its record:
        # what they say is not harmless by association.
        found = _match(rest, candidates) if rest.strip() else None
        return found if found is not None and found[0] is not None else (harmless, {}, True)
    if (
        text.startswith("Traceback")
        or BARE_EXCEPTION.match(first)
        or IPYTHON_HEAD.match(first)
        or "Traceback (most recent call last)" in first  # a traceback flattened onto one line
    ):
        fields = _traceback(text)
        # A traceback that ends in a TF error keeps the error's own template too.
        maybe = candidates(text)
        ended = _leftmost(text, (t for t in _in_order(maybe) if t.kind in _IN_TRACEBACKS))
        if ended is not None:
            t, m = ended
            fields.update({k: v for k, v in m.groupdict().items() if v is not None})
            fields["tf_kind"] = t.kind
            if t.extra:
                fields.update(t.extra(text))
        return TRACEBACK_KIND, fields, False
    return _match(text, candidates)


def _in_order(maybe: set[int] | None) -> Iterable[Message]:
    """The templates to try, in TEMPLATES' order (first match wins): only the
    candidates when there are any, else all."""
    return TEMPLATES if maybe is None else [TEMPLATES[i] for i in sorted(maybe)]


def _leftmost(text: str, messages: Iterable[Message]) -> tuple[Message, re.Match[str]] | None:
    """The first kind (in the order given) with a message that matches, and of
    its messages the one whose match starts first in ``text`` (the earlier one
    on a tie): a kind's wordings read as one alternation would."""
    best: tuple[Message, re.Match[str]] | None = None
    for t in messages:
        if best is not None and t.kind != best[0].kind:
            break
        m = t.pattern.search(text)
        if m is not None and (best is None or m.start() < best[1].start()):
            best = (t, m)
    return best


def _match(text: str, candidates: _Candidates) -> tuple[str | None, dict[str, str], bool]:
    maybe = candidates(text)
    found = _leftmost(text, _in_order(maybe))
    if found is None:
        return None, {}, False
    t, m = found
    if t.kind == WHOAMI and (m.start() > 0 or text[m.end() :].strip()):
        # A structured logger's identity field ("... loss=0.41 task=worker:1",
        # logfmt's 'task=worker:0 msg="epoch 2 step 6/12"' once its time and level
        # are read) is the line's metadata: what its message says (progress, its
        # input ending, a loss gone NaN) is its kind.
        progress = _leftmost(text, (x for x in _in_order(maybe) if x.kind in _SAYS_MORE))
        if progress is not None:
            who = {k: v for k, v in m.groupdict().items() if v is not None}
            t, m = progress
            fields = {**who, **{k: v for k, v in m.groupdict().items() if v is not None}}
            if t.extra:
                fields.update(t.extra(text))
            return t.kind, fields, t.benign is not None
    fields = {k: v for k, v in m.groupdict().items() if v is not None}
    if t.extra:
        fields.update(t.extra(text))
    if t.kind in _ABORTS and (why := _abort_reason(fields.get("reason", ""))) is not None:
        # "Collective ops is aborted by: <reason>": the reason decides
        # what happened (a shape mismatch, not a lost peer).
        return why[0], {**fields, **why[1]}, False
    return t.kind, fields, t.benign is not None


# A relayed abort ("Collective ops is aborted by: <reason>") whose reason is
# one of these messages is that message.
_ABORTS = frozenset(m.kind for m in MESSAGES if m.tier == "relay")
_REASON_KINDS = frozenset(messages_tagged("abort_reason"))


def _abort_reason(reason: str) -> tuple[str, dict[str, str]] | None:
    found = _leftmost(reason, (t for t in TEMPLATES if t.kind in _REASON_KINDS))
    if found is not None:
        t, m = found
        fields = {k: v for k, v in m.groupdict().items() if v is not None}
        if t.extra:
            fields.update(t.extra(reason))
        return t.kind, fields
    return None


# Which templates can match a text: every template's ``sig`` matches wherever
# its pattern does (a test holds each one to that over every recorded record),
# so one multi-pattern pass over the text names the few whose full patterns
# are worth trying, instead of trying all of them in turn.
_PREFILTER: object = None  # the hyperscan database, False when there is none
_BATCH: object = None  # the same patterns for many texts in one pass


def _prefilter(batch: bool) -> Any:
    global _PREFILTER, _BATCH
    if (_BATCH if batch else _PREFILTER) is None:
        from . import multipattern

        hs = multipattern.hyperscan_module()
        _PREFILTER = _BATCH = False
        if hs is not None:
            exprs = [t.signature.encode() for t in TEMPLATES]
            ids = list(range(len(exprs)))
            _PREFILTER = multipattern.database(hs, exprs, ids, [hs.HS_FLAG_SINGLEMATCH] * len(exprs))
            # Texts joined by newlines: every match has to be reported (one a
            # pattern would be one in the whole batch), and ^ (should a
            # signature ever use it) starts any line, so a text's candidates
            # are never fewer than its own pass would give.
            _BATCH = multipattern.database(hs, exprs, ids, [hs.HS_FLAG_MULTILINE] * len(exprs))
    return _BATCH if batch else _PREFILTER


def _candidates(text: str) -> set[int] | None:
    """Indexes in TEMPLATES of the templates whose signature ``text`` matches;
    None when no multi-pattern engine is available (then all are tried)."""
    db = _prefilter(batch=False)
    if db is False:
        return None
    found: set[int] = set()
    add = found.add

    def on_match(i: int, _from: int, _to: int, _flags: int, _ctx: object) -> None:
        add(i)

    db.scan(text.encode("utf-8", "surrogatepass"), match_event_handler=on_match)
    return found


def _candidates_many(texts: list[str]) -> list[set[int]] | None:
    """``_candidates`` of each text, from one pass over them all joined by
    newlines. A match ends inside the text it was found in (one that runs
    over a newline into the next text only adds a candidate, which its full
    pattern then turns down)."""
    db = _prefilter(batch=True)
    if db is False:
        return None
    parts = [t.encode("utf-8", "surrogatepass") for t in texts]
    ends = list(accumulate(len(p) + 1 for p in parts))
    found: list[set[int]] = [set() for _ in parts]

    def on_match(i: int, _from: int, to: int, _flags: int, _ctx: object) -> None:
        found[bisect_right(ends, to - 1)].add(i)

    db.scan(b"\n".join(parts), match_event_handler=on_match)
    return found


def reset_prefilter() -> None:
    """Forget the prefilter (tests switch engines)."""
    global _PREFILTER, _BATCH
    _PREFILTER = _BATCH = None

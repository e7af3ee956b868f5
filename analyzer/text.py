"""Text helpers shared by the rules, the engine, the report and triage: sizes
in words, and messages with their variable parts masked."""

from __future__ import annotations

import re

import pyarrow as pa
import pyarrow.compute as pc

from .tasks import SHORT_TASK


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.2f} {unit}"
        n /= 1024
    return f"{n:.2f} PiB"


_UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50}


def parse_bytes(text: str | None) -> int | None:
    """``23.54GiB`` / ``4.00 TiB`` / ``320.0KiB`` → bytes."""
    if not text:
        return None
    t = text.strip().replace(" ", "")
    for unit in sorted(_UNITS, key=len, reverse=True):
        if t.endswith(unit):
            try:
                return int(float(t[: -len(unit)]) * _UNITS[unit])
            except ValueError:
                return None
    return int(t) if t.isdigit() else None


# What a message's variable parts look like: masked so that one message
# printed with different numbers, tasks, addresses or paths counts as one.
# The same patterns in Python's re (ASCII classes) and in RE2 (pyarrow), so a
# message masked one by one and a column masked at once read the same.
_MASK_PATTERNS = (
    (r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?", "<time>"),
    (r"/job:\w+/replica:\d+/task:\d+(?:/device:\w+:\d+)?", "<task>"),
    # A task in its short form (worker:1, chief:0): each worker names itself.
    (SHORT_TASK, "<task>"),
    # ... or as a structured logger's fields ("role=chief index=0"): one template on every worker.
    (r"\b(?:role|task_type|job_name)=(?:chief|worker|master|ps|evaluator)\b", "<role>"),
    (r"\b(?:ipv[46]:)?\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?", "<addr>"),
    # A path, absolute or relative ("model_out/ckpt", "runs/tmp_worker_1/ckpt"): a
    # relative one starts with a word, so "3/10" and "44ms/step" stay what they are.
    (r"(?:\b[A-Za-z_][\w.@+-]*)?(?:/[\w.@+-]+){2,}/?|\b[A-Za-z_][\w.@+-]*(?:/[\w.@+-]+)+/?", "<path>"),
    (r"(?i)\b0x[0-9a-f]+\b", "<hex>"),
    # A size in any unit is one size: GiB and MiB of one cause are one template.
    (r"\b\d+(?:\.\d+)?\s?(?:[KMGTP]i?B|bytes|B)\b", "<size>"),
    # The report's pseudonyms for hosts, addresses and users.
    (r"\b(?:host|ip|user)-\d+\b", "<host>"),
    (r"\[\d+(?:,\s*\d+)*\]", "<shape>"),
    (r"\d+(?:\.\d+)?", "<n>"),
)
_MASKS = tuple((re.compile(p, re.ASCII), mask) for p, mask in _MASK_PATTERNS)


def first_line(text: str) -> str:
    """A record's first line, without the whitespace around the record."""
    stripped = text.strip()
    return stripped.split("\n", 1)[0].rstrip("\r") if stripped else ""


_TRACEBACK_HEAD = "Traceback (most recent call last):"
# A traceback's last word: the exception's (dotted) name, then its message or nothing.
_EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?::\s|$)")


def what_it_says(text: str) -> str:
    """A record as a quote: its first line, or for a Python traceback its
    last line (the exception and its message), never the traceback's header."""
    first = first_line(text)
    if first != _TRACEBACK_HEAD:
        return first
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return next((ln for ln in reversed(lines) if _EXCEPTION_LINE.match(ln)), first)


def mask_message(text: str) -> str:
    """A record's first line with its variable parts masked: one message printed
    with different numbers, tasks, addresses or paths is one template."""
    first = first_line(text)
    for pattern, mask in _MASKS:
        first = pattern.sub(mask, first)
    return first[:240]


def mask_column(texts: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    """``mask_message`` of every text of a column at once (RE2 in Arrow)."""
    first = pc.replace_substring_regex(
        pc.utf8_trim_whitespace(pc.cast(texts, pa.string())), r"[\r]?\n(?s:.*)", ""
    )
    for pattern, mask in _MASK_PATTERNS:
        first = pc.replace_substring_regex(first, pattern, mask)
    return pc.utf8_slice_codeunits(first, 0, 240)


_FRAME = re.compile(r'^\s*File "(?P<path>[^"]+)", line (?P<line>\d+), in (?P<func>\S+)', re.M)
# Library code, not the user's: the innermost frame outside these is the script's.
_LIBRARY = re.compile(r"site-packages|dist-packages|/lib/python\d|<frozen|/tensorflow/|/keras/|/tf_keras/")


def innermost_path(text: str) -> str | None:
    """The file of a Python traceback's innermost frame (where it was raised)."""
    frames = _FRAME.findall(text)
    return frames[-1][0] if frames else None


def user_frame(text: str, line: bool = True) -> str | None:
    """The innermost frame of the script's own code in a Python traceback:
    ``train.py:42 in step`` (``train.py in step`` without its line, which an
    edit elsewhere in the file moves)."""
    frames = [m for m in _FRAME.finditer(text) if not _LIBRARY.search(m["path"])]
    if not frames:
        return None
    m = frames[-1]
    name = m["path"].rsplit("/", 1)[-1]
    return f"{name}:{m['line']} in {m['func']}" if line else f"{name} in {m['func']}"

"""A strict reader of plain command lines, for the console script's fast path:
``analyze`` with its options spelled out (``--out DIR``, ``-j 2``, flags) is
read here without loading typer (whose option converters take as long as a
small job's analysis). Anything else (``--help``, ``--opt=value``, ``-oX``,
``--``, a typo, a value it is not sure of) is left to the typer app, which
says what to say. The options themselves come from ``fast_options.py``,
generated from the typer declarations.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Opt:
    dest: str
    convert: Callable[[str], Any] | None  # None: a flag


def at_least_int(low: int) -> Callable[[str], int]:
    def convert(text: str) -> int:
        if not (text.isascii() and text.isdigit()) or int(text) < low:
            raise ValueError(text)
        return int(text)

    return convert


def at_least_float(low: float) -> Callable[[str], float]:
    def convert(text: str) -> float:
        if not re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", text) or float(text) < low:
            raise ValueError(text)
        return float(text)

    return convert


_UNITS = {
    "": 1, "b": 1,
    "k": 1 << 10, "kib": 1 << 10, "kb": 10**3,
    "m": 1 << 20, "mib": 1 << 20, "mb": 10**6,
    "g": 1 << 30, "gib": 1 << 30, "gb": 10**9,
    "t": 1 << 40, "tib": 1 << 40, "tb": 10**12,
}  # fmt: skip


def size_bytes(text: str | int) -> int:
    """A size as people write it: ``16G``, ``16GiB``, ``512MiB``, ``1.5g``,
    ``2GB`` (10^9), ``17179869184``; K, M, G and T alone are binary (as in
    ``ulimit`` and ``docker --memory``). ValueError, naming the forms, otherwise."""
    if isinstance(text, int):  # a default, already in bytes
        return text
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*", text)
    unit = _UNITS.get(m.group(2).lower()) if m else None
    if m is None or unit is None or float(m.group(1)) * unit < 1:
        raise ValueError(f"{text!r} is not a size (write it as 16GiB, 16G, 512MiB or a number of bytes)")
    return int(float(m.group(1)) * unit)


def parse(args: list[str], options: dict[str, Opt], defaults: dict[str, Any]) -> dict[str, Any] | None:
    """``args`` (one path and options) as keywords, defaults filled in; None
    for anything but plain, valid spellings."""
    kw: dict[str, Any] = {}
    paths: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "-" or not a.startswith("-"):
            if not a:
                return None
            paths.append(a)
            continue
        opt = options.get(a)
        if opt is None:
            return None  # --help, --, --x=y, -oX, a typo: typer says what to say
        if opt.convert is None:
            kw[opt.dest] = True
            continue
        if i >= len(args) or not args[i] or args[i].startswith("-"):
            return None
        try:
            kw[opt.dest] = opt.convert(args[i])
        except ValueError:
            return None
        i += 1
    if len(paths) != 1:
        return None
    return {**defaults, **kw, "path": Path(paths[0])}

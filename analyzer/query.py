"""Small, columnar-first helpers for rules: filter in Arrow, then hand a rule
the handful of rows it needs as dicts."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from .findings import Evidence, ts_key
from .tables import JobTables

Row = dict[str, Any]


def _rows(table: pa.Table) -> list[Row]:
    rows: list[Row] = table.to_pylist()
    for r in rows:
        r["fields"] = dict(r["fields"] or ())
    return rows


def records(tables: JobTables, kinds: Iterable[str], worker: str | None = None) -> list[Row]:
    """Events of the given kinds (optionally of one worker), in time order."""
    ev = tables.events
    mask = pc.is_in(pc.cast(ev["kind"], pa.string()), pa.array(list(kinds), pa.string()))
    if worker is not None:
        mask = pc.and_(mask, pc.equal(pc.cast(ev["worker"], pa.string()), worker))
    return sorted(_rows(ev.filter(mask)), key=time_key)


def tracebacks_with(tables: JobTables, tf_kinds: Iterable[str]) -> list[Row]:
    """Python tracebacks whose exception carries one of these TF templates."""
    wanted = set(tf_kinds)
    return [r for r in records(tables, ["py.traceback"]) if r["fields"].get("tf_kind") in wanted]


def error_records(tables: JobTables, worker: str | None = None) -> list[Row]:
    """Records printed at error or fatal level that are not known to be harmless."""
    ev = tables.events
    mask = pc.and_(
        pc.is_in(pc.cast(ev["severity"], pa.string()), pa.array(["error", "fatal"])),
        pc.invert(ev["benign"]),
    )
    if worker is not None:
        mask = pc.and_(mask, pc.equal(pc.cast(ev["worker"], pa.string()), worker))
    return sorted(_rows(ev.filter(mask)), key=time_key)


def last_records(tables: JobTables, worker: str, n: int) -> list[Row]:
    """A worker's last ``n`` records, in file order: its last words."""
    ev = tables.events
    mine = ev.filter(pc.equal(pc.cast(ev["worker"], pa.string()), worker))
    start = max(0, mine.num_rows - n)
    return _rows(mine.slice(start))


def workers(tables: JobTables) -> dict[str, Row]:
    return {r["worker"]: r for r in tables.workers.to_pylist()}


def time_key(row: Row) -> tuple[tuple[bool, dt.datetime], str, int]:
    return (ts_key(row["ts"]), row["source"], row["line"])


def evidence(row: Row, role: str = "") -> Evidence:
    return Evidence(row["worker"], row["source"], row["line"], row["end_line"], row["ts"], row["text"], role)


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

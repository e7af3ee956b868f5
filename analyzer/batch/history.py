"""Triage's memory across nights: what failed before, by signature.

``--history DIR`` keeps every night's rows as a Parquet dataset, one
partition a night (``DIR/night=20261124T021500Z/part-0.parquet``), the schema
of ``triage.parquet`` plus nothing: DuckDB (``read_parquet('DIR/**/*.parquet',
hive_partitioning=true)``) and pandas (``pd.read_parquet(DIR)``) read it as
one table with a ``night`` column. ``--since FOLDER`` is the same with one
earlier night, read from that triage's ``triage.jsonl``.

Only rows of this fingerprint version are compared (an upgrade that makes
signatures otherwise never regroups history); healthy jobs and jobs that
could not be analysed have no signature to remember.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .group import FINGERPRINT_VERSION

NIGHT_FORMAT = "%Y%m%dT%H%M%SZ"
PREVIOUS = "previous"  # the one earlier night of --since, whose time is its rows'
# What a night's rows are read for: who failed, how, since when.
_COLUMNS = (
    "status", "class", "root_workers", "first_failure_ts", "signature", "cluster",
    "fingerprint_version", "first_seen", "summary",
)  # fmt: skip


def night_of(when: dt.datetime) -> str:
    return when.astimezone(dt.timezone.utc).strftime(NIGHT_FORMAT)


def _iso(when: dt.datetime) -> str:
    """A time as the rows write it: UTC, milliseconds, ``Z``."""
    return when.astimezone(dt.timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def night_iso(night: str) -> str:
    """A night's name as an ISO 8601 time (the page's and the table's)."""
    try:
        return _iso(dt.datetime.strptime(night, NIGHT_FORMAT).replace(tzinfo=dt.timezone.utc))
    except ValueError:
        return night


@dataclass
class Seen:
    """One signature over the earlier nights: how many nights it was seen,
    the last of them, its jobs on each of the trend's nights, and one of its
    rows (the latest)."""

    nights: int = 0
    last: str = ""
    recent: dict[str, int] = field(default_factory=dict)
    row: dict[str, Any] = field(default_factory=dict)


@dataclass
class Past:
    """The earlier nights: how many, the names of the latest (those a trend
    shows) and, per signature (cluster id), what :class:`Seen` keeps. Its
    size grows with the signatures ever seen, not with the nights: a year of
    history holds the same per signature as a week."""

    count: int = 0
    recent_nights: list[str] = field(default_factory=list)
    seen: dict[str, Seen] = field(default_factory=dict)
    first_ts: dict[str, str] = field(default_factory=dict)  # cluster -> earliest failure time recorded

    def begin(self, night: str) -> None:
        """A night is read (nights come oldest first); the trend keeps the latest."""
        self.count += 1
        self.recent_nights.append(night)
        if len(self.recent_nights) > TREND_NIGHTS - 1:
            gone = self.recent_nights.pop(0)
            for s in self.seen.values():
                s.recent.pop(gone, None)

    def add(self, night: str, row: dict[str, Any]) -> None:
        cid = row.get("cluster") or ""
        if not cid or row.get("status") in ("healthy", "error"):
            return
        if row.get("fingerprint_version", 1) != FINGERPRINT_VERSION:
            return
        times = [str(t) for t in (row.get("first_seen"), row.get("first_failure_ts")) if t]
        self.note(cid, night, 1, times, row)

    def note(
        self, cid: str, night: str, jobs: int, times: list[str], row: dict[str, Any] | None = None
    ) -> None:
        """A signature's ``jobs`` of one night, their earliest failure times
        and (for the latest night) one of its rows."""
        s = self.seen.setdefault(cid, Seen())
        if s.last != night:
            s.nights += 1
        if night >= s.last:
            s.last = night
            if row is not None:
                s.row = row
        if night in self.recent_nights:
            s.recent[night] = s.recent.get(night, 0) + jobs
        # Since when it fails: the rows' own times, else (a warning without one) the night's.
        if not times and night != PREVIOUS:
            times = [night_iso(night)]
        for ts in times:
            if cid not in self.first_ts or ts < self.first_ts[cid]:
                self.first_ts[cid] = ts

    @property
    def last(self) -> str | None:
        return self.recent_nights[-1] if self.recent_nights else None


def from_triage(since: Path | None) -> Past:
    """One earlier triage (its folder or its triage.jsonl) as the only past night."""
    past = Past()
    if since is None:
        return past
    path = since / "triage.jsonl" if since.is_dir() else since
    past.begin(PREVIOUS)
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            past.add(PREVIOUS, json.loads(line))
    return past


def read_history(folder: Path | None, before: str) -> Past:
    """Every night kept under ``folder`` before ``before``, oldest first."""
    past = Past()
    if folder is None or not folder.is_dir():
        return past
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    parts = sorted(
        (part.name.split("=", 1)[1], part / "part-0.parquet")
        for part in folder.glob("night=*")
        if part.name.split("=", 1)[1] < before and (part / "part-0.parquet").is_file()
    )
    for k, (night, path) in enumerate(parts):
        names = set(pq.read_schema(path).names)  # an older night may lack a column: it is not comparable then
        past.begin(night)
        if k < len(parts) - 1 and {"status", "cluster", "fingerprint_version"} <= names:
            # A night before the last: only each signature's jobs and times
            # are kept, so it is summed in Arrow, never turned into rows.
            _add_night(past, night, pq.read_table(path, columns=[c for c in _LIGHT if c in names]))
            continue
        table = pq.read_table(path, columns=[c for c in _COLUMNS if c in names])
        if "status" in names:  # only failures and warnings are remembered; the rest are not turned into rows
            table = table.filter(pc.invert(pc.is_in(table.column("status"), pa.array(["healthy", "error"]))))
        for row in table.to_pylist():
            row = {k: (_iso(v) if isinstance(v, dt.datetime) else v) for k, v in row.items()}
            past.add(night, row)
    return past


_LIGHT = ("status", "cluster", "fingerprint_version", "first_seen", "first_failure_ts")


def _add_night(past: Past, night: str, table: Any) -> None:
    """One earlier night's signatures (not its last), as counts and first times."""
    import pyarrow as pa
    import pyarrow.compute as pc

    keep = pc.and_(
        pc.invert(pc.is_in(table["status"], pa.array(["healthy", "error"]))),
        pc.and_(
            pc.equal(table["fingerprint_version"], FINGERPRINT_VERSION), pc.not_equal(table["cluster"], "")
        ),
    )
    table = table.filter(pc.fill_null(keep, False))
    if table.num_rows == 0:
        return
    times = [c for c in ("first_seen", "first_failure_ts") if c in table.column_names]
    grouped = table.group_by("cluster").aggregate([("cluster", "count"), *((c, "min") for c in times)])
    for row in grouped.to_pylist():
        mins = [row.get(f"{c}_min") for c in times]
        stamps = [_iso(v) if isinstance(v, dt.datetime) else str(v) for v in mins if v]
        past.note(row["cluster"], night, row["cluster_count"], stamps)


def append_history(folder: Path, night: str, table: Any) -> Path:
    """This night's rows as the dataset's new partition (written whole, then
    moved into place: a reader never sees half a night)."""
    import pyarrow.parquet as pq

    folder.mkdir(parents=True, exist_ok=True)
    final = folder / f"night={night}"
    tmp = folder / f".night={night}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    pq.write_table(table, tmp / "part-0.parquet")
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    return final


def recurrence(cid: str, past: Past) -> str:
    """This night's word for a signature: new (never seen), recurring (seen
    the night before), regressed (seen before, then gone for a night or
    more, now back); "" when there is no earlier night to compare with."""
    if not past.count:
        return ""
    seen = past.seen.get(cid)
    if seen is None:
        return "new"
    return "recurring" if seen.last == past.last else "regressed"


def _past(past: Past | Path | None) -> Past:
    if isinstance(past, Past):
        return past
    return from_triage(past) if past is not None else Past()


def mark_recurrence(rows: list[dict[str, Any]], past: Past | Path | None) -> None:
    """Each failure's signature new, recurring or regressed against the
    earlier nights (none: nothing is marked, the first night has nothing to
    recur), and since when it fails: the earliest time of this run or of the
    nights before."""
    past = _past(past)
    earliest: dict[str, str] = {}
    for r in rows:
        ts = r["first_failure_ts"]
        if r["cluster"] and ts and (r["cluster"] not in earliest or ts < earliest[r["cluster"]]):
            earliest[r["cluster"]] = ts
    for r in rows:
        if not r["cluster"] or r["status"] in ("healthy", "error"):
            continue
        cid = r["cluster"]
        seen = [t for t in (earliest.get(cid, ""), past.first_ts.get(cid, "")) if t]
        r["first_seen"] = min(seen) if seen else ""
        r["recurrence"] = recurrence(cid, past)


# What to fix first: what is new or came back, then what hits most jobs, failures before warnings.
_URGENCY = {"new": 0, "regressed": 0, "recurring": 1, "": 1, "gone": 2}
TREND_NIGHTS = 14


def clusters(rows: list[dict[str, Any]], past: Past | Path | None = None) -> list[dict[str, Any]]:
    """Jobs grouped by signature, what to fix first first (new and regressed,
    then the most jobs, failures before warnings); with earlier nights, each
    signature's trend over them, and those of the last night that are gone
    listed last."""
    past = _past(past)
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
                "status": r["status"],
                "jobs": [],
                "first_seen": "",
                "recurrence": r["recurrence"],
                "root_role": r["root_workers"][0].split(":", 1)[0] if r["root_workers"] else "",
                "summary": r["summary"],
            },
        )
        g["jobs"].append(r)
        if r["status"] == "failure":
            g["status"] = "failure"
        ts = r["first_seen"] or r["first_failure_ts"]
        if ts and (not g["first_seen"] or ts < g["first_seen"]):
            g["first_seen"] = ts
    nights = past.recent_nights
    for cid, g in groups.items():
        seen = past.seen.get(cid, Seen())
        g["trend"] = [seen.recent.get(n, 0) for n in nights] + [len(g["jobs"])] if nights else []
        g["nights_seen"] = seen.nights + 1
    out = sorted(
        groups.values(),
        key=lambda g: (
            _URGENCY.get(g["recurrence"], 1),
            -len(g["jobs"]),
            g["status"] != "failure",
            g["signature"],
        ),
    )
    if past.last is not None:
        for cid, seen in past.seen.items():
            if cid in groups or seen.last != past.last:
                continue
            row = seen.row
            out.append(
                {
                    "cluster": cid,
                    "signature": row["signature"],
                    "class": row["class"],
                    "status": row.get("status", "failure"),
                    "jobs": [],
                    "first_seen": past.first_ts.get(cid, ""),
                    "recurrence": "gone",
                    "root_role": (row.get("root_workers") or [""])[0].split(":", 1)[0],
                    "summary": row.get("summary", ""),
                    "trend": [seen.recent.get(n, 0) for n in nights] + [0],
                    "nights_seen": seen.nights,
                }
            )
    return out

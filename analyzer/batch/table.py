"""The triage table: one row per job, written as ``triage.jsonl`` and
``triage.parquet`` (versioned schema), and the index page beside them."""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path
from typing import Any

from .history import Past, clusters

TRIAGE_SCHEMA_VERSION = 2  # 2: fingerprint_version
# The columns of triage.jsonl / triage.parquet, in order, with their meaning.
COLUMNS: dict[str, str] = {
    "job": "the job's path as found under its root (the root's own name first)",
    "status": "healthy | failure | warning | error (the job could not be analysed)",
    "class": "the failure class (stable id, as in the JSON report); empty for an error",
    "root_workers": "the workers where the failure started",
    "confidence": "0..1, the verdict's confidence",
    "first_failure_ts": "when the failure started (ISO 8601, UTC), or empty",
    "signature": "class | root's role | rule | what failed (an exception's type and the script's innermost frame, "
    "an emitter's file and line, a message's kind, or its masked words): what recurs",
    "cluster": "short id of the signature (the same failure in every job and every night)",
    "fingerprint_version": "how the signature was made (group.FINGERPRINT_VERSION): only equal versions compare",
    "recurrence": "new | recurring (seen the night before) | regressed (seen before, gone a night or more, back) "
    "| empty (no earlier night: --history or --since)",
    "first_seen": "when this signature was first seen failing: carried over from the earlier nights",
    "summary": "the verdict in one sentence",
    "report": "the job's HTML report, relative to the triage folder",
    "error": "why the job could not be analysed (status error)",
}


def arrow_table(rows: list[dict[str, Any]]) -> Any:
    import pyarrow as pa

    schema = pa.schema(
        [
            pa.field("job", pa.string()),
            pa.field("status", pa.string()),
            pa.field("class", pa.string()),
            pa.field("root_workers", pa.list_(pa.string())),
            pa.field("confidence", pa.float64()),
            pa.field("first_failure_ts", pa.timestamp("ms", tz="UTC")),
            pa.field("signature", pa.string()),
            pa.field("cluster", pa.string()),
            pa.field("fingerprint_version", pa.int32()),
            pa.field("recurrence", pa.string()),
            pa.field("first_seen", pa.timestamp("ms", tz="UTC")),
            pa.field("summary", pa.string()),
            pa.field("report", pa.string()),
            pa.field("error", pa.string()),
        ],
        metadata={
            "mwms_doctor.triage_schema_version": str(TRIAGE_SCHEMA_VERSION),
            **{f"doc.{k}": v for k, v in COLUMNS.items()},
        },
    )

    def ts(value: str) -> dt.datetime | None:
        if not value:
            return None
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))

    cols: dict[str, list[Any]] = {f.name: [] for f in schema}
    for r in rows:
        for name in cols:
            cols[name].append(ts(r[name]) if name in ("first_failure_ts", "first_seen") else r[name])
    return pa.table(cols, schema=schema)


def write_outputs(
    rows: list[dict[str, Any]], out: Path, past: Past, interrupted: bool = False, night: str = ""
) -> None:
    import pyarrow.parquet as pq

    from ..report import write_atomic
    from ..report.triage import render_index

    write_atomic(
        out / "triage.jsonl",
        "".join(
            json.dumps({"schema_version": TRIAGE_SCHEMA_VERSION, **r}, sort_keys=True) + "\n" for r in rows
        ),
    )
    tmp = out / ".triage.parquet.tmp"
    pq.write_table(arrow_table(rows), tmp)
    os.replace(tmp, out / "triage.parquet")
    write_atomic(
        out / "index.html",
        render_index(
            rows,
            clusters(rows, past),
            bool(past.count),
            interrupted,
            TRIAGE_SCHEMA_VERSION,
            past.count,
            night,
        ),
    )

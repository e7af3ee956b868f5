"""Columnar twins of per-row helpers give the same answers."""

from __future__ import annotations

import pyarrow as pa
from mwms_doctor.pipeline import load_tables
from mwms_doctor.query import mask_column, mask_message

from .paths import BLIND_RUNS, RUNS


def test_masking_a_column_in_arrow_is_masking_each_message() -> None:
    texts: list[str] = ["", "  \n", "value 0x1F at /a/b/c.py:12 from 10.0.0.1:2222", "ünïcode ٣ digits"]
    for run in [*sorted(RUNS.iterdir()), *sorted(BLIND_RUNS.iterdir())[:10]]:
        if (run / "logs").is_dir():
            tables, _ = load_tables(run / "logs")
            texts += tables.events.column("text").to_pylist()
    assert len(texts) > 1000
    assert mask_column(pa.array(texts)).to_pylist() == [mask_message(t) for t in texts]

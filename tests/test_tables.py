"""docs/tables.md documents every column of every table schema; the helpers
beside the schemas."""

from __future__ import annotations

import re

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mwms_doctor.tables import ENV, EVENTS, RPC, SCHEMA_VERSION, TRACE_EVENTS, WORKERS

from .paths import ROOT


def _documented(section: str) -> list[str]:
    page = (ROOT / "docs" / "tables.md").read_text()
    body = page.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| (\w+) \|", body, re.M)


@pytest.mark.parametrize(
    ("name", "schema"),
    [("events", EVENTS), ("workers", WORKERS), ("rpc", RPC), ("env", ENV), ("trace_events", TRACE_EVENTS)],
)
def test_every_column_is_documented_in_order(name: str, schema) -> None:  # type: ignore[no-untyped-def]
    documented = [c for c in _documented(name) if c != "column"]
    assert documented == schema.names
    assert schema.metadata[b"mwms_doctor.schema_version"] == str(SCHEMA_VERSION).encode()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "a/b", None]),
            st.sampled_from(["worker:0", "worker:1", None]),
            st.integers(0, 3),
        ),
        max_size=40,
    ),
    st.integers(1, 4),
)
def test_first_of_each_is_the_first_row_of_every_distinct_combination(
    rows: list[tuple[str | None, str | None, int]], chunks: int
) -> None:
    """What group_by(...).aggregate([("i", "min")]) gave, in order of first
    appearance, nulls a value of their own, over dictionary and chunked columns."""
    from mwms_doctor.tables import distinct_rows, first_of_each

    cols = list(zip(*rows, strict=True)) if rows else [(), (), ()]
    size = max(1, -(-len(rows) // chunks))
    table = pa.table(
        {
            "source": pa.chunked_array(
                [pa.array(cols[0][i : i + size], pa.string()) for i in range(0, len(rows), size)] or [[]],
                pa.string(),
            ),
            "worker": pa.array(cols[1], pa.string()).dictionary_encode(),
            "n": pa.array(cols[2], pa.int64()),
        }
    )
    want: dict[tuple[object, ...], int] = {}
    for i, r in enumerate(rows):
        want.setdefault(r, i)
    assert first_of_each(table, ["source", "worker", "n"]).to_pylist() == list(want.values())
    assert distinct_rows(table, ["source", "worker", "n"]) == list(want)
    pairs: dict[tuple[object, ...], None] = {}
    for r in rows:
        pairs.setdefault(r[:2], None)
    assert distinct_rows(table, ["source", "worker"]) == list(pairs)

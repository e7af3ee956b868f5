"""docs/tables.md documents every column of every table schema."""

from __future__ import annotations

import re

import pytest
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

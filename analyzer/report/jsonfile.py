"""The JSON report: ``ReportModel.to_json`` with sorted keys, documented by
``report.schema.json`` beside this file (schema_version 1)."""

from __future__ import annotations

import json

from .viewmodel import ReportModel


def render_json(model: ReportModel) -> str:
    return json.dumps(model.to_json(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"

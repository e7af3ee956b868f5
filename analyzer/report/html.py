"""The HTML report: one self-contained file (inline CSS and SVG, no script,
no network), rendered by jinja2 with autoescaping on."""

from __future__ import annotations

from functools import lru_cache

import jinja2

from .viewmodel import ReportModel


@lru_cache(maxsize=1)
def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("mwms_doctor.report", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def render_html(model: ReportModel) -> str:
    return _env().get_template("report.html.j2").render(m=model, v=model.verdict)

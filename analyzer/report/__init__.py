"""Render the view model: one self-contained HTML file, JSON, Markdown."""

from __future__ import annotations

from pathlib import Path

from .viewmodel import ReportModel

FORMATS = ("html", "json", "md")


def render(model: ReportModel, fmt: str) -> str:
    if fmt == "html":
        from .html import render_html

        return render_html(model)
    if fmt == "json":
        from .jsonfile import render_json

        return render_json(model)
    if fmt == "md":
        from .markdown import render_markdown

        return render_markdown(model)
    raise ValueError(f"unknown report format {fmt!r}; choose from {', '.join(FORMATS)}")


def write_reports(model: ReportModel, out_dir: Path, formats: tuple[str, ...] = FORMATS) -> dict[str, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    for fmt in formats:
        path = out_dir / f"{model.job}.{fmt}"
        path.write_text(render(model, fmt), encoding="utf-8")
        written[fmt] = path
    return written

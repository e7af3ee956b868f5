"""The HTML report: one self-contained file (inline CSS and SVG, no script,
no network), rendered by jinja2 with autoescaping on."""

from __future__ import annotations

from functools import lru_cache

import jinja2
from markupsafe import Markup, escape

from .viewmodel import ReportModel, who, worker_name


def inline_code(text: str) -> Markup:
    """Escape ``text``, then show its `backticked` spans as code."""
    parts = str(escape(text)).split("`")
    out = [p if i % 2 == 0 else f"<code>{p}</code>" for i, p in enumerate(parts)]
    if len(parts) % 2 == 0:  # an unpaired backtick stays a backtick
        out[-1] = "`" + parts[-1]
    return Markup("".join(out))


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """The compiled template, kept beside the compiled signatures: compiling
    it costs a small job a tenth of a second. None where no cache can be kept."""
    from ..ingest.multipattern import cache_dir

    folder = cache_dir() / "templates"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return jinja2.FileSystemBytecodeCache(str(folder))


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The templates of every HTML page (a job's report, the triage index)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("mwms_doctor.report", "templates"),
        bytecode_cache=_bytecode_cache(),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["inline_code"] = inline_code
    env.filters["who"] = who
    env.filters["worker_name"] = worker_name
    return env


def render_html(model: ReportModel, back: str = "") -> str:
    """The report page; ``back``: a link to the page it belongs to (a triage's index)."""
    return environment().get_template("report.html.j2").render(m=model, v=model.verdict, back=back)

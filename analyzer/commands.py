"""The commands' bodies: what ``analyze``, ``triage``, ``tables``, ``rules``
and ``explain`` do with their options. ``cli.py`` declares the options (typer);
``console.py`` prints. Each body returns its exit code.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .classes import CLASSES, SETTLE
from .console import EXIT_FAILURE_FOUND, EXIT_OK, ProgressBar, echo, terminal, user_error
from .errors import UserError
from .tasks import listed

if TYPE_CHECKING:
    from .report.viewmodel import ReportModel


class Redaction(str, Enum):
    secrets = "secrets"
    hosts = "hosts"


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    md = "md"


def inside(out: Path, evidence: Path) -> bool:
    """Whether ``out`` is (or would be) inside the evidence folder."""
    if str(evidence) == "-" or not evidence.is_dir():
        return False
    try:
        return out.resolve().is_relative_to(evidence.resolve())
    except OSError:
        return False


@contextmanager
def stdin_as_file(path: Path) -> Iterator[Path]:
    """``-`` is text pasted on stdin (a traceback from a ticket, one worker's
    tail): it is analysed as one file, ``stdin.txt``, of one unnamed worker."""
    if str(path) != "-":
        yield path
        return
    if sys.stdin is None or sys.stdin.isatty():
        raise UserError("-: nothing on stdin", "paste the text, then end it with Ctrl-D, or pipe a file in")
    data = sys.stdin.buffer.read()
    if not data.strip():
        raise UserError("-: stdin is empty", "pipe the log text in: mwms-doctor analyze - < pasted.txt")
    with tempfile.TemporaryDirectory(prefix="mwms-doctor-stdin-") as tmp:
        file = Path(tmp) / "stdin.txt"
        file.write_bytes(data)
        yield file


LOW_CONFIDENCE = 0.5  # below it a verdict is marked low in the terminal


def text_summary(model: ReportModel) -> str:
    """The verdict in a few lines, for the terminal."""
    from .report.viewmodel import worker_name  # loaded already: the model was built with it

    v = model.verdict
    roots = ", ".join(v["root_workers"]) or "-"
    lines = [
        f"{model.job}: {v['status'].upper()}  class={v['class']}  root={roots}  "
        f"confidence={v['confidence']:.0%}{' (low)' if v['confidence'] < LOW_CONFIDENCE else ''}",
    ]
    if v.get("missing"):
        lines += textwrap.wrap(
            "; ".join(v["missing"]), 100, initial_indent="  confidence lowered: ", subsequent_indent="       "
        )
    if v["first_failure_ts"]:
        lines.append(f"  first failure: {v['first_failure_ts']}")
    lines += textwrap.wrap(v["summary"], 100, initial_indent="  why: ", subsequent_indent="       ")
    if v["remedy"]:
        # The first two sentences; the report has the rest.
        sentences = re.split(r"(?<=[.!?])\s+", " ".join(v["remedy"].split()))
        lines += textwrap.wrap(
            " ".join(sentences[:2]), 100, initial_indent="  do:  ", subsequent_indent="       "
        )
    root = model.findings[0] if model.findings and v["finding"] else None
    if root is not None:
        for e in root.evidence[:3]:
            lines.append(f"  evidence: {e.location}  {e.text.splitlines()[0][:110] if e.text else ''}")
        if root.echoes:
            lines.append(
                f"  echoes: {listed(worker_name(e.worker) for e in root.echoes)} (their errors follow from this)"
            )
    for e in model.unexplained[:5]:
        lines.append(f"  first error on {e.worker}: {e.location}  {e.text.splitlines()[0][:100]}")
    return "\n".join(lines)


def analyze_command(
    *,
    path: Path,
    out: Path,
    fmt: OutputFormat,
    name: str | None,
    no_files: bool,
    jobs: int | None,
    profile: bool,
    redact: Redaction,
    no_redact: bool,
    max_expand: int,
    out_inside: bool,
    max_ratio: float,
    fail_on: str | None = None,
    junit: Path | None = None,
    as_one_job: bool = False,
) -> int:
    """``analyze``: read the job, print the verdict, write the reports; the
    exit code. The parameters are the command's options (``cli.analyze``)."""
    from .ingest.source import ReadLimits
    from .pipeline import run_job

    wanted = _fail_on_classes(fail_on)
    if isinstance(wanted, int):
        return wanted

    if no_redact and redact is not Redaction.secrets:
        return user_error(UserError("--no-redact and --redact contradict each other", "pass one of them"))
    if not no_files and not out_inside and inside(out, path):
        return user_error(
            UserError(
                f"{out}: the report folder is inside the evidence folder {path}",
                "pass --out somewhere else (or --out-inside to write there anyway)",
            )
        )

    bar = ProgressBar(sys.stderr)
    try:
        with stdin_as_file(path) as evidence:
            result = run_job(
                evidence,
                None if no_files else out,
                name=name or ("stdin" if evidence != path else None),
                processes=jobs,
                progress=bar,
                redact="none" if no_redact else redact.value,
                read_limits=ReadLimits(max_bytes=max_expand, max_ratio=max_ratio),
                as_one_job=as_one_job,
            )
    except UserError as exc:
        return user_error(exc)
    except OSError as exc:
        return user_error(UserError(f"{exc.filename or path}: {exc.strerror or exc}"))
    finally:
        bar.close()
    if profile:
        for stage, secs in result.timings.items():
            echo(f"mwms-doctor: profile: {stage:14} {secs:8.3f} s", err=True)
        echo(f"mwms-doctor: profile: {'total':14} {sum(result.timings.values()):8.3f} s", err=True)
    model = result.model
    if result.job.facts.several_jobs:
        n = len(result.job.facts.several_jobs)
        echo(
            f"mwms-doctor: warning: {path} holds {n} jobs (subfolders with the same workers each); "
            f"read as one they blend: `mwms-doctor triage {path}` analyses each",
            err=True,
        )
    for s in model.skipped:
        echo(terminal(f"mwms-doctor: warning: {s['source']}: not read: {s['reason']}"), err=True)
    if fmt is OutputFormat.text:
        echo(terminal(text_summary(result.model)))
        for kind, p in sorted(result.outputs.items()):
            echo(f"  {kind:4} report: {p}")
    else:
        from .report import render

        echo(render(model, fmt.value), end="")
        for p in sorted(result.outputs.values()):
            echo(f"mwms-doctor: wrote {p}", err=True)
    if junit is not None:
        _write_junit(junit, [_junit_row(result, "none" if no_redact else redact.value)])
    failed = model.verdict["status"] == "failure" and (wanted is None or model.verdict["class"] in wanted)
    return EXIT_FAILURE_FOUND if failed else EXIT_OK


def _junit_row(result: Any, redact: str) -> dict[str, Any]:
    """One job's verdict as triage's row holds it, for ``--junit``."""
    from .batch.run import job_signature
    from .redact import text_redactor

    v = result.model.verdict
    html = result.outputs.get("html")
    return {
        "job": result.model.job,
        "status": v["status"],
        "class": v["class"],
        "summary": v["summary"],
        "root_workers": list(v["root_workers"]),
        "signature": job_signature(result, text_redactor(redact)),
        "report": str(html) if html else "",
        "error": "",
    }


def _write_junit(path: Path, rows: list[dict[str, Any]]) -> None:
    from .batch.junit import junit_xml
    from .report import write_atomic

    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, junit_xml(rows, name=f"mwms-doctor {'analyze' if len(rows) == 1 else 'triage'}"))
    echo(f"junit: {path}", err=len(rows) == 1)


def _fail_on_classes(fail_on: str | None) -> set[str] | None | int:
    """The classes of ``--fail-on`` (None: any failure), or the exit code of a
    usage error: a typo would otherwise switch a CI gate off silently."""
    if fail_on is None:
        return None
    wanted = {c.strip() for c in fail_on.split(",") if c.strip()}
    unknown = sorted(wanted - set(CLASSES))
    if unknown or not wanted:
        return user_error(
            UserError(
                f"--fail-on: no class {', '.join(unknown) or repr(fail_on)}", f"classes: {', '.join(CLASSES)}"
            )
        )
    return wanted


def triage_command(
    *,
    roots: list[str],
    out: Path,
    jobs: int | None,
    depth: int,
    since: Path | None,
    history: Path | None,
    junit: Path | None,
    night: str | None,
    fail_on: str | None,
    redact: Redaction,
    no_redact: bool,
    scheduler: str | None,
) -> int:
    """``triage``: many jobs through the one-job pipeline, one page and one table."""
    from .batch import clusters, is_url, run_triage
    from .console import JobsBar

    for root in roots:
        if not is_url(root) and not Path(root).exists():
            return user_error(
                UserError(f"{root}: no such file or directory", "pass folders whose subfolders are jobs")
            )
    if since is not None and not (since / "triage.jsonl" if since.is_dir() else since).is_file():
        return user_error(
            UserError(f"{since}: no triage.jsonl there", "pass the --out folder of an earlier triage")
        )
    if no_redact and redact is not Redaction.secrets:
        return user_error(UserError("--no-redact and --redact contradict each other", "pass one of them"))
    wanted = _fail_on_classes(fail_on)
    if isinstance(wanted, int):
        return wanted
    if since is not None and history is not None:
        return user_error(
            UserError("--since and --history contradict each other", "--history holds every earlier night")
        )
    when = None
    if night is not None:
        try:
            when = dt.datetime.fromisoformat(night.replace("Z", "+00:00"))
        except ValueError:
            return user_error(UserError(f"--night {night}: not an ISO 8601 date or time", "e.g. 2026-11-24"))
        if when.tzinfo is None:
            when = when.replace(tzinfo=dt.timezone.utc)
    if history is not None and history.exists() and not history.is_dir():
        return user_error(UserError(f"{history}: not a folder", "pass the folder that keeps the nights"))
    bar = JobsBar(sys.stderr)
    try:
        rows = run_triage(
            [r if is_url(r) else Path(r) for r in roots],
            out,
            depth,
            jobs,
            since,
            "none" if no_redact else redact.value,
            progress=bar,
            scheduler=scheduler,
            history=history,
            night=when,
        )
    finally:
        bar.close()
    if not rows:
        return user_error(
            UserError(
                f"no job found under {', '.join(map(str, roots))}",
                "each subfolder of a root is a job; try --depth",
            )
        )
    by_class: dict[str, list[dict[str, object]]] = {}
    for g in clusters(rows):
        by_class.setdefault(str(g["class"]), []).append(g)
    failed = [r for r in rows if r["status"] == "failure"]
    echo(
        f"{len(rows)} jobs: {len(failed)} failed, {sum(r['status'] == 'warning' for r in rows)} warnings, "
        f"{sum(r['status'] == 'healthy' for r in rows)} healthy, "
        f"{sum(r['status'] == 'error' for r in rows)} could not be analysed"
    )
    for cls, groups in sorted(by_class.items(), key=lambda kv: -sum(len(g["jobs"]) for g in kv[1])):  # type: ignore[arg-type, misc]
        n = sum(len(g["jobs"]) for g in groups)  # type: ignore[arg-type, misc]
        echo(terminal(f"  {cls:22} {n:5} job(s)"))
        for g in groups[:3]:
            echo(terminal(f"      {len(g['jobs']):5}  {str(g['signature'])[:110]}"))  # type: ignore[arg-type]
    echo(f"index: {out / 'index.html'}")
    if junit is not None:
        _write_junit(junit, rows)
    hit = [r for r in failed if wanted is None or r["class"] in wanted]
    return EXIT_FAILURE_FOUND if hit else EXIT_OK


def tables_command(*, path: Path, out: Path, redact: Redaction, no_redact: bool) -> int:
    """``tables``: every table of the job as Parquet."""
    from .pipeline import load_tables, write_tables
    from .redact import text_redactor

    policy = "none" if no_redact else redact.value
    shown = text_redactor(policy)
    try:
        tabs, clock = load_tables(path)
        written = write_tables(tabs, clock, out, policy)
    except UserError as exc:
        return user_error(exc)
    except OSError as exc:
        return user_error(UserError(f"{exc.filename or path}: {exc.strerror or exc}"))
    for source, why in tabs.skipped:
        echo(terminal(f"mwms-doctor: warning: {shown(source)}: not read: {shown(why)}"), err=True)
    for name, p in written.items():
        rows = tabs.get(name)
        echo(f"{name:13} {'' if rows is None else f'{rows.num_rows:>9} rows'}  {p}")
    absent = [n for n in ("rpc", "env", "trace_events") if tabs.get(n) is None]
    if absent:
        echo(f"no evidence for: {', '.join(absent)} (not written)")
    return EXIT_OK


def preflight_command(
    tf_config: str | None, timeout: float, out: Path | None, allreduce_timeout: float | None = None
) -> int:
    """``preflight``: this worker's pre-flight check (``preflight.py``); with
    ``allreduce_timeout``, the tiny all-reduce after it."""
    import json
    import os

    from .preflight import html, markdown, redacted, run, with_allreduce

    text = tf_config if tf_config is not None else os.environ.get("TF_CONFIG")
    if text is not None and not text.lstrip().startswith("{"):
        try:
            text = Path(text).read_text(encoding="utf-8")
        except OSError as exc:
            return user_error(
                UserError(f"{tf_config}: cannot read the TF_CONFIG file ({exc.strerror or exc})")
            )
    result = run(text, timeout)
    if allreduce_timeout is not None:
        result = with_allreduce(result, text, allreduce_timeout)
    result = redacted(result)
    echo(markdown(result), end="")
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        name = result.task.replace(":", "-").replace("?", "unknown")
        (out / f"preflight-{name}.json").write_text(json.dumps(result.as_json(), indent=2), encoding="utf-8")
        (out / f"preflight-{name}.md").write_text(markdown(result), encoding="utf-8")
        (out / f"preflight-{name}.html").write_text(html(result), encoding="utf-8")
    return EXIT_FAILURE_FOUND if result.failed else EXIT_OK


def rules_command(fmt: str) -> int:
    """``rules``: the rule catalogue, a line a rule, or the docs' rules page."""
    from .registry import load_rules, rule_doc, rules_page

    if fmt == "md":
        echo(rules_page(), end="")
        return EXIT_OK
    if fmt == "json":
        import json

        echo(json.dumps([_rule_json(r, rule_doc(r)) for r in load_rules()], indent=2))
        return EXIT_OK
    if fmt != "text":
        return user_error(UserError(f"unknown format {fmt!r}", "use text, md or json"))
    for rule in load_rules():
        doc = rule_doc(rule)
        echo(f"{rule.CODE}  {rule.NAME:28} {rule.CLASS:20} {doc.title}")
    return EXIT_OK


def _rule_json(rule: Any, doc: Any) -> dict[str, Any]:
    """One rule as ``rules -f json`` lists it: what it declares and its docs."""
    return {
        "code": rule.CODE,
        "name": rule.NAME,
        "class": rule.CLASS,
        "severity": rule.SEVERITY,
        "precedence": rule.PRECEDENCE,
        "requires": list(rule.REQUIRES),
        "defers_to": list(rule.DEFERS_TO),
        "title": doc.title,
        "what_it_means": doc.sections.get("What it means", ""),
        "why_it_happens": doc.sections.get("Why it happens", ""),
        "what_to_do": doc.sections.get("What to do", ""),
    }


def _explain_class(cls: str) -> int:
    """``explain <class>``: what a verdict class means, what settles it, and
    the rules that conclude it, each with what to do."""
    from .registry import load_rules, rule_doc

    echo(f"{cls}: {CLASSES[cls]}")
    if SETTLE.get(cls):
        echo(f"what settles it: {SETTLE[cls]}")
    rules = [r for r in load_rules() if cls == r.CLASS]
    for r in rules:
        doc = rule_doc(r)
        echo(f"\n{r.CODE} {r.NAME}: {doc.title}\n{'-' * (len(r.CODE) + len(r.NAME) + 1)}")
        echo(f"What it means: {doc.meaning}\n\nWhat to do: {doc.remedy}")
    if not rules:
        echo(
            "\nNo rule concludes this class by itself: it is the verdict when nothing else explains the evidence."
        )
    return EXIT_OK


def explain_command(code: str) -> int:
    """``explain``: a rule's documentation, or a verdict class's."""
    from .registry import REQUIRED_SECTIONS, find_rule, load_rules, rule_doc

    rule = find_rule(code)
    if rule is None and code.strip().lower() in CLASSES:
        return _explain_class(code.strip().lower())
    if rule is None:
        known = ", ".join(r.CODE for r in load_rules())
        return user_error(
            UserError(f"no rule or class {code!r}", f"known rules: {known}; classes: {', '.join(CLASSES)}")
        )
    doc = rule_doc(rule)
    echo(f"{rule.CODE} {rule.NAME}: {doc.title}")
    echo(
        f"class: {rule.CLASS}   severity: {rule.SEVERITY}   reads: {', '.join(rule.REQUIRES)}   "
        f"precedence: {rule.PRECEDENCE}"
        + (f"   defers to: {', '.join(rule.DEFERS_TO)}" if rule.DEFERS_TO else "")
    )
    for section in REQUIRED_SECTIONS:
        echo(f"\n{section}\n{'-' * len(section)}\n{doc.sections.get(section, '')}")
    return EXIT_OK

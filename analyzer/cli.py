"""The ``mwms-doctor`` command line: every command and option, declared once
(typer). The bodies are in ``commands.py``; the console script's entry, with
its fast path for a plain ``analyze``, is ``entry.py``, whose table of
``analyze``'s options (``fast_options.py``) is generated from the
declarations here (``fast_options_source``) and checked by a test.
"""

from __future__ import annotations

import inspect
import json
from enum import Enum
from pathlib import Path
from typing import Annotated

import typer

from . import __version__, fastparse
from .commands import (
    OutputFormat,
    Redaction,
    analyze_command,
    explain_command,
    rules_command,
    tables_command,
    triage_command,
)
from .fastparse import size_bytes


def _argument_type(self: typer.core.TyperArgument, ctx: object) -> str | None:
    """An argument given a metavar (PATH, ROOT...) shows that word alone, as
    options do, not the metavar beside its Python type (``ROOT... <list[str]>``)."""
    return None if self.metavar else typer.core.TyperArgument.display_type(self, ctx)  # type: ignore[arg-type]


if hasattr(typer.core, "TyperArgument") and hasattr(typer.core.TyperArgument, "display_type_rich"):
    typer.core.TyperArgument.display_type_rich = _argument_type  # type: ignore[assignment, method-assign]

app = typer.Typer(
    name="mwms-doctor",
    help="Diagnose failed TensorFlow MultiWorkerMirroredStrategy jobs from their logs.\n\n"
    "Exit codes: 0 no failure found; 1 a failure found; 2 usage or input error; "
    "3 internal error (a bug: a crash file holds the traceback).",
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,  # plain help: option names and metavars, no <bool> or <int range>
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mwms-doctor {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    pass


@app.command("analyze")
def analyze_cli(
    path: Annotated[
        Path,
        typer.Argument(
            metavar="PATH",
            help="The job's evidence: a folder of worker logs, one file of any name, or - to read "
            "pasted text from stdin.",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option("--out", "-o", metavar="DIR", help="Folder for the HTML, JSON and Markdown reports."),
    ] = Path("reports"),
    fmt: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="What to print on stdout.")
    ] = OutputFormat.text,
    name: Annotated[
        str | None, typer.Option(metavar="NAME", help="Job name for the report files (default: from PATH).")
    ] = None,
    no_files: Annotated[bool, typer.Option("--no-files", help="Print only; write no report files.")] = False,
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", "-j", metavar="N", min=1, help="Processes reading the logs (default: one per core)."
        ),
    ] = None,
    profile: Annotated[
        bool, typer.Option("--profile", help="Print the time each stage took, on stderr.")
    ] = False,
    redact: Annotated[
        Redaction,
        typer.Option(
            "--redact",
            help="secrets: mask tokens, passwords and keys in every output (the default); "
            "hosts: also host names, IP addresses and user names, for tickets that leave the company.",
        ),
    ] = Redaction.secrets,
    no_redact: Annotated[
        bool, typer.Option("--no-redact", help="Show log text as it is, secrets included.")
    ] = False,
    fail_on: Annotated[
        str | None,
        typer.Option(
            "--fail-on",
            metavar="CLASSES",
            help="Classes that make the exit code 1, comma-separated (default: any failure); for CI gates.",
        ),
    ] = None,
    junit: Annotated[
        Path | None,
        typer.Option(
            "--junit",
            metavar="FILE",
            help="Also write JUnit XML here: the job as one test case, for CI test views.",
        ),
    ] = None,
    max_expand: Annotated[
        int,
        typer.Option(
            "--max-expand",
            metavar="SIZE",
            parser=size_bytes,
            show_default=False,
            help="How far one compressed file may expand: 16GiB (the default), 16G, 512MiB or bytes.",
        ),
    ] = 16 << 30,
    out_inside: Annotated[
        bool, typer.Option("--out-inside", help="Allow --out inside the evidence folder.")
    ] = False,
    as_one_job: Annotated[
        bool,
        typer.Option(
            "--as-one-job",
            help="Read a folder that seems to hold several jobs as one job (by default it is refused: use triage).",
        ),
    ] = False,
    max_ratio: Annotated[
        float,
        typer.Option(
            "--max-ratio",
            metavar="RATIO",
            min=1.0,
            help="Compression ratio past which a file is a decompression bomb.",
        ),
    ] = 200.0,
) -> None:
    """Read every worker's logs, find what failed first and why, write reports."""
    raise typer.Exit(analyze_command(**locals()))


@app.command("triage")
def triage_cli(
    roots: Annotated[
        list[str],
        typer.Argument(
            metavar="ROOT",
            help="Folders whose subfolders are jobs (each immediate subfolder is one job), or text "
            "files listing job folders, one a line.",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out", "-o", metavar="DIR", help="Folder for index.html, triage.jsonl/.parquet and jobs/."
        ),
    ] = Path("triage"),
    jobs: Annotated[
        int | None,
        typer.Option(
            "--jobs", "-j", metavar="N", min=1, help="Jobs analysed at once (default: one per core)."
        ),
    ] = None,
    depth: Annotated[
        int,
        typer.Option(
            "--depth", metavar="N", min=1, help="How deep jobs are: 2 for ROOT/date/job/, and so on."
        ),
    ] = 1,
    since: Annotated[
        Path | None,
        typer.Option(
            "--since",
            metavar="DIR",
            help="A previous triage's folder: mark each failure new, recurring or gone.",
        ),
    ] = None,
    history: Annotated[
        Path | None,
        typer.Option(
            "--history",
            metavar="DIR",
            help="A folder that keeps every night's rows (a Parquet dataset, one partition a night): "
            "each failure is new, recurring, regressed or gone against all earlier nights; this night is added.",
        ),
    ] = None,
    junit: Annotated[
        Path | None,
        typer.Option(
            "--junit",
            metavar="FILE",
            help="Also write JUnit XML here: one test case per job, for CI test views.",
        ),
    ] = None,
    night: Annotated[
        str | None,
        typer.Option(
            "--night",
            metavar="WHEN",
            help="This night's date or time in ISO 8601 (2026-11-24 or 2026-11-24T02:00Z; default: now, UTC). "
            "A re-run with the same night replaces it in --history.",
        ),
    ] = None,
    fail_on: Annotated[
        str | None,
        typer.Option(
            "--fail-on",
            metavar="CLASSES",
            help="Classes that make the exit code 1, comma-separated (default: any failure).",
        ),
    ] = None,
    redact: Annotated[
        Redaction, typer.Option("--redact", help="secrets (default) or hosts.")
    ] = Redaction.secrets,
    no_redact: Annotated[bool, typer.Option("--no-redact", help="Show log text as it is.")] = False,
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler",
            metavar="URL",
            envvar="MWMS_DOCTOR_SCHEDULER",
            help="A dask.distributed scheduler (tcp://host:8786) to run the jobs on, instead of local processes.",
        ),
    ] = None,
) -> None:
    """Triage many failed jobs at once: one row per job, grouped by recurring cause, in one page.

    Each job is analysed exactly as `analyze` would, its reports written under
    OUT/jobs/. Exit code: 0 when no job failed (or none with a class in
    --fail-on), 1 when one did, 2 for usage or input errors."""
    raise typer.Exit(triage_command(**locals()))


@app.command("tables")
def tables_cli(
    path: Annotated[
        Path,
        typer.Argument(metavar="PATH", help="The job's evidence: a folder of worker logs (or one log file)."),
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", metavar="DIR", help="Folder for the Parquet files.")
    ] = Path("reports/tables"),
    redact: Annotated[
        Redaction, typer.Option("--redact", help="secrets (the default) or hosts: as for analyze.")
    ] = Redaction.secrets,
    no_redact: Annotated[
        bool, typer.Option("--no-redact", help="Write log text as it is, secrets included.")
    ] = False,
) -> None:
    """Write the job's tables (events, workers, rpc, env, trace_events) as Parquet.

    Query them with DuckDB (``SELECT * FROM 'DIR/events.parquet'``) or pandas
    (``pd.read_parquet``); docs/tables.md documents every column."""
    raise typer.Exit(tables_command(**locals()))


@app.command("preflight")
def preflight_cli(
    tf_config: Annotated[
        str | None,
        typer.Option(
            "--tf-config",
            metavar="JSON|FILE",
            help="This worker's TF_CONFIG, as JSON or a file holding it (default: the TF_CONFIG variable).",
        ),
    ] = None,
    timeout: Annotated[
        float, typer.Option("--timeout", metavar="SECONDS", help="How long to wait for the other tasks.")
    ] = 30.0,
    out: Annotated[
        Path | None,
        typer.Option("--out", "-o", metavar="DIR", help="Write preflight-<task>.json, .md and .html here."),
    ] = None,
    allreduce: Annotated[
        bool,
        typer.Option(
            "--allreduce/--no-allreduce",
            help="When the checks pass, run a tiny all-reduce over the real cluster (needs TensorFlow here).",
        ),
    ] = True,
    allreduce_timeout: Annotated[
        float,
        typer.Option("--allreduce-timeout", metavar="SECONDS", help="How long the all-reduce may take."),
    ] = 120.0,
) -> None:
    """Check a job before it starts: run on every worker at once, with its TF_CONFIG.

    Each listens on its task's port, reaches every other task, and compares
    clusters, identities, versions and clocks; then all-reduce one number over
    the real cluster. Exit 0 ready, 1 something would break the job, 2 usage error."""
    from .commands import preflight_command

    raise typer.Exit(preflight_command(tf_config, timeout, out, allreduce_timeout if allreduce else None))


@app.command("rules")
def rules_cli(
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            "-f",
            metavar="text|md|json",
            help="text: one line per rule; md: the docs' rules page; json: every rule's declarations and docs.",
        ),
    ] = "text",
) -> None:
    """List the rule catalogue."""
    raise typer.Exit(rules_command(fmt))


@app.command("explain")
def explain_cli(
    code: Annotated[
        str,
        typer.Argument(
            metavar="CODE",
            help="A rule code (HS001) or name (worker-never-connected), or a verdict class (oom).",
        ),
    ],
) -> None:
    """Print a rule's documentation, or what a verdict class means and the rules that conclude it."""
    raise typer.Exit(explain_command(code))


# --- the console script's fast path, generated from the declarations above -------------


def fast_options_source() -> str:
    """``fast_options.py``: ``analyze``'s options as the console script reads
    them without typer, from the typer declarations (what each spelling sets,
    how its value is read, the defaults)."""
    import typing

    command = typer.main.get_command(app).get_command(None, "analyze")  # type: ignore[attr-defined]
    hints = typing.get_type_hints(analyze_cli, include_extras=True)
    params = inspect.signature(analyze_cli).parameters
    lines = [
        '"""``mwms-doctor analyze``\'s options, for the console script\'s fast path (``entry.py``).',
        "",
        "Generated from the typer declarations in ``cli.py`` by ``python scripts/fast_options.py``;",
        "``tests/test_entry.py`` fails when this file is not what the declarations give. Do not edit.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "from pathlib import Path",
        "",
        "from .commands import OutputFormat, Redaction",
        "from .fastparse import Opt, at_least_float, at_least_int, size_bytes",
        "",
        "OPTIONS: dict[str, Opt] = {",
    ]
    defaults: list[str] = []
    for p in command.params:
        if p.param_type_name != "option":
            continue
        base, info = typing.get_args(hints[p.name])[:2]
        base = next((t for t in typing.get_args(base) if t is not type(None)), base)  # X | None: X
        low = getattr(info, "min", None)
        if p.is_flag:
            convert = "None"
        elif getattr(info, "parser", None) is not None:
            convert = info.parser.__name__  # a reader of fastparse's own (size_bytes)
            if getattr(fastparse, convert, None) is not info.parser:
                raise TypeError(f"analyze --{p.name}: its parser must be one of fastparse's")
        elif isinstance(base, type) and issubclass(base, Enum):
            convert = base.__name__
        elif base is int:
            convert = f"at_least_int({low!r})" if low is not None else "at_least_int(-(2**63))"
        elif base is float:
            convert = f"at_least_float({low!r})" if low is not None else "at_least_float(float('-inf'))"
        elif base is Path:
            convert = "Path"
        elif base is str:
            convert = "str"
        else:
            raise TypeError(f"analyze --{p.name}: no fast reading of {base!r}")
        for decl in [*p.opts, *p.secondary_opts]:
            lines.append(f"    {json.dumps(decl)}: Opt({json.dumps(p.name)}, {convert}),")
        default = params[p.name].default
        if isinstance(default, Enum):
            shown = f"{type(default).__name__}.{default.name}"
        elif isinstance(default, Path):
            shown = f"Path({json.dumps(str(default))})"
        else:
            shown = json.dumps(default) if isinstance(default, str) else repr(default)
        defaults.append(f"    {json.dumps(p.name)}: {shown},")
    lines += ["}", "", "DEFAULTS: dict[str, object] = {", *defaults, "}"]
    return "\n".join(lines) + "\n"

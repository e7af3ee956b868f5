"""The ``mwms-doctor`` command line.

Exit codes: 0 no failure found, 1 failure(s) found, 2 bad input or usage,
3 an internal error (a bug in this tool: one line on stderr names a crash
file holding the traceback).
Findings go to stdout; progress and warnings to stderr, so that
``mwms-doctor analyze JOB --format json | jq`` works.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer

from . import __version__
from .console import (
    EXIT_FAILURE_FOUND,
    EXIT_OK,
    OutputFormat,
    Redaction,
    echo,
    internal_error,
    run_analyze,
    terminal,
    user_error,
)
from .errors import UserError

app = typer.Typer(
    name="mwms-doctor",
    help="Diagnose failed TensorFlow MultiWorkerMirroredStrategy jobs from their logs.\n\n"
    "Exit codes: 0 no failure found; 1 a failure found; 2 usage or input error; "
    "3 internal error (a bug: a crash file holds the traceback).",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _fail(exc: UserError) -> typer.Exit:
    return typer.Exit(user_error(exc))


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


@app.command()
def analyze(
    path: Annotated[
        Path,
        typer.Argument(
            help="The job's evidence: a folder of worker logs, one file of any name, or - to read "
            "pasted text from stdin."
        ),
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for the HTML, JSON and Markdown reports.")
    ] = Path("reports"),
    fmt: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="What to print on stdout.")
    ] = OutputFormat.text,
    name: Annotated[
        str | None, typer.Option(help="Job name for the report files (default: from PATH).")
    ] = None,
    no_files: Annotated[bool, typer.Option("--no-files", help="Print only; write no report files.")] = False,
    jobs: Annotated[
        int | None,
        typer.Option("--jobs", "-j", min=1, help="Processes reading the logs (default: one per core)."),
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
    max_expand: Annotated[
        int,
        typer.Option("--max-expand", min=1, help="Bytes one compressed file may expand to (default 16 GiB)."),
    ] = 16 << 30,
    out_inside: Annotated[
        bool, typer.Option("--out-inside", help="Allow --out inside the evidence folder.")
    ] = False,
    max_ratio: Annotated[
        float,
        typer.Option(
            "--max-ratio", min=1.0, help="Compression ratio past which a file is a decompression bomb."
        ),
    ] = 200.0,
) -> None:
    """Read every worker's logs, find what failed first and why, write reports."""
    raise typer.Exit(
        run_analyze(
            path=path,
            out=out,
            fmt=fmt,
            name=name,
            no_files=no_files,
            jobs=jobs,
            profile=profile,
            redact=redact,
            no_redact=no_redact,
            max_expand=max_expand,
            out_inside=out_inside,
            max_ratio=max_ratio,
        )
    )


@app.command()
def triage(
    roots: Annotated[
        list[str],
        typer.Argument(
            help="Folders whose subfolders are jobs (each immediate subfolder is one job), or text "
            "files listing job folders, one a line."
        ),
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", help="Folder for index.html, triage.jsonl/.parquet and jobs/.")
    ] = Path("triage"),
    jobs: Annotated[
        int | None, typer.Option("--jobs", "-j", min=1, help="Jobs analysed at once (default: one per core).")
    ] = None,
    depth: Annotated[
        int, typer.Option("--depth", min=1, help="How deep jobs are: 2 for ROOT/date/job/, and so on.")
    ] = 1,
    since: Annotated[
        Path | None,
        typer.Option("--since", help="A previous triage's folder: mark each failure new, recurring or gone."),
    ] = None,
    fail_on: Annotated[
        str | None,
        typer.Option(
            "--fail-on", help="Classes that make the exit code 1, comma-separated (default: any failure)."
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
            envvar="MWMS_DOCTOR_SCHEDULER",
            help="A dask.distributed scheduler (tcp://host:8786) to run the jobs on, instead of local processes.",
        ),
    ] = None,
) -> None:
    """Triage many failed jobs at once: one row per job, grouped by recurring cause, in one page.

    Each job is analysed exactly as `analyze` would, its reports written under
    OUT/jobs/. Exit code: 0 when no job failed (or none with a class in
    --fail-on), 1 when one did, 2 for usage or input errors."""
    from .batch import clusters, is_url, run_triage

    for root in roots:
        if not is_url(root) and not Path(root).exists():
            raise _fail(
                UserError(f"{root}: no such file or directory", "pass folders whose subfolders are jobs")
            )
    if since is not None and not (since / "triage.jsonl" if since.is_dir() else since).is_file():
        raise _fail(
            UserError(f"{since}: no triage.jsonl there", "pass the --out folder of an earlier triage")
        )
    if no_redact and redact is not Redaction.secrets:
        raise _fail(UserError("--no-redact and --redact contradict each other", "pass one of them"))
    bar = _JobsBar(sys.stderr)
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
        )
    finally:
        bar.close()
    if not rows:
        raise _fail(
            UserError(
                f"no job found under {', '.join(map(str, roots))}",
                "each subfolder of a root is a job; try --depth",
            )
        )
    by_class: dict[str, list[dict[str, object]]] = {}
    for g in clusters(rows):
        by_class.setdefault(str(g["class"]), []).append(g)
    failed = [r for r in rows if r["status"] == "failure"]
    typer.echo(
        f"{len(rows)} jobs: {len(failed)} failed, {sum(r['status'] == 'healthy' for r in rows)} healthy, "
        f"{sum(r['status'] == 'error' for r in rows)} could not be analysed"
    )
    for cls, groups in sorted(by_class.items(), key=lambda kv: -sum(len(g["jobs"]) for g in kv[1])):  # type: ignore[arg-type, misc]
        n = sum(len(g["jobs"]) for g in groups)  # type: ignore[arg-type, misc]
        typer.echo(terminal(f"  {cls:22} {n:5} job(s)"))
        for g in groups[:3]:
            typer.echo(terminal(f"      {len(g['jobs']):5}  {str(g['signature'])[:110]}"))  # type: ignore[arg-type]
    typer.echo(f"index: {out / 'index.html'}")
    wanted = {c.strip() for c in fail_on.split(",")} if fail_on else None
    hit = [r for r in failed if wanted is None or r["class"] in wanted]
    raise typer.Exit(EXIT_FAILURE_FOUND if hit else EXIT_OK)


class _JobsBar:
    """On a terminal, a rich progress bar (jobs done/total, rate, time left);
    otherwise a plain line every tenth of the jobs."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = hasattr(stream, "isatty") and stream.isatty()
        self.start = time.monotonic()
        self.step = 0
        self.bar: Any = None
        self.task: Any = None

    def __call__(self, done: int, total: int) -> None:
        if self.tty:
            if self.bar is None:
                from rich.console import Console
                from rich.progress import (
                    BarColumn,
                    MofNCompleteColumn,
                    Progress,
                    TextColumn,
                    TimeRemainingColumn,
                )

                self.bar = Progress(
                    TextColumn("triage"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TextColumn("{task.fields[rate]:.1f} jobs/s"),
                    TimeRemainingColumn(),
                    console=Console(file=self.stream),
                    transient=True,
                )
                self.bar.start()
                self.task = self.bar.add_task("jobs", total=total, rate=0.0)
            rate = done / max(time.monotonic() - self.start, 1e-9)
            self.bar.update(self.task, completed=done, rate=rate)
            return
        if done * 10 // max(total, 1) > self.step or done == total:
            self.step = done * 10 // max(total, 1)
            rate = done / max(time.monotonic() - self.start, 1e-9)
            self.stream.write(f"triage: {done}/{total} jobs, {rate:.1f} jobs/s\n")
            self.stream.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()


@app.command()
def tables(
    path: Annotated[
        Path, typer.Argument(help="The job's evidence: a folder of worker logs (or one log file).")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Folder for the Parquet files.")] = Path(
        "reports/tables"
    ),
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
    from .pipeline import load_tables, write_tables
    from .redact import text_redactor

    policy = "none" if no_redact else redact.value
    shown = text_redactor(policy)
    try:
        tabs, clock = load_tables(path)
        written = write_tables(tabs, clock, out, policy)
    except UserError as exc:
        raise _fail(exc) from None
    except OSError as exc:
        raise _fail(UserError(f"{exc.filename or path}: {exc.strerror or exc}")) from None
    for source, why in tabs.skipped:
        typer.echo(terminal(f"mwms-doctor: warning: {shown(source)}: not read: {shown(why)}"), err=True)
    for name, p in written.items():
        rows = tabs.get(name)
        typer.echo(f"{name:13} {'' if rows is None else f'{rows.num_rows:>9} rows'}  {p}")
    absent = [n for n in ("rpc", "env", "trace_events") if tabs.get(n) is None]
    if absent:
        typer.echo(f"no evidence for: {', '.join(absent)} (not written)")


@app.command("rules")
def list_rules(
    fmt: Annotated[
        str, typer.Option("--format", "-f", help="text: one line per rule; md: the docs' rules page.")
    ] = "text",
) -> None:
    """List the rule catalogue."""
    if fmt == "md":
        from .registry import rules_page

        typer.echo(rules_page(), nl=False)
        return
    if fmt != "text":
        raise _fail(UserError(f"unknown format {fmt!r}", "use text or md"))
    from .registry import load_rules, rule_doc

    for rule in load_rules():
        doc = rule_doc(rule)
        typer.echo(f"{rule.CODE}  {rule.NAME:28} {rule.CLASS:20} {doc.title}")


@app.command()
def explain(
    code: Annotated[str, typer.Argument(help="A rule code (HS001) or name (worker-never-connected).")],
) -> None:
    """Print a rule's documentation."""
    from .registry import REQUIRED_SECTIONS, find_rule, load_rules, rule_doc

    rule = find_rule(code)
    if rule is None:
        known = ", ".join(r.CODE for r in load_rules())
        raise _fail(UserError(f"no rule {code!r}", f"known rules: {known}"))
    doc = rule_doc(rule)
    typer.echo(f"{rule.CODE} {rule.NAME}: {doc.title}")
    typer.echo(f"class: {rule.CLASS}   severity: {rule.SEVERITY}   reads: {', '.join(rule.REQUIRES)}")
    for section in REQUIRED_SECTIONS:
        typer.echo(f"\n{section}\n{'-' * len(section)}\n{doc.sections.get(section, '')}")


def main() -> None:
    """The typer app, with an internal error turned into exit 3, a one-line
    message and a crash file, never a traceback on the terminal. The console
    script enters at :func:`mwms_doctor.console.main`, which comes here for
    everything but a plain ``analyze``."""
    try:
        rv = app(standalone_mode=False)
    except (KeyboardInterrupt, typer.Abort):
        echo("mwms-doctor: interrupted (a triage writes the jobs it finished)", err=True)
        sys.exit(130)
    except Exception as exc:  # noqa: BLE001 - whatever the bug, the user gets one line and exit 3
        if hasattr(exc, "exit_code") and hasattr(exc, "show"):  # click's usage errors: exit 2
            exc.show()
            sys.exit(exc.exit_code)
        sys.exit(internal_error(exc))
    sys.exit(rv if isinstance(rv, int) else EXIT_OK)


if __name__ == "__main__":
    main()

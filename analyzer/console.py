"""The console script's entry, and the ``analyze`` command's body, free of typer.

``mwms-doctor analyze JOB`` is the command people run most, often on a small
job, and start-up is most of its time there. Typer (with the pydantic it
builds every option's converter with) costs about as much as the analysis of
a small job, so :func:`main` first tries :func:`parse_analyze`, a strict
parser for the plain spellings of ``analyze``'s options. Anything it does not
fully understand (``--help``, a typo, a bad value, another command) goes to
the typer app in :mod:`mwms_doctor.cli`, which prints the usual help and
usage errors. Both paths run :func:`run_analyze`. ``tests/test_console.py``
holds the parser to typer's declarations: same options, same defaults, same
values for any command line the parser accepts.
"""

from __future__ import annotations

import re
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from . import __version__
from .errors import UserError

if TYPE_CHECKING:
    from .report.viewmodel import ReportModel

EXIT_OK, EXIT_FAILURE_FOUND, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


class Redaction(str, Enum):
    secrets = "secrets"
    hosts = "hosts"


class OutputFormat(str, Enum):
    text = "text"
    json = "json"
    md = "md"


# Escape sequences a log may hold (colours, cursor moves, OSC titles and
# hyperlinks, a terminal's own reports): never passed to the user's terminal.
_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC
    r"|\x1b[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC
    r"|\x1b[@-Z\\-_]?"  # two-byte escapes, a lone ESC
    r"|[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]"  # other C0/C1 controls
)


def terminal(text: str) -> str:
    """``text`` safe to print: escape sequences and control characters removed
    (newlines and tabs kept)."""
    return _CONTROL.sub("", text)


def echo(text: str, err: bool = False, end: str = "\n") -> None:
    """One line to stdout (or stderr), flushed; characters the stream cannot
    encode are written as escapes rather than failing. A reader that went away
    (``| head``, ``| true``) ends what is said there, not the analysis: its
    reports are still written and its exit code is still the verdict's."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:
        return
    try:
        try:
            stream.write(text + end)
        except UnicodeEncodeError:
            enc = getattr(stream, "encoding", None) or "ascii"
            stream.write((text + end).encode(enc, "backslashreplace").decode(enc))
        stream.flush()
    except BrokenPipeError:
        import os

        # Nothing more goes there, and the interpreter's last flush must not fail either.
        gone = open(os.devnull, "w")  # noqa: SIM115 - it lives as long as the process
        if err:
            sys.stderr = gone
        else:
            sys.stdout = gone


class ProgressBar:
    """Bytes and files read, on a terminal's stderr, for reads that take more
    than a second; silent when stderr is not a terminal."""

    def __init__(self, stream: TextIO, delay: float = 1.0, force: bool = False) -> None:
        self.stream = stream
        self.enabled = force or (hasattr(stream, "isatty") and stream.isatty())
        self.start = time.monotonic()
        self.delay = delay
        self.drawn_at = 0.0
        self.shown = False

    def __call__(self, done: int, total: int, files: int, n_files: int) -> None:
        now = time.monotonic()
        if not self.enabled or now - self.start < self.delay or (now - self.drawn_at < 0.1 and done < total):
            return
        self.drawn_at = now
        frac = done / total if total else 1.0
        width = 30
        filled = int(frac * width)
        rate = done / max(now - self.start, 1e-9)
        self.stream.write(
            f"\rreading logs [{'#' * filled}{'.' * (width - filled)}] {frac:4.0%}  "
            f"{done / 1e6:,.0f}/{total / 1e6:,.0f} MB  {files}/{n_files} files  {rate / 1e6:,.0f} MB/s "
        )
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r" + " " * 100 + "\r")
            self.stream.flush()
            self.shown = False


def user_error(exc: UserError) -> int:
    """Print a usage or input error the way every command does; its exit code."""
    echo(terminal(f"mwms-doctor: error: {exc.message}"), err=True)
    if exc.hint:
        echo(terminal(f"  hint: {exc.hint}"), err=True)
    return EXIT_BAD_INPUT


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


def text_summary(model: ReportModel) -> str:
    """The verdict in a few lines, for the terminal."""
    v = model.verdict
    roots = ", ".join(v["root_workers"]) or "-"
    lines = [
        f"{model.job}: {v['status'].upper()}  class={v['class']}  root={roots}  confidence={v['confidence']:.0%}",
    ]
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
                f"  echoes: {', '.join(sorted({e.worker for e in root.echoes}))} (their errors follow from this)"
            )
    for e in model.unexplained[:5]:
        lines.append(f"  first error on {e.worker}: {e.location}  {e.text.splitlines()[0][:100]}")
    return "\n".join(lines)


def run_analyze(
    path: Path,
    out: Path = Path("reports"),
    fmt: OutputFormat = OutputFormat.text,
    name: str | None = None,
    no_files: bool = False,
    jobs: int | None = None,
    profile: bool = False,
    redact: Redaction = Redaction.secrets,
    no_redact: bool = False,
    max_expand: int = 16 << 30,
    out_inside: bool = False,
    max_ratio: float = 200.0,
) -> int:
    """``analyze``'s body: read the job, print the verdict, write the reports;
    the exit code. The parameters are the command's options (see ``cli.analyze``)."""
    from .ingest.source import ReadLimits
    from .pipeline import run_job

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
                jobs=jobs,
                progress=bar,
                redact="none" if no_redact else redact.value,
                read_limits=ReadLimits(max_bytes=max_expand, max_ratio=max_ratio),
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
    return EXIT_OK if model.verdict["status"] != "failure" else EXIT_FAILURE_FOUND


@dataclass(frozen=True)
class _Opt:
    dest: str
    convert: Callable[[str], Any] | None  # None: a flag


def _positive_int(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise ValueError(text)
    return int(text)


def _float_from_one(text: str) -> float:
    if not re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", text) or float(text) < 1.0:
        raise ValueError(text)
    return float(text)


# analyze's options as the fast parser reads them. The typer declarations in
# cli.analyze are the truth (help, completion, errors); tests/test_console.py
# fails when this table and they disagree.
ANALYZE_OPTIONS: dict[str, _Opt] = {
    "--out": _Opt("out", Path),
    "-o": _Opt("out", Path),
    "--format": _Opt("fmt", OutputFormat),
    "-f": _Opt("fmt", OutputFormat),
    "--name": _Opt("name", str),
    "--no-files": _Opt("no_files", None),
    "--jobs": _Opt("jobs", _positive_int),
    "-j": _Opt("jobs", _positive_int),
    "--profile": _Opt("profile", None),
    "--redact": _Opt("redact", Redaction),
    "--no-redact": _Opt("no_redact", None),
    "--max-expand": _Opt("max_expand", _positive_int),
    "--out-inside": _Opt("out_inside", None),
    "--max-ratio": _Opt("max_ratio", _float_from_one),
}


def parse_analyze(args: list[str]) -> dict[str, Any] | None:
    """``analyze``'s arguments (after the word ``analyze``) as ``run_analyze``'s
    keywords, or None for anything but plain, valid spellings, which the typer
    app then handles (help, errors, ``--opt=value`` and the like)."""
    kw: dict[str, Any] = {}
    paths: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "-" or not a.startswith("-"):
            if not a:
                return None
            paths.append(a)
            continue
        opt = ANALYZE_OPTIONS.get(a)
        if opt is None:
            return None  # --help, --, --x=y, -oX, a typo: typer says what to say
        if opt.convert is None:
            kw[opt.dest] = True
            continue
        if i >= len(args) or not args[i] or args[i].startswith("-"):
            return None
        try:
            kw[opt.dest] = opt.convert(args[i])
        except ValueError:
            return None
        i += 1
    if len(paths) != 1:
        return None
    kw["path"] = Path(paths[0])
    return kw


def main(hard_exit: bool = True) -> None:
    """The console script. ``analyze`` with plain options runs without typer;
    everything else goes through the typer app (:func:`mwms_doctor.cli.main`).
    Either way an internal error is exit 3 with one line and a crash file,
    never a traceback on the terminal, and Ctrl-C is exit 130.

    Once ``analyze`` is done (its reports written and closed, its worker
    processes joined, its temporary files gone) the process ends at once,
    without the interpreter's teardown of every module pyarrow and numpy
    loaded, a tenth of a small job's time; ``hard_exit=False`` (tests calling
    this in process) exits normally."""
    argv = sys.argv[1:]
    kw = parse_analyze(argv[1:]) if argv[:1] == ["analyze"] else None
    if kw is None:
        from .cli import main as full

        full()
        return
    try:
        code = run_analyze(**kw)
    except KeyboardInterrupt:
        echo("mwms-doctor: interrupted", err=True)
        code = 130
    except Exception as exc:  # noqa: BLE001 - whatever the bug, the user gets one line and exit 3
        code = internal_error(exc)
    if hard_exit:
        _exit_now(code)
    sys.exit(code)


def _exit_now(code: int) -> None:
    """End the process with ``code`` after flushing what it printed."""
    import os

    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe (| head): nobody left to read it
            pass
    os._exit(code)


def internal_error(exc: BaseException) -> int:
    """Report a bug in this tool: one line on stderr naming a crash file that
    holds the traceback; the exit code."""
    where = crash_file(exc)
    echo(
        terminal(
            f"mwms-doctor: internal error: {type(exc).__name__}: {str(exc)[:200]} "
            f"(a bug in mwms-doctor, not in your job; traceback in {where})"
        ),
        err=True,
    )
    return EXIT_INTERNAL


def crash_file(exc: BaseException) -> str:
    """Write the traceback to a temporary file; its path."""
    import datetime as dt
    import platform
    import traceback

    text = (
        f"mwms-doctor {__version__} internal error, {dt.datetime.now(dt.timezone.utc).isoformat()}\n"
        f"python {platform.python_version()} on {platform.platform()}\n"
        f"argv: {sys.argv!r}\n\n" + "".join(traceback.format_exception(exc))
    )
    try:
        fd, path = tempfile.mkstemp(prefix="mwms-doctor-crash-", suffix=".txt")
        with open(fd, "w", encoding="utf-8", errors="backslashreplace") as fh:
            fh.write(text)
        return path
    except OSError:
        sys.stderr.write(text)
        return "the lines above"

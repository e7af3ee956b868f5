"""Terminal I/O for every command: what is printed, and how.

Exit codes: 0 no failure found, 1 failure(s) found, 2 bad input or usage,
3 an internal error (a bug in this tool: one line on stderr names a crash
file holding the traceback), 130 interrupted. Findings go to stdout;
progress and warnings to stderr, so that ``mwms-doctor analyze JOB --format
json | jq`` works. Nothing a log holds reaches the terminal as an escape
sequence.
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from typing import Any, TextIO

from . import __version__
from .errors import UserError

EXIT_OK, EXIT_FAILURE_FOUND, EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


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


def exit_now(code: int) -> None:
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


class JobsBar:
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

"""The console script's fast path for ``analyze`` (no typer, no pydantic): its
options are generated from the typer declarations, it reads every command
line it accepts as typer does, prints and writes what the typer path does,
and leaves alone whatever it does not fully understand."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mwms_doctor import cli, fast_options, fastparse

from .paths import ROOT, RUNS

OOM = RUNS / "oom" / "logs"


def _analyze_command() -> Any:
    import typer.main

    return typer.main.get_command(cli.app).get_command(None, "analyze")  # type: ignore[attr-defined]


def _typer_params(args: list[str]) -> dict[str, Any] | None:
    """What typer makes of ``analyze ARGS``, or None when it refuses them."""
    import click

    try:
        ctx = _analyze_command().make_context("analyze", list(args))
    except (click.exceptions.ClickException, click.exceptions.Exit):
        return None
    return dict(ctx.params)


def _fast(argv: list[str]) -> dict[str, Any] | None:
    return fastparse.parse(argv, fast_options.OPTIONS, fast_options.DEFAULTS)


def test_the_fast_options_are_generated_from_the_typer_declarations() -> None:
    """fast_options.py is what scripts/fast_options.py makes of cli.py now:
    each option is declared once, in cli.py."""
    assert Path(fast_options.__file__).read_text() == cli.fast_options_source()


@pytest.mark.parametrize(
    "argv",
    [
        ["job"],
        ["-", "-f", "json"],
        ["job", "--out", "r", "-o", "s", "--no-files", "--profile", "--format", "md"],
        ["job", "-j", "3", "--jobs", "08", "--redact", "hosts", "--max-ratio", "2.5"],
        ["--name", "n", "job", "--max-expand", "1024", "--out-inside", "--no-redact"],
    ],
)
def test_plain_command_lines_read_as_typer_reads_them(argv: list[str]) -> None:
    fast = _fast(argv)
    assert fast is not None
    assert fast == _typer_params(argv)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--help"],
        ["a", "b"],
        ["job", "--ou", "x"],
        ["job", "--out=x"],
        ["job", "-ox"],
        ["job", "--", "-x"],
        ["job", "-f", "JSON"],
        ["job", "-j", "0"],
        ["job", "--max-ratio", "0.5"],
        ["job", "--out"],
        ["job", "--out", ""],
        ["job", "--version"],
    ],
)
def test_anything_else_is_left_to_typer(argv: list[str]) -> None:
    assert _fast(argv) is None


_TOKENS = st.sampled_from(
    [
        *fast_options.OPTIONS,
        "--help",
        "--",
        "--out=x",
        "-ox",
        "-j3",
        "--bogus",
        "job",
        "a/b/",
        "-",
        "x y",
        "",
        "3",
        "0",
        "08",
        "1.5",
        "1e3",
        "-1",
        "json",
        "JSON",
        "md",
        "hosts",
        "secrets",
        "ünï",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_TOKENS, max_size=8))
def test_any_command_line_the_fast_path_accepts_typer_reads_the_same(argv: list[str]) -> None:
    fast = _fast(argv)
    if fast is None:
        return
    assert fast == _typer_params(argv), argv


def _run(cmd: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, capture_output=True, text=True, cwd=ROOT, env={**os.environ, "NO_COLOR": "1"}, timeout=120, **kw
    )


# The console script with its fast path turned off: every command through typer.
_TYPER_PATH = (
    "import sys; sys.argv[0] = 'mwms-doctor'; from mwms_doctor import entry; "
    "entry._plain_analyze = lambda argv: None; entry.main()"
)


def test_the_fast_path_prints_and_writes_what_the_typer_path_does(tmp_path: Path) -> None:
    fast = _run([sys.executable, "-m", "mwms_doctor", "analyze", str(OOM), "--out", str(tmp_path / "a")])
    full = _run(
        [
            sys.executable,
            "-c",
            _TYPER_PATH,
            "analyze",
            str(OOM),
            "--out",
            str(tmp_path / "b"),
        ]
    )
    assert fast.returncode == full.returncode == 1
    assert fast.stdout.replace(str(tmp_path / "a"), "OUT") == full.stdout.replace(str(tmp_path / "b"), "OUT")
    assert fast.stderr == full.stderr == ""
    a = json.loads((tmp_path / "a" / "oom-logs.json").read_text())
    b = json.loads((tmp_path / "b" / "oom-logs.json").read_text())
    for doc in (a, b):
        doc.pop("generated_at", None)
        doc.pop("timings", None)
    assert a["verdict"] == b["verdict"] and a["findings"] == b["findings"]


def test_the_fast_path_loads_neither_typer_nor_pydantic_nor_acero() -> None:
    """Lazy imports on the common path (issue 12): typer and the pydantic it
    builds converters with, pyarrow's Acero engine, and jinja2 when no HTML
    is written, are not loaded at all."""
    probe = (
        "import sys\n"
        f"sys.argv = ['mwms-doctor', 'analyze', {str(OOM)!r}, '--no-files', '-f', 'json']\n"
        "from mwms_doctor import entry\n"
        "try:\n"
        "    entry.main(hard_exit=False)\n"
        "except SystemExit as stop:\n"
        "    code = stop.code\n"
        "heavy = sorted(m for m in ('typer', 'pydantic', 'click', 'pyarrow.acero', 'jinja2') if m in sys.modules)\n"
        "print('LOADED', code, heavy, file=sys.stderr)\n"
    )
    r = _run([sys.executable, "-c", probe])
    assert "LOADED 1 []" in r.stderr, r.stderr
    assert json.loads(r.stdout)["verdict"]["class"] == "oom"


def test_piped_output_is_complete_after_the_hard_exit(tmp_path: Path) -> None:
    """The fast path ends with os._exit: what it printed must be flushed first."""
    r = _run([sys.executable, "-m", "mwms_doctor", "analyze", str(OOM), "--no-files", "-f", "md"])
    assert r.returncode == 1 and len(r.stdout) > 1000
    full = _run(
        [
            sys.executable,
            "-c",
            _TYPER_PATH,
            "analyze",
            str(OOM),
            "--no-files",
            "-f",
            "md",
        ]
    )
    assert r.stdout == full.stdout


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_reader_that_goes_away_is_not_an_internal_error(tmp_path: Path, fmt: str) -> None:
    """``mwms-doctor analyze JOB | head``: stdout's reader is gone before the
    verdict is printed. The reports are still written and the exit code is
    still the verdict's; no crash file, no 'internal error'."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "mwms_doctor", "analyze", str(OOM), "--out", str(tmp_path), "-f", fmt],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader leaves before anything is printed
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 1, err
    assert "internal error" not in err and "Traceback" not in err
    assert sorted(p.suffix for p in tmp_path.glob("oom-logs.*")) == [".html", ".json", ".md"]

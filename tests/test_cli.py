"""The command line as a user drives it: exit codes, stdout/stderr, messages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .paths import ROOT, RUNS


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mwms_doctor", *args],
        capture_output=True,
        text=True,
        cwd=cwd or ROOT,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=120,
    )


def test_failure_found_exits_1_and_writes_three_reports(tmp_path: Path) -> None:
    r = _cli("analyze", str(RUNS / "oom" / "logs"), "--out", str(tmp_path))
    assert r.returncode == 1, r.stderr
    assert "class=oom" in r.stdout and "root=worker:1" in r.stdout
    reports = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("."))
    assert reports == ["oom-logs.html", "oom-logs.json", "oom-logs.md"]
    assert "Traceback" not in r.stderr


def test_healthy_exits_0(tmp_path: Path) -> None:
    r = _cli("analyze", str(RUNS / "healthy" / "logs"), "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert "HEALTHY" in r.stdout


def test_json_on_stdout_is_pipeable(tmp_path: Path) -> None:
    r = _cli("analyze", str(RUNS / "never_started" / "logs"), "--format", "json", "--no-files")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["verdict"]["class"] == "handshake_deadlock"
    assert doc["verdict"]["root_workers"] == ["worker:2"]


@pytest.mark.parametrize(
    ("make", "needle"),
    [
        (lambda p: p / "nope", "no such file or directory"),
        (lambda p: p, "the directory is empty"),
    ],
)
def test_bad_input_exits_2_with_one_clear_line(tmp_path: Path, make, needle: str) -> None:  # type: ignore[no-untyped-def]
    target = make(tmp_path)
    r = _cli("analyze", str(target), "--no-files")
    assert r.returncode == 2
    assert r.stdout == ""
    first = r.stderr.splitlines()[0]
    assert first.startswith("mwms-doctor: error: ") and str(target) in first and needle in first
    assert "Traceback" not in r.stderr


def test_unreadable_file_is_named_in_a_warning(tmp_path: Path) -> None:
    (tmp_path / "worker-0.log").write_text((RUNS / "healthy" / "logs" / "worker-0.log").read_text())
    (tmp_path / "worker-1.log.gz").write_bytes(b"\x1f\x8b\x08\x00 gzip's magic, then garbage")
    r = _cli("analyze", str(tmp_path), "--no-files")
    assert "worker-1.log.gz: not read: could not be read" in r.stderr
    assert "Traceback" not in r.stderr


def test_usage_error_exits_2() -> None:
    assert _cli("analyze").returncode == 2
    assert _cli("no-such-command").returncode == 2


def test_rules_and_explain() -> None:
    r = _cli("rules")
    assert r.returncode == 0
    from mwms_doctor.registry import load_rules

    listed = [line.split()[0] for line in r.stdout.splitlines()]
    assert listed == [rule.CODE for rule in load_rules()]
    assert {"HS001", "OM001", "PD001", "FW001", "TC001"} <= set(listed)
    r = _cli("explain", "HS001")
    assert r.returncode == 0
    for section in ("What it means", "Why it happens", "What to do"):
        assert section in r.stdout
    r = _cli("explain", "ZZ999")
    assert r.returncode == 2 and "no rule or class 'ZZ999'" in r.stderr


def test_explain_takes_a_class_name() -> None:
    """Users read class names in every verdict (``oom``), rule codes only in
    the details: ``explain oom`` says what the class means, what settles it,
    and each rule that concludes it with what to do."""
    r = _cli("explain", "oom")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("oom: Out of memory")
    assert "OM001" in r.stdout and "OM002" in r.stdout and "What to do:" in r.stdout


def test_analyze_fail_on_gates_by_class_and_refuses_a_typo(tmp_path: Path) -> None:
    """For CI: exit 1 only for the classes named; a class that does not exist
    is a usage error, never a gate silently off."""
    logs = str(RUNS / "oom" / "logs")
    out = str(tmp_path / "r")
    assert _cli("analyze", logs, "--out", out, "--fail-on", "oom").returncode == 1
    assert _cli("analyze", logs, "--out", out, "--fail-on", "nan_loss,peer_died").returncode == 0
    r = _cli("analyze", logs, "--out", out, "--fail-on", "oomm")
    assert r.returncode == 2 and "no class oomm" in r.stderr


@pytest.mark.parametrize("command", ["analyze", "triage", "tables", "rules", "explain"])
def test_help_is_in_words(command: str) -> None:
    """Help shows option names with a word for their value (DIR, N, SIZE),
    never a Python type or a raw byte count."""
    r = _cli(command, "--help")
    assert r.returncode == 0, r.stderr
    for internal in ("<bool>", "range>", "<str>", "list[str]", "17179869184"):
        assert internal not in r.stdout, (internal, r.stdout)


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        ("-f", "xml", "'xml' is not one of 'text', 'json', 'md'"),
        ("--jobs", "0", "must be 1 or more"),
        ("--jobs", "two", "must be a whole number"),
        ("--max-expand", "12Q", "'12Q' is not a size"),
    ],
)
def test_a_bad_option_value_is_said_in_words(tmp_path: Path, option: str, value: str, words: str) -> None:
    r = _cli("analyze", str(RUNS / "oom" / "logs"), "--out", str(tmp_path), option, value)
    assert r.returncode == 2
    assert words in r.stderr and "Value error" not in r.stderr and "Input should" not in r.stderr, r.stderr


def test_sizes_are_read_as_people_write_them(tmp_path: Path) -> None:
    from mwms_doctor.fastparse import size_bytes

    assert size_bytes("16G") == size_bytes("16GiB") == size_bytes("16 gib") == 16 << 30
    assert size_bytes("512MiB") == 512 << 20 and size_bytes("2GB") == 2 * 10**9
    assert size_bytes("1.5g") == 3 << 29 and size_bytes("4096") == 4096
    for bad in ("", "G", "16 parsecs", "-1G", "0"):
        with pytest.raises(ValueError):
            size_bytes(bad)
    # Both command lines take it: the fast path and the typer app (--max-expand=... goes to typer).
    for spelling in (["--max-expand", "64MiB"], ["--max-expand=64M"]):
        r = _cli("analyze", str(RUNS / "oom" / "logs"), "--no-files", *spelling)
        assert r.returncode == 1 and "class=oom" in r.stdout, r.stderr

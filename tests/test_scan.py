"""The streaming scanner: big logs are scanned, and only what matters is parsed.

The reference is a full parse of every line (``parse_log``): the windowed
reader must give the very same records for every line that matters.
"""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

import pytest
from mwms_doctor.ingest.logfile import Limits, read_log
from mwms_doctor.ingest.scan import scan_file
from mwms_doctor.ingest.signatures import grep_patterns, signatures
from mwms_doctor.ingest.templates import TEMPLATES
from mwms_doctor.ingest.worker_log import parse_log

from .paths import RUNS

PLAIN_RUNS = sorted(p for p in RUNS.glob("*/logs/worker-*.log"))
TINY = Limits(head=300, tail=300, alarm_before=600, alarm_after=6000, hit_after=300)


def _records(log) -> set[tuple[int, int, str, str | None]]:  # type: ignore[no-untyped-def]
    return set(zip(log.line, log.end_line, log.text, log.kind, strict=True))


def _full(path: Path):  # type: ignore[no-untyped-def]
    with open(path, encoding="utf-8", errors="replace", newline="") as fh:
        lines = fh.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return parse_log(lines, path.name, 2026, None)


@pytest.mark.parametrize("path", PLAIN_RUNS, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_small_logs_are_parsed_whole(path: Path) -> None:
    (fast,) = read_log(path, path.name, 2026, None)
    full = _full(path)
    assert (fast.line, fast.text, fast.kind, fast.ts) == (full.line, full.text, full.kind, full.ts)
    assert fast.n_bytes_parsed == fast.n_bytes == path.stat().st_size


@pytest.mark.parametrize("path", PLAIN_RUNS, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_tiny_windows_keep_every_record_that_matters(path: Path) -> None:
    """With windows far smaller than the file, every recognised record and every
    warning or error is still there, and nothing is invented."""
    (fast,) = read_log(path, path.name, 2026, None, TINY)
    full = _full(path)
    got, want = _records(fast), _records(full)
    assert fast.n_bytes_parsed <= fast.n_bytes
    matters = {
        r
        for r, sev in zip(_records_in_order(full), full.severity, strict=True)
        if r[3] or sev in ("warning", "error", "fatal")
    }
    assert matters <= got
    assert got <= want
    assert fast.n_lines == full.n_lines


def _records_in_order(log):  # type: ignore[no-untyped-def]
    return list(zip(log.line, log.end_line, log.text, log.kind, strict=True))


def test_hits_point_at_the_right_lines(tmp_path: Path) -> None:
    src = RUNS / "oom" / "logs" / "worker-1.log"
    data = src.read_bytes()
    scan = scan_file(src)
    lines = data.split(b"\n")
    assert scan.n_lines == len(lines) - (1 if data.endswith(b"\n") else 0)
    for h in scan.hits:
        assert data[h.start : h.end].rstrip(b"\n") == lines[h.line - 1]
    oom_line = next(i for i, ln in enumerate(lines, 1) if b"OOM when allocating tensor" in ln)
    assert any(h.line == oom_line and h.alarm for h in scan.hits)


def test_noise_between_failures_is_scanned_not_parsed(tmp_path: Path) -> None:
    """A 6 MB log whose middle is progress noise: the failure at its end is found
    with its line number, the middle is not parsed, and epoch lines are thinned."""
    src = (RUNS / "peer_killed" / "logs" / "worker-0.log").read_text()
    head, tail = src.split("Epoch 1/", 1)
    noise_epoch = (
        "Epoch {n}/9999\n"
        + "".join(f"step {i}: samples/s=3012.5 lr=0.001\n" for i in range(200))
        + "8/8 - 0s - loss: 0.6112 - accuracy: 0.6302 - 244ms/epoch - 30ms/step\n"
    )
    body = "".join(noise_epoch.format(n=n) for n in range(1, 900))
    path = tmp_path / "worker-0.log"
    path.write_text(head + body + "Epoch 1/" + tail)
    (log,) = read_log(path, path.name, 2026, None)
    assert log.n_bytes > 5_000_000
    assert log.n_bytes_parsed < log.n_bytes / 5
    lines = path.read_text().split("\n")
    for kind in ("collective.aborted", "py.traceback"):
        i = log.first(kind)
        assert i is not None, kind
        assert lines[log.line[i] - 1].strip()  # points at a real line
    tb = log.first("py.traceback")
    assert lines[log.line[tb] - 1].startswith("Traceback")
    epochs = [int(log.field_of(i, "epoch") or 0) for i, k in enumerate(log.kind) if k == "keras.epoch"]
    assert len(epochs) <= Limits().max_frequent + 2
    assert 1 in epochs and 899 in epochs  # the first and the last epochs are kept
    assert log.n_frequent_skipped > 0


def test_gz_logs_are_read_and_damage_is_reported(tmp_path: Path) -> None:
    src = RUNS / "oom" / "logs" / "worker-1.log"
    packed = gzip.compress(src.read_bytes())
    (tmp_path / "whole.log.gz").write_bytes(packed)
    (whole,) = read_log(tmp_path / "whole.log.gz", "whole.log.gz", 2026, None)
    assert whole.first("oom.tensor_allocation") is not None and not whole.notes
    (tmp_path / "cut.log.gz").write_bytes(packed[: len(packed) * 2 // 3])
    (cut,) = read_log(tmp_path / "cut.log.gz", "cut.log.gz", 2026, None)
    assert len(cut) > 5
    assert any("could not be decompressed" in n for n in cut.notes)


def test_a_line_without_newline_longer_than_a_block(tmp_path: Path) -> None:
    path = tmp_path / "bar.log"
    shutil.copy(RUNS / "healthy" / "logs" / "worker-0.log", path)
    with open(path, "a") as fh:
        fh.write("1/8 [=>...] - ETA: 1s\r" * 600_000 + "8/8 - 0s - loss: 0.6 - 1s/epoch - 9ms/step")
    (log,) = read_log(path, path.name, 2026, None)
    assert log.kind[-1] == "keras.epoch_end"


def test_every_template_record_matches_its_signature() -> None:
    """The scanner can only find what a signature matches: every record a
    template recognises in the recorded runs must match that template's sig."""
    by_sig: dict[str, list[re.Pattern[str]]] = {}
    for t in TEMPLATES:
        by_sig.setdefault(t.kind, []).append(re.compile(t.signature))
    seen = set()
    for path in PLAIN_RUNS:
        log = _full(path)
        for kind, text in zip(log.kind, log.text, strict=True):
            if kind in by_sig:
                seen.add(kind)
                assert any(s.search(text.split("\n")[0]) or s.search(text) for s in by_sig[kind]), (
                    kind,
                    text[:120],
                )
    assert len(seen) >= 12
    assert all(t.signature for t in TEMPLATES)
    # grep gets the very list the scanner uses.
    assert grep_patterns() == [s.regex for s in signatures()]


def test_errors_past_the_budget_are_counted_and_said(tmp_path: Path) -> None:
    """An error printed every step: the first and the last are parsed, the
    rest only counted, and the reader says so (the report lists it)."""
    src = (RUNS / "peer_killed" / "logs" / "worker-0.log").read_text()
    head, tail = src.split("Epoch 1/", 1)
    spam = "".join(
        f"W0000 00:00:1795285812.{i:06d}    2186 data_utils.cc:12] step {i}: a warning printed every step\n"
        + "x" * 2000
        + "\n"
        for i in range(300)
    )
    path = tmp_path / "worker-0.log"
    path.write_text(head + spam + "Epoch 1/" + tail)
    (log,) = read_log(path, path.name, 2026, None, Limits(max_hits=40))
    steps = [t for t in log.text if "printed every step" in t]
    assert 0 < len(steps) <= 40
    assert "step 0:" in steps[0] and "step 299:" in steps[-1]
    assert any("only counted" in n for n in log.notes)
    assert log.first("collective.aborted") is not None  # the real failure after the spam is kept


def test_signatures_read_the_same_in_every_engine_including_ripgrep() -> None:
    """The benchmark hands the list to grep -E and ripgrep; Rust's regex reads an
    unescaped "[" inside a bracket class as a nested class, so none may have one."""
    import re

    from mwms_doctor.ingest.signatures import grep_patterns

    nested = re.compile(r"(?<!\\)\[(?:\\.|[^\]\\])*?(?<!\\)\[")
    for sig in grep_patterns():
        assert not nested.search(sig), sig

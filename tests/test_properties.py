"""Property-based tests: every ingester, and the whole pipeline, over real
recordings mutated the way dying jobs and careless copies mutate them
(truncation, flipped bytes, invalid UTF-8, NUL bytes, a huge single line,
interleaved garbage, compressed and cut, random file names).

Invariants: no exception escapes; every file of the job appears in the
report, read or skipped with a reason; the output is deterministic.

CI runs a bounded number of examples. A longer run:

    MWMS_HYPOTHESIS_PROFILE=long python -m pytest tests/test_properties.py

(``long``: 2000 examples of the pipeline, ten times the CI count of the
others, and lines up to 100 MB; the README gives the count of the last long
run).
"""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mwms_doctor.errors import UserError
from mwms_doctor.ingest.env import read_env_text
from mwms_doctor.ingest.exit_status import read_exit_status
from mwms_doctor.ingest.lines import parse_header
from mwms_doctor.ingest.logfile import Limits, read_log
from mwms_doctor.ingest.worker_log import parse_log
from mwms_doctor.ingest.wrappers import detect, unwrap
from mwms_doctor.ingest.xplane import TraceError, read_trace
from mwms_doctor.inputs import display
from mwms_doctor.pipeline import run_job

from .paths import RUNS

settings.register_profile(
    "ci", max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.register_profile("long", max_examples=2000, deadline=None, suppress_health_check=list(HealthCheck))
settings.load_profile(os.environ.get("MWMS_HYPOTHESIS_PROFILE", "ci"))
LONG = os.environ.get("MWMS_HYPOTHESIS_PROFILE") == "long"
LONG_LINE = (100 << 20) if LONG else (4 << 20)


def examples(n: int) -> int:
    """A test's example count in CI; ten times more in the long run."""
    return n * 10 if LONG else n


# Small real recordings with different shapes: a plain failure, a k8s-wrapped
# one, a healthy run, a combined file, exit records and env dumps.
SOURCES = [
    p
    for p in (
        "oom",
        "peer_killed",
        "healthy",
        "k8s_cri_peer_killed",
        "compose_peer_killed",
        "gz_rotated_oom",
        "split_streams_never_started",
        "host_oom",
        "tf_config_malformed",
        "profiled",
    )
    if (RUNS / p).is_dir()
]
TINY = Limits(
    head=300, tail=300, alarm_before=600, alarm_after=2000, hit_after=300, max_hits=8, max_frequent=4
)


def _job_files(run: str) -> dict[bytes, bytes]:
    root = RUNS / run / "logs"
    return {
        os.fsencode(p.relative_to(root).as_posix()): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


_NAME_BYTES = st.binary(min_size=1, max_size=16).map(lambda b: bytes(c for c in b if c not in b"/\0") or b"x")


@st.composite
def mutated_job(draw: st.DrawFn) -> dict[bytes, bytes]:
    files = _job_files(draw(st.sampled_from(SOURCES)))
    for _ in range(draw(st.integers(1, 4))):
        name = draw(st.sampled_from(sorted(files)))
        data = files[name]
        op = draw(
            st.sampled_from(
                ["truncate", "flip", "bad_utf8", "nul", "long_line", "garbage", "rename", "gzip", "gzip_cut"]
            )
        )
        at = draw(st.integers(0, len(data)))
        if op == "truncate":
            data = data[:at]
        elif op == "flip" and data:
            i = min(at, len(data) - 1)
            data = data[:i] + bytes([data[i] ^ draw(st.integers(1, 255))]) + data[i + 1 :]
        elif op == "bad_utf8":
            data = (
                data[:at]
                + draw(st.sampled_from([b"\xff\xfe", b"\xc3", b"\xed\xa0\x80", b"\x80" * 7]))
                + data[at:]
            )
        elif op == "nul":
            data = data[:at] + b"\0" * draw(st.integers(1, 4096)) + data[at:]
        elif op == "long_line":
            data = data[:at] + b"x" * draw(st.integers(1, LONG_LINE)) + data[at:]
        elif op == "garbage":
            data = data[:at] + draw(st.binary(min_size=1, max_size=2048)) + b"\n" + data[at:]
        elif op == "rename":
            del files[name]
            name = draw(_NAME_BYTES)
        elif op == "gzip":
            data = gzip.compress(data)
        elif op == "gzip_cut":
            packed = gzip.compress(data)
            data = packed[: max(1, at * len(packed) // max(len(data), 1))]
        files[name] = data
    return files


def _write(root: Path, files: dict[bytes, bytes]) -> None:
    base = os.fsencode(root)
    for name, data in files.items():
        path = os.path.join(base, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.isdir(path):
            continue
        with open(path, "wb") as fh:
            fh.write(data)


def _every_file(root: Path) -> set[str]:
    out = set()
    base = os.fsencode(root)
    for folder, _dirs, names in os.walk(base):
        for n in names:
            rel = os.path.relpath(os.path.join(folder, n), base)
            out.add(display(os.fsdecode(rel)))
    return out


def _report(job: Path, out: Path) -> dict:  # type: ignore[type-arg]
    result = run_job(job, out, formats=("json", "md", "html"), name="job")
    report = json.loads((out / "job.json").read_text(encoding="utf-8"))
    report.pop("generated_at")
    assert result.model.verdict["status"] in ("healthy", "failure", "warning", "unknown")
    return report  # type: ignore[no-any-return]


@given(mutated_job())
def test_the_pipeline_survives_mutated_recordings(files: dict[bytes, bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        job = Path(tmp) / "job"
        job.mkdir()
        _write(job, files)
        try:
            first = _report(job, Path(tmp) / "out1")
        except UserError:
            return  # nothing left that is evidence: a clear message, exit 2
        again = _report(job, Path(tmp) / "out2")
        assert first == again  # deterministic
        listed = {i["source"] for i in first["inputs"]} | {s["source"] for s in first["skipped"]}
        assert _every_file(job) <= listed


@given(st.binary(max_size=20_000), st.sampled_from(["log", "log.gz"]))
@settings(max_examples=examples(50))
def test_a_log_of_any_bytes_is_read_without_an_exception(data: bytes, suffix: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"worker-0.{suffix}"
        path.write_bytes(gzip.compress(data) if suffix == "log.gz" else data)
        for limits in (Limits(), TINY):
            for log in read_log(path, path.name, 2026, None, limits):
                assert len(log.line) == len(log.text) == len(log.kind)
                assert all(1 <= n <= max(log.n_lines, 1) for n in log.line)


@given(mutated_job())
@settings(max_examples=examples(15))
def test_windowed_reads_of_mutated_logs_keep_line_numbers_in_range(files: dict[bytes, bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for i, data in enumerate(files.values()):
            path = Path(tmp) / f"f{i}.log"
            path.write_bytes(data)
            for log in read_log(path, path.name, 2026, None, TINY):
                assert all(1 <= n <= max(log.n_lines, 1) for n in log.line)
                assert log.line == sorted(log.line)


@given(st.text(max_size=400))
@settings(max_examples=examples(300))
def test_line_level_ingesters_take_any_text(text: str) -> None:
    parse_header(text, 2026)
    lines = text.split("\n")
    chain = detect(lines)
    for line in lines:
        unwrap(line, chain)
    parse_log(lines, "x.log", 2026, None)
    read_env_text(text, "env.txt", "env_dump")
    read_env_text(text, "pip.txt", "pip_freeze")


@given(st.binary(max_size=4096), st.sampled_from(["host.xplane.pb", "host.trace.json.gz", "host.trace.json"]))
@settings(max_examples=examples(100))
def test_a_trace_of_any_bytes_is_read_or_refused_with_a_trace_error(data: bytes, name: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(data)
        try:
            read_trace(path)
        except TraceError as exc:
            assert exc.message


@given(st.binary(max_size=512))
@settings(max_examples=examples(100))
def test_an_exit_record_of_any_bytes_is_read(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "worker-0.exit"
        path.write_bytes(data)
        read_exit_status(path)

"""Hostile, broken and odd input (issue 14): each case was a crash, a hang or
evidence lost silently before its fix. The rest of the job is still analysed,
and whatever was not read is named with the reason."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import resource
import shutil
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from mwms_doctor.discover import discover
from mwms_doctor.ingest.logfile import read_log
from mwms_doctor.ingest.xplane import TraceError, read_trace
from mwms_doctor.pipeline import load_tables

from .paths import ROOT, RUNS

OOM = RUNS / "oom" / "logs"


def _cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mwms_doctor", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "NO_COLOR": "1", **(env or {})},
        timeout=300,
    )


def _oom_job(tmp_path: Path) -> Path:
    job = tmp_path / "job"
    shutil.copytree(OOM, job)
    return job


def test_a_file_name_that_is_not_utf8_is_shown_not_crashed_on(tmp_path: Path) -> None:
    job = _oom_job(tmp_path)
    odd = os.fsdecode(b"worker-0-\xff\xfe.log")
    os.replace(job / "worker-0.log", job / odd)
    out = tmp_path / "out"
    r = _cli("analyze", str(job), "--out", str(out))
    assert r.returncode == 1, r.stderr
    assert "Traceback" not in r.stderr
    report = json.loads(next(out.glob("*.json")).read_text(encoding="utf-8"))
    assert report["verdict"]["class"] == "oom"
    shown = "worker-0-\\xff\\xfe.log"  # the bytes that are not UTF-8, as \xNN
    assert shown in {src for w in report["workers"] for src in w["sources"]}
    assert "worker-0-\\xff\\xfe.log" in next(out.glob("*.html")).read_text(encoding="utf-8")


def test_special_files_and_odd_links_are_skipped_with_a_note(tmp_path: Path) -> None:
    job = _oom_job(tmp_path)
    os.mkfifo(job / "worker-7.log")
    os.symlink("/dev/zero", job / "worker-8.log")
    outside = tmp_path / "secret.txt"
    outside.write_text("outside the job folder\n")
    os.symlink(outside, job / "worker-9.log")
    os.symlink(job / "loop-b.log", job / "loop-a.log")
    os.symlink(job / "loop-a.log", job / "loop-b.log")
    os.symlink(job / "gone.log", job / "broken.log")
    os.symlink(tmp_path, job / "up")
    os.symlink(job / "worker-1.log", job / "alias.log")  # inside the folder: read
    found = discover(job)
    why = dict(found.skipped)
    assert "FIFO" in why["worker-7.log"]
    assert "outside the job folder" in why["worker-8.log"]
    assert "outside the job folder" in why["worker-9.log"]
    assert "loop" in why["loop-a.log"] and "loop" in why["loop-b.log"]
    assert "broken" in why["broken.log"]
    assert "not followed" in why["up"]
    assert {"worker-0.log", "worker-1.log", "alias.log"} <= {lg.source for lg in found.logs}


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_device_inside_the_folder_is_never_opened(tmp_path: Path) -> None:
    job = _oom_job(tmp_path)
    os.mknod(
        job / "worker-6.log", 0o600 | 0o020000, os.makedev(1, 5)
    )  # a character device: /dev/zero's numbers
    why = dict(discover(job).skipped)
    assert "character device" in why["worker-6.log"]


def test_a_folder_that_cannot_be_listed_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    job = _oom_job(tmp_path)
    (job / "private").mkdir()
    (job / "private" / "worker-5.log").write_text("hidden\n")
    real_scandir = os.scandir

    def scandir(path):  # type: ignore[no-untyped-def]
        if Path(path).name == "private":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    found = discover(job)
    assert dict(found.skipped)["private"] == "could not be listed: Permission denied"
    assert {"worker-0.log", "worker-1.log"} <= {lg.source for lg in found.logs}


def test_a_gzip_bomb_beside_a_real_job_is_cut_short(tmp_path: Path) -> None:
    """2 GB of zeros compressed to 2 MB: decompression stops at the ratio cap,
    in seconds, in little memory, with no temporary file left behind."""
    job = _oom_job(tmp_path)
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1 << 20)
    with open(job / "worker-2.log.gz", "wb") as fh:
        fh.write(c.compress((OOM / "worker-0.log").read_bytes()))  # a log, then 2 GB of zeros
        for _ in range(2048):
            fh.write(c.compress(zeros))
        fh.write(c.flush())
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    out = tmp_path / "out"
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    r = _cli("analyze", str(job), "--out", str(out), env={"TMPDIR": str(tmp)})
    peak_kib = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
    assert r.returncode == 1, r.stderr
    assert "class=oom" in r.stdout
    assert "worker-2.log.gz: not read:" in r.stderr and "decompression bomb" in r.stderr
    assert list(tmp.iterdir()) == []
    assert peak_kib < 1 << 20  # under 1 GiB


def _copy_as(tmp_path: Path, name: str, pack) -> Path:  # type: ignore[no-untyped-def]
    job = tmp_path / "job"
    job.mkdir(exist_ok=True)
    (job / name).write_bytes(pack((OOM / "worker-1.log").read_bytes()))
    return job / name


@pytest.mark.parametrize(
    ("name", "pack"),
    [
        ("worker-1.log", gzip.compress),  # gzip without .gz
        ("worker-1.log.gz", lambda b: b),  # .gz that is plain text
        ("worker-1.log", bz2.compress),
        ("worker-1.log.xz", lzma.compress),
        ("worker-1.log.zst", lambda b: __import__("zstandard").ZstdCompressor().compress(b)),
        ("worker-1.txt", lambda b: b.decode().encode("utf-16")),  # UTF-16 with its mark
        ("worker-1.out", lambda b: b.decode().encode("utf-16-le")),  # ... and without
        ("worker-1.log", lambda b: b"\xef\xbb\xbf" + b),  # UTF-8 with a byte-order mark
    ],
    ids=["gzip-no-suffix", "gz-plain", "bzip2", "xz", "zstd", "utf16-bom", "utf16le", "utf8-bom"],
)
def test_compression_and_encoding_are_told_by_content(tmp_path: Path, name: str, pack) -> None:  # type: ignore[no-untyped-def]
    path = _copy_as(tmp_path, name, pack)
    found = discover(path.parent)
    assert [lg.source for lg in found.logs] == [name], found.skipped
    (log,) = read_log(path, name, 2026, None)
    (want,) = read_log(OOM / "worker-1.log", name, 2026, None)
    assert (log.line, log.text, log.kind) == (want.line, want.text, want.kind)
    assert not log.notes


def test_latin1_bytes_stay_readable(tmp_path: Path) -> None:
    text = (OOM / "worker-1.log").read_bytes() + "Fehler beim Lesen der Datei für Müller\n".encode("latin-1")
    path = tmp_path / "worker-1.log"
    path.write_bytes(text)
    (log,) = read_log(path, path.name, 2026, None)
    assert any("für Müller" in t for t in log.text)


def test_a_compressed_trace_that_expands_too_far_is_refused(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from mwms_doctor.ingest import xplane

    monkeypatch.setattr(xplane, "MAX_TRACE_BYTES", 1 << 20)
    path = tmp_path / "host.trace.json.gz"
    path.write_bytes(gzip.compress(b'{"traceEvents": [' + b" " * (4 << 20) + b"]}"))
    with pytest.raises(TraceError, match="expand"):
        read_trace(path)


# -- secrets -------------------------------------------------------------------------

SECRETS = {
    "bearer": ("Authorization: Bearer {}", "abcdEFGH1234ijklMNOP5678qrst"),
    "basic": ("Authorization: Basic {}", "dXNlcjpwYXNzd29yZDEyMzQ1Ng=="),
    "url_password": ("fetching s3://svc-user:{}@bucket.example.com/data", "SuperS3cretPass99"),
    "pip_index": ("Looking in indexes: https://bob:{}@pypi.corp.example.com/simple", "hunter2hunter2"),
    "password_kv": ("connecting with password={} to the feature store", "Tr0ub4dor3xyz"),
    "hf_token": ("export HF_TOKEN={}", "hf_abcdefghijklmnopqrstuvwxyzABCDEF0123"),
    "aws_key_id": ("AWS_ACCESS_KEY_ID={}", "AKIAIOSFODNN7EXAMPLE"),
    "aws_secret": ("aws_secret_access_key = {}", "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"),
    "gcp_api_key": ("calling the API with key {}", "AIzaSyA1234567890abcdefghijklmnopqrstuv"),
    "github": ("git clone with token {}", "ghp_1234567890abcdefghijklmnopqrstuvwxyzAB"),
    "github_pat": ("GH={}", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCD"),
    "gitlab": ("CI_JOB={}", "glpat-abcdefghij0123456789"),
    "slack": ("posting to slack with {}", "xoxb-1234567890-abcdefghijklmn"),
    "openai": ("OPENAI key {}", "sk-proj-abcdefghijklmnopqrstuvwxyz012345"),
    "stripe": ("billing {}", "sk_live_abcdefghijklmnop1234"),
    "jwt": (
        "session {}",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFU",
    ),
    "private_key": (
        '"private_key": "-----BEGIN PRIVATE KEY-----\\n{}\\n-----END PRIVATE KEY-----\\n"',
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7",
    ),
    "azure": (
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={};EndpointSuffix=core.windows.net",
        "abcd1234EFGH5678ijklMNOP==",
    ),
    "sas": ("https://acct.blob.core.windows.net/c?sv=2020&sig={}&se=2026", "abcDEF123xyzSIGNATURE"),
    "wandb": ("WANDB_API_KEY: {}", "0123456789abcdef0123456789abcdef01234567"),
}


def _secret_job(tmp_path: Path) -> Path:
    """A real OOM job whose workers printed secrets: in an error's traceback
    (it becomes evidence), in plain prints, and in an environment dump."""
    job = _oom_job(tmp_path)
    lines = [fmt.format(value) for fmt, value in SECRETS.values()]
    log = (job / "worker-1.log").read_text()
    cut = log.index("Traceback")
    tb = "".join(f"E1121 18:31:01.900000 2795 secret.cc:1] {line}\n" for line in lines)
    # A Python traceback whose exception message holds the secrets: its parsed
    # fields (exc_message, a map column of the events table) carry them too.
    exc = (
        "Traceback (most recent call last):\n"
        '  File "/app/upload.py", line 12, in <module>\n'
        "    push(bucket)\n"
        f"botocore.exceptions.ClientError: denied: {'; '.join(lines)}\n"
    )
    # ...and a structured (JSON-lines) record with the same lines as its fields' values.
    record = json.dumps(
        {
            "ts": "2026-11-21T18:31:02Z",
            "level": "ERROR",
            "msg": "upload failed",
            **{f"detail_{i}": x for i, x in enumerate(lines)},
        }
    )
    (job / "worker-1.log").write_text(
        log[:cut] + tb + log[cut:] + "".join(f"{line}\n" for line in lines) + exc + record + "\n"
    )
    env = "".join(f"SECRET_{i}={value}\n" for i, (_, value) in enumerate(SECRETS.values()))
    (job / "worker-1.env").write_text("HOME=/root\nPATH=/usr/bin\n" + env)
    return job


def _all_text(out: Path) -> str:
    """Every output file as text (Parquet read back: its bytes are compressed)."""
    import pyarrow.parquet as pq

    parts = []
    for p in sorted(out.rglob("*")):
        if p.suffix == ".parquet":
            parts.append(json.dumps(pq.read_table(p).to_pylist(), default=str))
        elif p.is_file():
            parts.append(p.read_text(encoding="utf-8", errors="replace"))
    return "\n".join(parts)


def test_no_secret_reaches_any_output(tmp_path: Path) -> None:
    job = _secret_job(tmp_path)
    out = tmp_path / "out"
    r = _cli("analyze", str(job), "--out", str(out))
    assert r.returncode == 1, r.stderr
    md = _cli("analyze", str(job), "--no-files", "--format", "md")
    js = _cli("analyze", str(job), "--no-files", "--format", "json")
    t = _cli("tables", str(job), "--out", str(out / "tables"))
    assert t.returncode == 0, t.stderr
    everything = "\n".join([_all_text(out), r.stdout, r.stderr, md.stdout, js.stdout, t.stdout, t.stderr])
    assert "[REDACTED]" in everything
    # The probe is real: without redaction the same outputs hold the secrets.
    raw = _cli("analyze", str(job), "--no-files", "--format", "json", "--no-redact").stdout
    shown = [name for name, (_, value) in SECRETS.items() if value in raw]
    assert len(shown) >= 10, shown
    raw_tables = _cli("tables", str(job), "--out", str(tmp_path / "raw"), "--no-redact")
    assert raw_tables.returncode == 0, raw_tables.stderr
    import pyarrow.parquet as pq

    fields = json.dumps(pq.read_table(tmp_path / "raw" / "events.parquet", columns=["fields"]).to_pylist())
    assert sum(value in fields for _, value in SECRETS.values()) >= 6  # the map column held them
    leaked = [name for name, (_, value) in SECRETS.items() if value in everything]
    assert leaked == []


def test_redact_hosts_masks_host_names_addresses_and_users(tmp_path: Path) -> None:
    job = _oom_job(tmp_path)
    log = (job / "worker-1.log").read_text()
    cut = log.index("Traceback")
    extra = (
        "E1121 18:31:01.900000 2795 net.cc:1] peer gpu-node-17.us-east1.internal:2222 (10.128.0.42) "
        "unreachable; checkpoint in /home/alice/ckpt, ssh alice@bastion.corp.example.com\n"
    )
    (job / "worker-1.log").write_text(log[:cut] + extra + log[cut:])
    r = _cli("analyze", str(job), "--no-files", "--format", "json", "--redact", "hosts")
    assert r.returncode == 1, r.stderr
    for needle in ("gpu-node-17", "10.128.0.42", "alice", "bastion.corp.example.com"):
        assert needle not in r.stdout, needle
    assert "host-" in r.stdout and "user-" in r.stdout
    report = json.loads(r.stdout)
    plain = json.loads(_cli("analyze", str(job), "--no-files", "--format", "json").stdout)
    # What the report says of the job's own structure is not a host: tasks, finding ids, rules.
    assert report["verdict"] == plain["verdict"]
    assert [f["id"] for f in report["findings"]] == [f["id"] for f in plain["findings"]]
    assert [w["worker"] for w in report["workers"]] == [w["worker"] for w in plain["workers"]]


def test_host_masking_leaves_tensorflow_names_alone() -> None:
    from mwms_doctor.redact import text_redactor

    hosts = text_redactor("hosts")
    kept = "FW001@worker:1 worker:12 GPU:10 /job:worker/replica:0/task:12 type.googleapis.com/tensorflow.X"
    assert hosts(kept) == kept
    masked = hosts(
        "ssh alice@bastion.corp.example.com; peer trainer-3:2222 at 10.128.0.42; again trainer-3:2222"
    )
    assert "alice" not in masked and "bastion" not in masked and "10.128.0.42" not in masked
    assert masked.count("host-2:2222") == 2  # the same host, the same pseudonym


def test_no_redact_and_redact_together_is_a_usage_error(tmp_path: Path) -> None:
    r = _cli("analyze", str(OOM), "--no-files", "--no-redact", "--redact", "hosts")
    assert r.returncode == 2 and "contradict" in r.stderr


# -- outputs ---------------------------------------------------------------------------


def test_name_cannot_escape_the_output_folder(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "out"
    r = _cli("analyze", str(OOM), "--out", str(out), "--name", "../../x")
    assert r.returncode == 1, r.stderr
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == ["x.html", "x.json", "x.md"]
    assert not (tmp_path / "a" / "x.html").exists()


def test_two_jobs_with_the_same_folder_name_do_not_overwrite_each_other(tmp_path: Path) -> None:
    for side in ("a", "b"):
        shutil.copytree(
            RUNS / ("oom" if side == "a" else "healthy") / "logs", tmp_path / side / "run1" / "logs"
        )
    out = tmp_path / "out"
    ra = _cli("analyze", str(tmp_path / "a" / "run1" / "logs"), "--out", str(out))
    rb = _cli("analyze", str(tmp_path / "b" / "run1" / "logs"), "--out", str(out))
    assert (ra.returncode, rb.returncode) == (1, 0)
    reports = sorted(out.glob("*.json"))
    assert len(reports) == 2
    classes = sorted(json.loads(p.read_text())["verdict"]["class"] for p in reports)
    assert classes == ["healthy", "oom"]
    # The same job again keeps its own name (its report is replaced, not multiplied).
    _cli("analyze", str(tmp_path / "a" / "run1" / "logs"), "--out", str(out))
    assert len(sorted(out.glob("*.json"))) == 2


def test_reports_are_not_written_into_the_evidence_unless_asked(tmp_path: Path) -> None:
    job = _oom_job(tmp_path)
    r = _cli("analyze", str(job), "--out", str(job / "reports"))
    assert r.returncode == 2 and "inside the evidence folder" in r.stderr
    assert not (job / "reports").exists()
    r = _cli("analyze", str(job), "--out", str(job / "reports"), "--out-inside")
    assert r.returncode == 1 and (job / "reports").is_dir()


def test_html_forbids_scripts_and_remote_loads(tmp_path: Path) -> None:
    assert _cli("analyze", str(OOM), "--out", str(tmp_path)).returncode == 1
    html = next(tmp_path.glob("*.html")).read_text()
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    assert "<script" not in html


HOSTILE = (
    "ValueError: bad `rm -rf /` | tee ~~x~~ <script>alert(1)</script> **bold** [link](http://evil) "
    "\x1b[31mred\x1b[0m \x1b]0;pwned title\x07 \x1b]8;;http://evil\x1b\\click\x1b]8;;\x1b\\"
)


def _hostile_job(tmp_path: Path) -> Path:
    path = tmp_path / "worker-0.log"
    path.write_text(
        f'Traceback (most recent call last):\n  File "train.py", line 3, in <module>\n{HOSTILE}\n'
    )
    return path


def test_markdown_shows_log_text_as_text(tmp_path: Path) -> None:
    from markdown_it import MarkdownIt

    r = _cli("analyze", str(_hostile_job(tmp_path)), "--no-files", "--format", "md")
    assert r.returncode == 1, r.stderr
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout
    html = MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(r.stdout)
    assert "<script>" not in html and "<strong>bold" not in html and "<del>" not in html
    assert 'href="http://evil"' not in html
    assert "rm -rf /" in html


def test_terminal_output_carries_no_escape_sequences(tmp_path: Path) -> None:
    r = _cli("analyze", str(_hostile_job(tmp_path)), "--no-files")
    assert r.returncode == 1, r.stderr
    assert "\x1b" not in r.stdout + r.stderr and "\x07" not in r.stdout + r.stderr


# -- exit codes ---------------------------------------------------------------------------


@pytest.mark.parametrize("way", ["typer app", "fast path"])
def test_an_internal_error_exits_3_with_one_line_and_a_crash_file(
    way: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Either way in through the one entry: the typer app, or the fast path
    for a plain analyze."""
    import tempfile

    from mwms_doctor import entry, pipeline

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug planted by the test")

    monkeypatch.setattr(pipeline, "run_job", broken)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(sys, "argv", ["mwms-doctor", "analyze", str(OOM), "--no-files"])
    if way == "typer app":
        monkeypatch.setattr(entry, "_plain_analyze", lambda argv: None)
    with pytest.raises(SystemExit) as stop:
        entry.main(hard_exit=False)
    assert stop.value.code == 3
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "internal error: RuntimeError: a bug planted by the test" in err
    (crash,) = tmp_path.glob("mwms-doctor-crash-*.txt")
    assert str(crash) in err
    assert "Traceback" in crash.read_text() and "a bug planted by the test" in crash.read_text()


def test_a_failure_found_and_a_usage_error_keep_their_codes() -> None:
    assert _cli("analyze", str(OOM), "--no-files").returncode == 1
    assert _cli("analyze", str(RUNS / "healthy" / "logs"), "--no-files").returncode == 0
    assert _cli("analyze").returncode == 2
    assert _cli("analyze", "/no/such/job").returncode == 2


def test_an_exit_record_is_never_given_to_another_workers_log(tmp_path: Path) -> None:
    """Found by the property tests: with worker-0's log empty, worker-0.exit
    was paired with the only other log in the folder, then overwritten. The
    record is its own worker's, whose log is empty: the worker's row says how
    it ended."""
    job = _oom_job(tmp_path)
    (job / "worker-0.log").write_text("")
    (job / "worker-1.log").write_text("")
    found = discover(job)
    assert found.exits == {"worker-2.log": job / "worker-2.exit"}
    assert found.named_exits == {"worker:0": job / "worker-0.exit", "worker:1": job / "worker-1.exit"}
    tables, _ = load_tables(job)
    rows = {r["worker"]: r for r in tables.workers.to_pylist()}
    assert not rows["worker:0"]["has_log"] and not rows["worker:1"]["has_log"]
    assert rows["worker:0"]["exit_code"] == rows["worker:1"]["exit_code"] == 1  # their own records


@pytest.mark.parametrize(
    "pack",
    [
        gzip.compress,
        bz2.compress,
        lzma.compress,
        lambda b: __import__("zstandard").ZstdCompressor().compress(b),
    ],
    ids=["gzip", "bzip2", "xz", "zstd"],
)
def test_a_truncated_archive_gives_its_readable_part_and_a_note(tmp_path: Path, pack) -> None:  # type: ignore[no-untyped-def]
    # Several MB of varied lines: bzip2 and zstd give output a block (up to 900 KB) at a time.
    noise = b"".join(
        b"I1121 18:30:%02d.%06d 2795 x.cc:1] step %d done, %x\n" % (i % 60, i, i, i * 7919)
        for i in range(80_000)
    )
    text = noise + (OOM / "worker-1.log").read_bytes()
    packed = pack(text)
    path = tmp_path / "worker-1.log"
    path.write_bytes(packed[: len(packed) * 2 // 3])
    (log,) = read_log(path, path.name, 2026, None)
    assert len(log) > 10
    assert any("could not be decompressed" in n for n in log.notes), log.notes


@pytest.mark.parametrize(
    "line",
    [
        "I0000 00:00:179528583148379600000.483796    2795 port.cc:153] epoch seconds past any clock",
        "I0000 00:00:18014898412545.483796    2795 port.cc:153] a year past 9999",
        "I1121 10:11:99999999999999999999.5    2795 port.cc:153] seconds past any timedelta",
        "I1121 99:99:12.483796    2795 port.cc:153] no such hour",
    ],
)
def test_a_damaged_time_is_no_time_not_a_crash(line: str) -> None:
    """Found by the long property run: byte flips and inserted digits in an
    absl time overflowed the datetime conversion."""
    from mwms_doctor.ingest.lines import parse_header

    header = parse_header(line, 2026)
    assert header is not None and header.ts is None and header.origin == "port.cc:153"

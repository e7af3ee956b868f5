"""Triage's fingerprint (batch/group.py, issue 22): one signature per cause,
as an error tracker groups, on real recordings."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from mwms_doctor.batch.find import JobRef
from mwms_doctor.batch.group import FINGERPRINT_VERSION, what_failed
from mwms_doctor.batch.run import triage_one
from mwms_doctor.pipeline import load_tables

from .paths import BLIND_RUNS, EXCERPTS, RUNS


def _row(logs: Path) -> dict:  # type: ignore[type-arg]
    row, _ = triage_one(JobRef(str(logs), logs.name), "job")
    assert row["fingerprint_version"] == FINGERPRINT_VERSION
    return row


# Four scripts' own bugs, each its own cause: a ValueError in a custom loop, an
# assert in a Keras callback, a ValueError in a Keras script, a missing module.
EXCEPTIONS = (
    "b33_valueerror_midtraining_ctl",
    "b34_assert_in_callback_keras",
    "c03_valueerror_keras_hosts",
    "b09_import_error_before_connect",
)


def test_different_bugs_in_the_script_never_share_a_signature() -> None:
    """Under 'Traceback (most recent call last):' every uncaught exception
    looks alike; the fingerprint is its type and the script's innermost frame."""
    sigs = {name: _row(BLIND_RUNS / name / "logs")["signature"] for name in EXCEPTIONS}
    assert len(set(sigs.values())) == len(sigs), sigs
    for sig in sigs.values():
        assert "Traceback" not in sig
        assert re.search(r"\| \w+(?:Error|Exception)? in [\w.-]+\.py in \w+|\| \w+Error: ", sig), sig


def _moved(src: Path, dst: Path) -> Path:
    """The same job's logs as if recorded elsewhere and another day: other
    hosts, ports, paths, dates and line numbers of the script."""
    shutil.copytree(src, dst)
    for f in dst.rglob("*"):
        if not f.is_file():
            continue
        text = f.read_text(encoding="utf-8", errors="surrogateescape")
        text = text.replace("127.0.0.1", "10.4.7.19").replace("localhost", "node-b7")
        text = re.sub(r":2\d{3}\b", lambda m: f":{int(m.group()[1:]) + 3011}", text)
        text = text.replace("/tmp/", "/scratch/jobs/nightly-42/")
        text = re.sub(r"\b2026-11-(\d\d)", r"2027-02-\1", text)
        text = re.sub(
            r'(File "[^"]*/(?!site-packages)[^"/]+\.py", line )(\d+)',
            lambda m: m[1] + str(int(m[2]) + 7),
            text,
        )
        f.write_text(text, encoding="utf-8", errors="surrogateescape")
    return dst


@pytest.mark.parametrize(
    "run",
    [BLIND_RUNS / "b33_valueerror_midtraining_ctl", RUNS / "oom", RUNS / "tf_config_index_out_of_range"],
    ids=lambda p: p.name,
)
def test_the_same_cause_elsewhere_and_another_day_has_the_same_signature(run: Path, tmp_path: Path) -> None:
    here = _row(run / "logs")
    there = _row(_moved(run / "logs", tmp_path / "moved"))
    assert (there["class"], there["signature"]) == (here["class"], here["signature"])


def test_no_signature_is_a_generic_line() -> None:
    for name in ("oom", "version_skew", "tf_config_malformed", "peer_killed", "host_oom"):
        sig = _row(RUNS / name / "logs")["signature"]
        what = sig.rsplit(" | ", 1)[-1]
        assert what and not re.match(r"Traceback|<n>|INFO|oneDNN|\s*$", what), sig


def _record(logs: Path, words: str) -> str:
    """The text of the first recorded record holding ``words``."""
    tables, _ = load_tables(logs)
    return next(r["text"] for r in tables.events.to_pylist() if words in r["text"])


def test_what_failed_reads_an_exception_by_type_and_the_scripts_frame() -> None:
    """Recorded tracebacks: the same ValueError with the script moved and
    edited above it reads the same; another script's ValueError does not."""
    a = _record(BLIND_RUNS / "b33_valueerror_midtraining_ctl" / "logs", "ValueError")
    # The script's own checkout elsewhere (the libraries stay where they are installed).
    moved = a.replace("/tmp/famb-jobs/b33_valueerror_midtraining_ctl/app/", "/srv/other/checkout/")
    assert moved != a
    moved = re.sub(r'(checkout/train_ctl\.py", line )(\d+)', lambda m: f"{m[1]}{int(m[2]) + 7}", moved)
    other = _record(BLIND_RUNS / "c03_valueerror_keras_hosts" / "logs", "ValueError")
    assert what_failed(a) == what_failed(moved) == "ValueError in train_ctl.py in smoothed"
    assert what_failed(other) != what_failed(a)


def test_sizes_in_any_unit_are_masked() -> None:
    """The BFC allocator's summary as TF 1.x printed it in a public thread
    (10.22GiB) and as TF 2.21 printed it here (320.0KiB): one template."""
    from mwms_doctor.text import mask_message

    old = _record(EXCERPTS / "corpus" / "tensorflow-tensor2tensor-1866" / "excerpt.txt", "Sum Total")
    new = _record(RUNS / "oom" / "logs", "Sum Total")
    old_line = next(ln for ln in old.splitlines() if "Sum Total" in ln)
    new_line = next(ln for ln in new.splitlines() if "Sum Total" in ln)
    assert "GiB" in old_line and "KiB" in new_line
    assert mask_message(old_line) == mask_message(new_line) == "Sum Total of in-use chunks: <size>"


def test_a_labelled_night_never_puts_two_causes_under_one_signature(tmp_path: Path) -> None:
    """Every recorded run of the tuned set as one night: jobs that share a
    signature share their labelled class, and the same cause recorded in
    other layouts (peer_killed under compose, CRI, Slurm, a clock skew)
    shares one signature; no signature is a peer's report of the failure."""
    import json

    from mwms_doctor.batch import run_triage

    night = tmp_path / "night"
    labels = {}
    for run in sorted(RUNS.iterdir()):
        if (run / "expected.json").exists():
            shutil.copytree(run / "logs", night / run.name)
            labels[run.name] = json.loads((run / "expected.json").read_text())["class"]
    rows = run_triage([night], tmp_path / "t")
    by_sig: dict[str, set[str]] = {}
    names: dict[str, str] = {}
    for r in rows:
        if r["status"] in ("healthy", "error"):
            continue
        name = r["job"].split("/", 1)[1]
        names[name] = r["signature"]
        by_sig.setdefault(r["signature"], set()).add(labels[name])
    assert all(len(classes) == 1 for classes in by_sig.values()), by_sig
    dead = {
        names[n]
        for n in ("peer_killed", "compose_peer_killed", "k8s_cri_peer_killed", "clock_skew_peer_killed")
    }
    assert len(dead) == 1, dead
    assert not any("collective.aborted" in s or "Socket closed" in s for s in by_sig)

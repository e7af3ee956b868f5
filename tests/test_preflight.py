"""``mwms-doctor preflight`` (issue 25) on real processes: one per task on
localhost, each with its TF_CONFIG, at the same time, as a user would run it
on every worker before the job."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import mwms_doctor
import pytest
from mwms_doctor.preflight import compare


def _free_ports(n: int) -> list[int]:
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def _configs(ports: list[int]) -> list[dict[str, object]]:
    cluster = {"worker": [f"127.0.0.1:{p}" for p in ports]}
    return [{"cluster": cluster, "task": {"type": "worker", "index": i}} for i in range(len(ports))]


def _start(config: dict[str, object], out: Path, timeout: float, extra: list[str]) -> subprocess.Popen[str]:
    """One worker's ``mwms-doctor preflight`` with its TF_CONFIG, writing under ``out``."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mwms_doctor",
            "preflight",
            "--timeout",
            str(timeout),
            "--out",
            str(out),
            *extra,
        ],
        env={**os.environ, "TF_CONFIG": json.dumps(config)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _run_all(
    configs: list[dict[str, object]], out: Path, timeout: float = 12.0, *extra: str
) -> list[tuple[int, dict[str, object]]]:
    procs = [_start(c, out / str(i), timeout, list(extra)) for i, c in enumerate(configs)]
    results = []
    for i, p in enumerate(procs):
        p.wait(timeout=timeout + 180)
        (report,) = (out / str(i)).glob("preflight-*.json")
        results.append((p.returncode, json.loads(report.read_text())))
    return results


def test_a_good_cluster_passes(tmp_path: Path) -> None:
    results = _run_all(_configs(_free_ports(3)), tmp_path, 12.0, "--no-allreduce")
    for code, report in results:
        assert code == 0, report["findings"]
        assert report["status"] == "ok"
        assert set(report["reach"].values()) == {"ok"}
        assert report["allreduce"] == {}


def test_the_tiny_allreduce_runs_over_the_real_cluster(tmp_path: Path) -> None:
    # Two workers: the checks pass, then each creates the MultiWorkerMirroredStrategy on
    # its task's port and all-reduces 1.0; each gets 2.
    results = _run_all(_configs(_free_ports(2)), tmp_path, 12.0, "--allreduce-timeout", "150")
    for code, report in results:
        assert code == 0, (report["findings"], report["allreduce"])
        assert report["allreduce"]["status"] == "ok"
        assert report["allreduce"]["detail"].startswith("sum 2 over 2 replicas")
    html = next((tmp_path / "0").glob("preflight-*.html")).read_text()
    assert "worker:0" in html and "all-reduce" in html


def test_a_duplicate_task_index_is_caught(tmp_path: Path) -> None:
    configs = _configs(_free_ports(3))
    configs[2] = {**configs[2], "task": {"type": "worker", "index": 1}}  # copied from worker 1's
    results = _run_all(configs, tmp_path)
    assert all(code == 1 for code, _ in results)
    said = " ".join(f["summary"] for _, r in results for f in r["findings"])
    assert "cannot listen on" in said  # the second process given worker:1
    assert "cannot reach worker:2" in said and "nothing listens there" in said  # no one is worker:2


def test_a_task_missing_from_one_workers_cluster_is_caught(tmp_path: Path) -> None:
    configs = _configs(_free_ports(3))
    short = {"worker": configs[0]["cluster"]["worker"][:2]}  # type: ignore[index]
    configs[0] = {"cluster": short, "task": {"type": "worker", "index": 0}}
    results = _run_all(configs, tmp_path)
    assert all(code == 1 for code, _ in results)
    found = [f for _, r in results for f in r["findings"] if f["cls"] == "tf_config_mismatch"]
    assert any("worker:2 missing from its cluster" in f["summary"] for f in found)


def test_a_port_nothing_listens_on_is_refused_and_named(tmp_path: Path) -> None:
    configs = _configs(_free_ports(3))
    results = _run_all(configs[:2], tmp_path, timeout=6.0)  # worker:2 never started
    for code, report in results:
        assert code == 1
        (finding,) = [f for f in report["findings"] if f["task"] == "worker:2"]
        assert finding["cls"] == "handshake_deadlock" and "nothing listens there" in finding["summary"]
        assert report["reach"]["worker:2"] == "refused"
        assert report["allreduce"]["status"] == "not run"  # the job would not start: no all-reduce tried


def test_an_allreduce_a_peer_never_joins_times_out_and_says_why(tmp_path: Path) -> None:
    # The checks pass on both; worker:1 then runs no all-reduce (--no-allreduce), so
    # worker:0's strategy waits for it at the handshake until its limit.
    configs = _configs(_free_ports(2))
    extras = (["--allreduce-timeout", "25"], ["--no-allreduce"])
    procs = [
        _start(c, tmp_path / str(i), 12.0, x) for i, (c, x) in enumerate(zip(configs, extras, strict=True))
    ]
    codes = [p.wait(timeout=200) for p in procs]
    report = json.loads(next((tmp_path / "0").glob("preflight-*.json")).read_text())
    assert codes == [1, 0]
    assert report["allreduce"]["status"] == "timed out"
    (f,) = report["findings"]
    assert f["cls"] == "handshake_deadlock" and "all-reduce over the cluster timed out" in f["summary"]
    assert "never formed" in f["summary"]  # analyze's reading of the all-reduce's stderr and its kill
    html = next((tmp_path / "0").glob("preflight-*.html")).read_text()
    assert "timed out" in html and "<pre>" in html  # the all-reduce's stderr, shown


SECOND_PYTHON = os.environ.get("MWMS_TEST_SECOND_TF_PYTHON", "")


@pytest.mark.skipif(
    not SECOND_PYTHON,
    reason="needs an interpreter with another TensorFlow in MWMS_TEST_SECOND_TF_PYTHON "
    "(python -m venv v; v/bin/pip install tensorflow-cpu==2.20.0)",
)
def test_a_worker_really_on_another_tensorflow_is_named(tmp_path: Path) -> None:
    # worker:1's preflight runs in the other interpreter (mwms_doctor from this checkout on its path).
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "mwms_doctor").symlink_to(Path(mwms_doctor.__file__).parent)
    configs = _configs(_free_ports(2))
    code = (
        "import json, os, sys; from mwms_doctor.preflight import run, with_allreduce; "
        "r = with_allreduce(run(os.environ['TF_CONFIG'], 15.0), os.environ['TF_CONFIG'], 150.0); "
        "print(json.dumps(r.as_json()))"
    )
    procs = [
        subprocess.Popen(
            [py, "-c", code],
            env={**os.environ, "TF_CONFIG": json.dumps(c), "PYTHONPATH": str(shim)},
            stdout=subprocess.PIPE,
            text=True,
        )
        for py, c in zip((sys.executable, SECOND_PYTHON), configs, strict=True)
    ]
    reports = [json.loads(p.communicate(timeout=240)[0].splitlines()[-1]) for p in procs]
    for report in reports:
        skew = [f for f in report["findings"] if f["cls"] == "version_skew"]
        assert skew and skew[0]["severity"] == "error", report["findings"]
    (theirs,) = [f for f in reports[0]["findings"] if f["cls"] == "version_skew"]
    assert theirs["task"] == "worker:1" and reports[1]["facts"]["versions"]["tensorflow"] in theirs["summary"]
    assert all(r["allreduce"]["status"] == "not run" for r in reports)


def test_a_worker_on_another_tensorflow_is_named() -> None:
    # The comparison itself, on the facts two workers exchange (a second
    # TensorFlow in a test run's environment is not to be had here).
    cluster = {"worker": ["h:1", "h:2"]}
    me = {
        "task": "worker:0",
        "tf_config": {"cluster": cluster},
        "versions": {"tensorflow": "2.21.0", "python": "3.11.7"},
    }
    peer = {
        **me,
        "task": "worker:1",
        "versions": {"tensorflow": "2.19.0", "python": "3.11.7"},
        "offset_s": 0.01,
    }
    (f,) = compare("worker:0", me, {"worker:1": peer})
    assert (f.severity, f.cls, f.task) == ("error", "version_skew", "worker:1") and "2.19.0" in f.summary


def test_no_tf_config_is_a_clear_failure(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TF_CONFIG"}
    p = subprocess.run(
        [sys.executable, "-m", "mwms_doctor", "preflight", "--timeout", "1"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 1 and "TF_CONFIG is not set" in p.stdout and "Traceback" not in p.stderr

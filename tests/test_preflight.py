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


def _run_all(
    configs: list[dict[str, object]], out: Path, timeout: float = 12.0
) -> list[tuple[int, dict[str, object]]]:
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mwms_doctor",
                "preflight",
                "--timeout",
                str(timeout),
                "--out",
                str(out / str(i)),
            ],
            env={**os.environ, "TF_CONFIG": json.dumps(c)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i, c in enumerate(configs)
    ]
    results = []
    for i, p in enumerate(procs):
        p.wait(timeout=timeout + 60)
        (report,) = (out / str(i)).glob("preflight-*.json")
        results.append((p.returncode, json.loads(report.read_text())))
    return results


def test_a_good_cluster_passes(tmp_path: Path) -> None:
    results = _run_all(_configs(_free_ports(3)), tmp_path)
    for code, report in results:
        assert code == 0, report["findings"]
        assert report["status"] == "ok"
        assert set(report["reach"].values()) == {"ok"}


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

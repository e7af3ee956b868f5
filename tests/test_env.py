"""Env files and version facts → the env table."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from mwms_doctor.ingest.env import (
    REDACTED,
    cudnn_version,
    env_rows_from_events,
    env_rows_from_text,
    env_table,
    read_env_file,
    sniff_env,
)
from mwms_doctor.tables import ENV

from .paths import FIXTURES, RULE_CASES, RUNS

EVIDENCE = FIXTURES / "evidence" / "env"


def _read(path: Path) -> tuple[str | None, list[dict[str, object]], str | None]:
    kind = sniff_env(path.read_text(encoding="utf-8")[:8192], path.name)
    if kind is None:
        return None, [], None
    read = read_env_file(path, path.name, kind)
    return kind, read.rows, read.task


def _values(rows: list[dict[str, object]]) -> dict[str, object]:
    return {str(r["key"]): r["value"] for r in rows}


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        (EVIDENCE / "pip_freeze" / "pip-freeze.txt", "pip_freeze"),
        (EVIDENCE / "pip_freeze" / "pip_freeze_at.txt", "pip_freeze"),
        (EVIDENCE / "pip_list" / "pip-list.txt", "pip_list"),
        (EVIDENCE / "env_dump" / "env.txt", "env_dump"),
        (EVIDENCE / "tf_config" / "tf_config.json", "tf_config"),
        (EVIDENCE / "nvidia_smi" / "nvidia-smi.txt", "nvidia_smi"),
        (EVIDENCE / "nvidia_smi" / "nvidia-smi-old.txt", "nvidia_smi"),
        (EVIDENCE / "dmesg" / "dmesg.txt", "kernel"),
        (EVIDENCE / "k8s_pod" / "describe-worker-1.txt", "k8s_pod"),
    ],
)
def test_sniff_env_kinds(path: Path, kind: str) -> None:
    assert sniff_env(path.read_text(encoding="utf-8")[:8192], path.name) == kind


def _worker_logs() -> list[Path]:
    return sorted([*RUNS.glob("*/logs/*.log"), *RULE_CASES.glob("*/*/logs/*.log")])


@pytest.mark.parametrize("path", _worker_logs(), ids=lambda p: f"{p.parts[-3]}/{p.name}")
def test_worker_logs_are_never_env_files(path: Path) -> None:
    # Named like a pip dump or not, a TF log stays a log.
    head = path.read_text(encoding="utf-8")[:8192]
    assert sniff_env(head, path.name) is None
    assert sniff_env(head, "pip-freeze.txt") is None
    assert sniff_env(head, "env.txt") is None


@pytest.mark.parametrize(
    "head",
    [
        "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\nKeyError: 'x'\n",
        "I0000 00:00:1795285805.270246    2057 port.cc:153] oneDNN custom operations are on.\nabsl-py==2.1.0\n",
        "exit_code: 137\nsignal: SIGKILL\n",  # an exit record is exit_status.py's, not an env file
        "Epoch 1/3\n8/8 - 2s - loss: 0.7264 - accuracy: 0.5521\n",
        "",
    ],
)
def test_near_miss_heads(head: str) -> None:
    assert sniff_env(head, "anything.txt") is None


def test_pip_freeze_real() -> None:
    _, rows, task = _read(EVIDENCE / "pip_freeze" / "pip-freeze.txt")
    values = _values(rows)
    assert values["tensorflow"] == "2.21.0"
    assert values["tf-keras"] == "2.21.0"  # tf_keras, PEP 503-normalised
    assert values["tensorflow-cpu"] == "2.21.0"
    assert all(r["kind"] == "package" and not r["redacted"] for r in rows)
    assert task is None


def test_pip_freeze_at_and_editable() -> None:
    _, rows, _ = _read(EVIDENCE / "pip_freeze" / "pip_freeze_at.txt")
    values = _values(rows)
    assert values["tensorflow"] == "2.15.1"
    assert values["my-trainer"] == "file:///workspace/trainer"
    assert str(values["utils"]).startswith("git+https://")


def test_pip_list_real() -> None:
    _, rows, _ = _read(EVIDENCE / "pip_list" / "pip-list.txt")
    values = _values(rows)
    assert values["tensorflow"] == "2.21.0" and values["keras"] == "3.15.1"
    assert "package" not in values and "----------------------------" not in values


def test_env_dump_keeps_tf_vars_and_redacts_secrets() -> None:
    path = EVIDENCE / "env_dump" / "env.txt"
    _, rows, task = _read(path)
    values = _values(rows)
    assert task == "worker:1"
    assert values["TF_CONFIG.task.type"] == "worker" and values["TF_CONFIG.task.index"] == "1"
    assert (
        values["TF_CONFIG.cluster.worker"]
        == '["trainer-worker-0.trainer:2222", "trainer-worker-1.trainer:2222"]'
    )
    assert values["NCCL_DEBUG"] == "INFO" and values["CUDA_VISIBLE_DEVICES"] == "0,1"
    assert values["LD_LIBRARY_PATH"] == "/usr/local/cuda/lib64:/usr/local/nvidia/lib64"
    for key in ("TF_SERVICE_PASSWORD", "GRPC_AUTH_TOKEN", "TF_EXTRA_HEADER"):
        assert values[key] == REDACTED
    assert {str(r["key"]) for r in rows if r["redacted"]} == {
        "TF_SERVICE_PASSWORD",
        "GRPC_AUTH_TOKEN",
        "TF_EXTRA_HEADER",
    }
    # Dropped: not TF's business, and never stored.
    for key in ("HOME", "PATH", "HOSTNAME", "WANDB_API_KEY", "AWS_SECRET_ACCESS_KEY"):
        assert key not in values
    secrets = ["not-a-real-password-123", "fake-token-value", "ghp_FAKE", "0123456789abcdef0123", "FAKEfake/"]
    stored = " ".join(str(v) for r in rows for v in r.values())
    assert not any(s in stored for s in secrets)


def test_tf_config_file() -> None:
    _, rows, task = _read(EVIDENCE / "tf_config" / "tf_config.json")
    values = _values(rows)
    assert task == "worker:0"
    assert values["TF_CONFIG.cluster.chief"] == '["trainer-chief-0.trainer:2222"]'
    assert values["TF_CONFIG.environment"] == "cloud"
    assert all(r["kind"] == "tf_config" for r in rows)


def test_nvidia_smi_both_layouts() -> None:
    _, new, _ = _read(EVIDENCE / "nvidia_smi" / "nvidia-smi.txt")
    v = _values(new)
    assert (v["driver_version"], v["cuda_version"]) == ("535.104.05", "12.2")
    assert (v["gpu0.name"], v["gpu0.memory_used"], v["gpu0.memory_total"]) == (
        "NVIDIA A10G",
        "22466MiB",
        "23028MiB",
    )
    assert (v["gpu1.memory_used"], v["gpu1.bus_id"]) == ("4MiB", "00000000:00:1C.0")
    assert v["gpu0.process.4127"] == "python 22458MiB"
    _, old, _ = _read(EVIDENCE / "nvidia_smi" / "nvidia-smi-old.txt")
    v = _values(old)
    assert (v["driver_version"], v["gpu0.name"], v["gpu0.memory_total"]) == (
        "418.87.00",
        "Tesla T4",
        "15109MiB",
    )
    assert v["gpu0.process.2311"] == "/usr/bin/python3 14859MiB"


def test_kernel_oom_killer() -> None:
    _, rows, _ = _read(EVIDENCE / "dmesg" / "dmesg.txt")
    kills = [(r["line"], r["value"]) for r in rows if r["key"] == "oom_kill.pid"]
    # oom_reaper's "reaped process" is the aftermath, and the pre-4.19 "Kill process X ... or
    # sacrifice child" names the candidate: only "Killed process" lines are kills.
    assert kills == [(4, "5120"), (7, "6644"), (9, "7003")]
    scope = {r["line"]: r["value"] for r in rows if r["key"] == "oom_kill.scope"}
    assert scope == {4: "cgroup", 7: "global", 9: "cgroup"}
    rss = {r["line"]: r["value"] for r in rows if r["key"] == "oom_kill.anon_rss_kb"}
    assert rss[7] == "15370088"  # thousands separators dropped
    assert ("oom_kill.constraint", "CONSTRAINT_MEMCG") in {(r["key"], r["value"]) for r in rows}
    xid = [r["value"] for r in rows if r["key"] == "nvrm_xid"]
    assert xid and str(xid[0]).startswith("79 ")
    assert all(r["kind"] == "kernel" for r in rows)


def test_kubectl_describe_exit_and_env() -> None:
    _, rows, task = _read(EVIDENCE / "k8s_pod" / "describe-worker-1.txt")
    v = _values(rows)
    assert task == "worker:1"
    assert (v["k8s.last_state"], v["k8s.last_state.reason"], v["k8s.last_state.exit_code"]) == (
        "Terminated",
        "OOMKilled",
        "137",
    )
    assert v["k8s.state"] == "Running" and "k8s.state.exit_code" not in v
    assert v["k8s.restart_count"] == "1"
    assert v["TF_CONFIG.task.index"] == "1"
    assert v["TF_HUB_AUTH_TOKEN"] == REDACTED
    assert "WANDB_API_KEY" not in v
    assert "not-a-real-token" not in " ".join(str(r["value"]) for r in rows)


# --- version facts in the workers' own logs ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("TensorFlow version: 2.21.0", ("banner", "tensorflow", "2.21.0")),
        ("tensorflow==2.15.1", ("banner", "tensorflow", "2.15.1")),
        ("Keras version: 3.15.1", ("banner", "keras", "3.15.1")),
        ("tf_keras==2.21.0", ("banner", "tf-keras", "2.21.0")),
        ("Python 3.11.9 (main, Apr  2 2024, 08:25:04) [GCC 12.2.0]", ("banner", "python", "3.11.9")),
        ("Loaded cuDNN version 8902", ("banner", "cudnn", "8.9.2")),
        ("Loaded cuDNN version 90300", ("banner", "cudnn", "9.3.0")),
        (
            "Created device /job:localhost/replica:0/task:0/device:GPU:0 with 13598 MB memory:  -> device: 0, "
            "name: Tesla T4, pci bus id: 0000:00:04.0, compute capability: 7.5",
            ("gpu", "gpu0.compute_capability", "7.5"),
        ),
        (
            "Created TensorFlow device (/job:localhost/replica:0/task:0/device:GPU:1 with 3065 MB memory) -> "
            "physical GPU (device: 1, name: GeForce GTX 1050 Ti, pci bus id: 0000:01:00.0, compute capability: 6.1)",
            ("gpu", "gpu1.name", "GeForce GTX 1050 Ti"),
        ),
    ],
)
def test_version_facts(text: str, fact: tuple[str, str, str]) -> None:
    assert fact in env_rows_from_text(text)


@pytest.mark.parametrize(
    "text",
    [
        "Could not find cuda drivers on your machine, GPU will not be used.",
        "This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations.",
        "Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.85GiB with freed_by_count=0.",
    ],
)
def test_no_version_facts(text: str) -> None:
    assert env_rows_from_text(text) == []


def test_cudnn_version_numbers() -> None:
    assert cudnn_version("8600") == "8.6.0"
    assert cudnn_version("92302") == "9.23.2"


def _events(texts: list[str], kinds: list[str | None] | None = None) -> pa.Table:
    n = len(texts)
    return pa.table(
        {
            "worker": ["worker:1"] * n,
            "source": ["worker-1.log"] * n,
            "line": pa.array(range(1, n + 1), pa.int32()),
            "kind": pa.array(kinds or [None] * n, pa.string()),
            "text": texts,
            "fields": pa.array([None] * n, pa.map_(pa.string(), pa.string())),
        }
    )


def test_env_from_events_and_table() -> None:
    events = _events(["Epoch 1/3", "TensorFlow version: 2.21.0", "Loaded cuDNN version 8902"])
    rows = env_rows_from_events(events)
    assert [(r["worker"], r["line"], r["key"], r["value"]) for r in rows] == [
        ("worker:1", 2, "tensorflow", "2.21.0"),
        ("worker:1", 3, "cudnn", "8.9.2"),
    ]
    table = env_table(rows)
    assert table.schema == ENV
    assert table.num_rows == 2


def test_env_table_from_files_for_a_worker() -> None:
    path = EVIDENCE / "env_dump" / "env.txt"
    read = read_env_file(path, "logs/env.txt", "env_dump")
    table = env_table(read.for_worker(read.task or "?"))
    assert table.schema == ENV
    assert set(table.column("worker").to_pylist()) == {"worker:1"}
    assert env_table([]).schema == ENV

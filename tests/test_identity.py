"""Which worker wrote each log, from the job's layout and content, on the
blind family's real layouts (host folders, node folders with TF_CONFIG files,
rank/task/pod names); and log-viewer exports that name pods per entry."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from mwms_doctor.engine import run_rules
from mwms_doctor.facts import establish
from mwms_doctor.pipeline import load_tables

from .paths import BLIND_RUNS, RUNS


def _workers(run: str) -> dict[str, dict]:  # type: ignore[type-arg]
    tables, _ = load_tables(BLIND_RUNS / run / "logs")
    return {r["worker"]: r for r in tables.workers.to_pylist()}


def test_stdout_and_stderr_of_one_host_folder_are_one_worker() -> None:
    # host-b's stdout says "worker 1 of 3"; its stderr (TF's lines) says nothing of itself.
    w = _workers("b34_assert_in_callback_keras")
    assert w["worker:1"]["sources"] == ["host-b/stderr.log", "host-b/stdout.log"]
    assert not [k for k in w if k.startswith("?")]


def test_tf_config_file_beside_a_log_names_it_and_siblings_fill_the_gap() -> None:
    # node-1's TF_CONFIG is cut short (the fault): its number among node-0..node-2,
    # confirmed by the others' TF_CONFIG files, says it is worker:1.
    w = _workers("b10_tfconfig_file_malformed")
    assert w["worker:0"]["identity_from"] == "TF_CONFIG beside it"
    assert w["worker:1"]["sources"] == ["node-1/output.log"]
    assert w["worker:1"]["identity_from"].startswith("layout")


def test_pod_names_without_a_role_are_numbered_like_their_siblings() -> None:
    w = _workers("b18_killed_statefulset_pods")
    assert w["worker:3"]["sources"] == ["trainer-3.log"]


def test_processes_that_cannot_be_told_apart_are_never_merged() -> None:
    # Two hosts whose logs say nothing of their task: two unnamed workers, not one.
    w = _workers("b14_firewall_leader")
    unnamed = [k for k in w if k.startswith("?")]
    assert sorted(unnamed) == ["?host-b", "?host-c"]
    assert all(len(w[k]["sources"]) == 1 for k in unnamed)


def test_cloud_logging_json_export_of_a_real_job(tmp_path: Path) -> None:
    """The recorded peer_killed job, as Cloud Logging exports it: one JSON entry
    per line, the pod named in resource.labels.pod_name, all pods in one file."""
    entries = []
    t0 = dt.datetime(2026, 11, 21, 12, 0, tzinfo=dt.timezone.utc)
    for i in range(3):
        for n, line in enumerate(
            (RUNS / "peer_killed" / "logs" / f"worker-{i}.log").read_text().splitlines()
        ):
            entries.append(
                {
                    "textPayload": line,
                    "timestamp": (t0 + dt.timedelta(milliseconds=n)).isoformat().replace("+00:00", "Z"),
                    "resource": {"type": "k8s_container", "labels": {"pod_name": f"tfjob-mnist-worker-{i}"}},
                    "severity": "DEFAULT",
                }
            )
    (tmp_path / "export.json").write_text("\n".join(json.dumps(e) for e in entries) + "\n")
    tables, _ = load_tables(tmp_path)
    assert {r["worker"] for r in tables.workers.to_pylist() if r["has_log"]} == {
        "worker:0",
        "worker:1",
        "worker:2",
    }
    v = run_rules(establish(tables)).verdict
    assert (v.cls, v.root_workers) == ("peer_died", ["worker:1"])


def test_a_task_claimed_outside_the_cluster_is_placed_by_the_layout() -> None:
    """node-2's TF_CONFIG says index 3 of a 3-worker cluster (the fault): it is
    worker:2 by its folder, the claim is noted, and no second process is
    invented to share a task with it."""
    tables, _ = load_tables(BLIND_RUNS / "c05_tfconfig_index_keras_nodes" / "logs")
    w = {r["worker"]: r for r in tables.workers.to_pylist()}
    assert w["worker:2"]["sources"] == ["node-2/output.log"]
    assert "claims worker:3" in (w["worker:2"]["identity_note"] or "")
    assert "worker:3" not in w
    codes = [f.code for f in run_rules(establish(tables)).findings]
    assert codes[0] == "TC001" and "TC006" in codes and "TC003" not in codes

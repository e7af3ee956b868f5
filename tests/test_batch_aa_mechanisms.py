"""What blind batch AA's first score (87.5% class, 87.5% root) missed, on the
batch's own recordings (fixtures/blind/batch_aa, labels committed before
recording). Verdicts are held by tests/test_blind_runs.py; these hold how the
evidence is read, each mechanism on the run that showed it."""

from __future__ import annotations

from mwms_doctor.ingest.env import _read_compose, sniff_env
from mwms_doctor.ingest.messages import says
from mwms_doctor.pipeline import load_job, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_aa" / "runs"


def _codes(run: str) -> list[str]:
    return [f.code for f in run_job(RUNS / run / "logs", formats=()).model.findings if f.severity == "error"]


def test_tfs_keras_lazy_loader_failing_is_the_environment() -> None:
    # aa11: a TF 2.19 image without tf_keras under TF_USE_LEGACY_KERAS=1; TF's own
    # lazy_loader.py raises "ImportError: Keras cannot be imported. Check that it is
    # installed." from a call into tf.keras, not from an import statement.
    assert says("Keras cannot be imported. Check that it is installed.", "stack_mismatch")
    assert _codes("aa11")[0] == "VS003"


def test_a_compose_files_tf_configs_are_each_services_view() -> None:
    # aa06: compose.yaml holds each service's TF_CONFIG; its own task names whose view it is.
    text = (RUNS / "aa06" / "logs" / "compose.yaml").read_text()
    assert sniff_env(text[:4096], "compose.yaml") == "compose"
    views = {
        r["worker"]
        for r in _read_compose(text, "compose.yaml").rows
        if r["key"] == "TF_CONFIG.cluster.worker"
    }
    assert views == {"chief:0", "worker:0", "worker:1"}
    job, _ = load_job(RUNS / "aa06" / "logs")
    assert set(job.facts.cluster_views) == {"chief:0", "worker:0", "worker:1"}


def test_a_published_port_refused_while_every_task_listens_behind_its_mapping() -> None:
    # aa06: every task listens on its container port (57220-57222) behind published
    # ports (57200-57202, as TF_CONFIG lists them); only worker:0's published port is
    # refused, and worker:0 itself, running, reports the refusal of its own address. No
    # cluster list misdials it (TC002 before): the path to it is blocked.
    codes = _codes("aa06")
    assert codes[0] == "FW001" and "TC002" not in codes


def test_a_hangs_stuck_ones_are_the_clusters_tasks() -> None:
    # aa03: the CI runner's transcript (ci-job.log) is no task; it is not named as stuck.
    roots = run_job(RUNS / "aa03" / "logs", formats=()).model.verdict["root_workers"]
    assert roots and not any(w.startswith("?") for w in roots)

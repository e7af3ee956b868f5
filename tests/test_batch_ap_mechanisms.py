"""What blind batch AP's first score (93.8% class, 80.0% root, no false
alarm) missed, on the batch's own recording (fixtures/blind/batch_ap, labels
committed before recording). Verdicts are held by tests/test_blind_runs.py;
this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.pipeline import load_tables

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_ap" / "runs"


def _verdict(run: str) -> tuple[str, list[str], str]:
    return verdict(RUNS / run / "logs")


def test_a_script_naming_its_task_in_tfs_attribute_names_is_that_task() -> None:
    # ap07: Metaflow's '[1742/train/14 (pid 24889)]' tags; the script logs
    # 'strategy ready replicas=4 task_type=worker task_id=3'.
    tables, _ = load_tables(RUNS / "ap07" / "logs")
    rows = {r["worker"]: r for r in tables.workers.to_pylist() if r["has_log"]}
    assert set(rows) == {"worker:0", "worker:1", "worker:2", "worker:3"}
    # Metaflow's 'Task failed: process killed by signal 11 (SIGSEGV).' in the task's own stream.
    assert rows["worker:3"]["exit_code"] == 139
    assert _verdict("ap07")[:2] == ("peer_died", ["worker:3"])


def test_one_workers_own_batch_count_falling_to_0_is_its_input_ending() -> None:
    # ap15: 'local_batch=0' on worker:1 from epoch 1 step 6 on, 'local_batch=8' on worker:0;
    # the loss then NaN on both (averaged over zero examples): not a NaN of the model's.
    assert _verdict("ap15")[:2] == ("data_exhaustion", ["worker:1"])

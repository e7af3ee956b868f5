"""What blind batch AO's first score (75.0% class, 66.7% root, two healthy
jobs called identical data) missed, on the batch's own recording
(fixtures/blind/batch_ao, labels committed before recording). Verdicts are
held by tests/test_blind_runs.py; this holds how the evidence is read."""

from __future__ import annotations

import importlib.util

from mwms_doctor.pipeline import load_tables

from .blind import verdict
from .paths import FIXTURES, ROOT

RUNS = FIXTURES / "blind" / "batch_ao" / "runs"


def _verdict(run: str) -> tuple[str, list[str], str]:
    return verdict(RUNS / run / "logs")


def _da003():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(
        "da003", ROOT / "rules" / "data" / "da003_same_local_loss.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_local_timing_beside_an_all_reduced_loss_makes_no_loss_local() -> None:
    # ao13, ao14: 'step ... loss=3.4719 local_s=0.100 allreduce_s=1.249' on every worker,
    # the loss all-reduced (the same everywhere by construction): no identical data.
    da003 = _da003()
    assert not da003._says_local("step epoch=1 step=0 loss=3.4719 local_s=0.100 allreduce_s=1.249")
    assert da003._says_local("step 3 local_loss=1.2")
    assert da003._says_local("loss = 12.84 (local 12.24)")
    assert _verdict("ao13")[2] == "healthy"
    assert _verdict("ao14")[2] == "healthy"


def test_the_same_line_names_the_straggler_by_its_own_timings() -> None:
    # ao08: with the loss no longer read as local, the script's local_s/allreduce_s speak.
    assert _verdict("ao08")[:2] == ("straggler", ["worker:1"])


def test_sruns_word_on_a_ranks_end_is_that_workers_exit() -> None:
    # ao07: 'srun: error: cn042: task 1: Out Of Memory' in a --label file; slurmstepd's
    # 'Detected 1 oom_kill event' in the same file names no task.
    tables, _ = load_tables(RUNS / "ao07" / "logs")
    codes = {r["worker"]: r["exit_code"] for r in tables.workers.to_pylist()}
    assert codes == {"worker:0": 1, "worker:1": 137}
    assert _verdict("ao07")[:2] == ("oom", ["worker:1"])


def test_a_scripts_probe_refused_in_pythons_words_and_one_worker_cut_off() -> None:
    # ao04: 'msg="probe failed" peer=worker:1 ... error=ConnectionRefusedError(111,_'Connection_refused')'
    # from every other worker, and worker:1 refused by all of them: worker:1 is cut off.
    tables, _ = load_tables(RUNS / "ao04" / "logs")
    assert tables.rpc is not None and tables.rpc.num_rows == 4
    assert _verdict("ao04")[:2] == ("firewall_blocked", ["worker:1"])

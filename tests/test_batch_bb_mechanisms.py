"""What blind batch BB's first score (87.5% class, 87.5% root, no false
alarm) missed, on the batch's own recording (fixtures/blind/batch_bb, labels
committed before recording). Verdicts are held by tests/test_blind_runs.py;
this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.pipeline import load_tables

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_bb" / "runs"


def test_a_map_of_named_units_each_with_its_own_output_keeps_them_apart() -> None:
    # bb11: SaltStack's cmd.run_all JSON, {"<minion>": {"pid", "retcode", "stdout",
    # "stderr"}, ...}: read as one stream before, so no worker had a log of its own.
    tables, _ = load_tables(RUNS / "bb11" / "logs")
    named = {r["worker"] for r in tables.workers.to_pylist() if r["has_log"]}
    assert named == {"worker:0", "worker:1", "worker:2"}
    assert verdict(RUNS / "bb11" / "logs") == ("straggler", ["worker:2"], "warning")


def test_a_figure_of_one_workers_own_data_gone_nan_names_where_the_nan_began() -> None:
    # bb12: the all-reduced loss is nan on both workers at epoch 3; only worker:0's own
    # 'input shard stats (shard: 1, rows_read: 240, label_mean: nan)' is not finite, the
    # chief's 'label_mean: 0.1475' is.
    assert verdict(RUNS / "bb12" / "logs") == ("nan_loss", ["worker:0"], "failure")

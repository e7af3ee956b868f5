"""What blind batch BC's first score (93.8% class, 100% root, no false
alarm) missed, on the batch's own recording (fixtures/blind/batch_bc, labels
committed before recording). Verdicts are held by tests/test_blind_runs.py;
this holds how the evidence is read."""

from __future__ import annotations

from pathlib import Path

from mwms_doctor.ingest.templates import classify
from mwms_doctor.ingest.wrappers import app_json_line

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_bc" / "runs"


def test_a_structured_records_list_field_is_part_of_what_it_says() -> None:
    # bc09: '{"ts": ..., "msg": "batch sample ids", "epoch": 1, "step": 0, "ids": [0, 1, 2, 3]}'
    # on both workers at every epoch: the ids were dropped with the list before.
    line = '{"ts": "2026-11-28T08:55:58.711Z", "level": "INFO", "msg": "batch sample ids", "step": 0, "ids": [0, 1, 2, 3]}'
    got = app_json_line(line)
    assert got is not None and got.text.endswith("batch sample ids step=0 ids=[0,1,2,3]")
    # A list of structures stays out; a long list is cut, said so.
    nested = app_json_line(
        '{"level": "INFO", "msg": "m", "a": [{"b": 1}], "c": ' + str(list(range(100))) + "}"
    )
    assert nested is not None and "a=" not in nested.text and nested.text.endswith(",63,...]")
    assert verdict(RUNS / "bc09" / "logs")[0] == "identical_data"


def test_a_step_line_whose_loss_is_named_is_progress(tmp_path: Path) -> None:
    # bc09's 'train epoch=1 step=0 local_loss=3.36339 global_loss=3.36339' was no step: the
    # template wanted the word 'loss' on its own.
    kind, fields, _ = classify("train epoch=1 step=0 local_loss=3.36339 global_loss=3.36339")
    assert (kind, fields.get("step"), fields.get("epoch")) == ("train.step", "0", "1")
    # Then the same local loss on both workers at every step says the same data by
    # itself (the recording without its 'batch sample ids' lines).
    log = (RUNS / "bc09" / "logs" / "train_all.log").read_text()
    (tmp_path / "train_all.log").write_text(
        "".join(ln for ln in log.splitlines(True) if "batch sample ids" not in ln)
    )
    assert verdict(tmp_path)[0] == "identical_data"

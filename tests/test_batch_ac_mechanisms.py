"""What blind batch AC's first score (81.2% class, 75.0% root) missed, on the
batch's own recordings (fixtures/blind/batch_ac, labels committed before
recording). Verdicts are held by tests/test_blind_runs.py; these hold how the
evidence is read, each mechanism on the run that showed it."""

from __future__ import annotations

from mwms_doctor.ingest.identity import unit_of
from mwms_doctor.ingest.templates import classify
from mwms_doctor.pipeline import load_job, load_tables, run_job
from mwms_doctor.series import local_loss

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_ac" / "runs"


def _codes(run: str) -> list[str]:
    return [f.code for f in run_job(RUNS / run / "logs", formats=()).model.findings if f.severity == "error"]


def test_a_local_loss_beside_the_all_reduced_one_is_the_one_compared() -> None:
    # ac04 (healthy): "local_loss=2.6055 loss=2.7766" on worker:1, "local_loss=2.9477
    # loss=2.7766" on worker:0; the all-reduced loss is the same by construction.
    row = {"text": "msg=step epoch=1 step=5 local_loss=2.6055 loss=2.7766", "fields": {"loss": "2.7766"}}
    assert local_loss(row) == "2.6055"
    assert run_job(RUNS / "ac04" / "logs", formats=()).model.verdict["status"] == "healthy"


def test_yarns_aggregated_logs_are_one_section_a_container() -> None:
    # ac06: `yarn logs -applicationId` (TonY): "Container: container_e31_..._000002 on
    # host_45454", then each file between "LogType:stderr" and "End of LogType:stderr".
    tables, _ = load_tables(RUNS / "ac06" / "logs")
    named = {r["worker"] for r in tables.workers.to_pylist() if r["has_log"]}
    assert {"chief:0", "worker:0", "worker:1"} <= named
    texts = tables.events.column("text").to_pylist()
    assert not any(t and t.startswith(("End of LogType", "LogLength:")) for t in texts)


def test_an_option_this_tensorflow_lacks_on_the_worker_whose_build_differs_is_skew() -> None:
    # ac06: "AttributeError: Cannot set the property min_parallelism on AutotuneOptions."
    # raised inside TF's data/util/options.py on the one worker whose TF build differs.
    assert _codes("ac06")[0] == "VS003"


def test_supervisords_child_logs_of_one_program_are_one_process() -> None:
    # ac09: "mwms-w2-stdout---supervisor-rqrubzy8.log" (the script's "[worker:2] ..."
    # prints) and "mwms-w2-stderr---supervisor-rqrubzy8.log" (TF's records, the error).
    assert unit_of("h/mwms-w2-stderr---supervisor-rqrubzy8.log") == unit_of(
        "h/mwms-w2-stdout---supervisor-rqrubzy8.log"
    )
    assert run_job(RUNS / "ac09" / "logs", formats=()).model.verdict["root_workers"] == ["worker:2"]


def test_a_nan_in_one_workers_local_loss_names_that_worker() -> None:
    # ac14: worker:2 "local_loss=nan loss=nan", the others "local_loss=0.92 loss=nan".
    verdict = run_job(RUNS / "ac14" / "logs", formats=()).model.verdict
    assert (verdict["class"], verdict["root_workers"]) == ("nan_loss", ["worker:2"])


def test_an_epoch_that_ran_no_step_is_no_progress() -> None:
    # ac16: worker:1's input ran out in epoch 3; it logged "epoch end epoch=4 ... steps=0"
    # and "epoch=5 ... steps=0", trained nothing more, and exited 0 while the others waited.
    fields = classify("epoch end epoch=4 loss=0.0000 steps=0 seconds=0.1")[1]
    assert fields["epoch_steps"] == "0"
    job, _ = load_job(RUNS / "ac16" / "logs")
    assert job.facts.last_progress["worker:1"]["fields"].get("epoch") == "3"
    assert _codes("ac16")[0] == "DA002"


def test_a_dump_folded_into_the_record_before_it_is_read() -> None:
    # ac02: the watchdog's "no training step completed in 10s, dumping stacks" record
    # holds faulthandler's dump as its continuation lines.
    assert run_job(RUNS / "ac02" / "logs", formats=()).model.verdict["root_workers"] == ["worker:1"]

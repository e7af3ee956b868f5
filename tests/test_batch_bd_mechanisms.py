"""What blind batch BD's first score (93.8% class, 73.3% root, no false
alarm) missed, on the batch's own recording (fixtures/blind/batch_bd, labels
committed before recording). Verdicts are held by tests/test_blind_runs.py;
this holds how the evidence is read."""

from __future__ import annotations

from mwms_doctor.ingest import exports
from mwms_doctor.pipeline import load_tables

from .blind import verdict
from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_bd" / "runs"


def _named(logs) -> set[str]:  # type: ignore[no-untyped-def]
    tables, _ = load_tables(logs)
    return {
        r["worker"] for r in tables.workers.to_pylist() if r["has_log"] and not r["worker"].startswith("?")
    }


def test_a_coralogix_export_is_read_by_its_subsystem() -> None:
    # bd09: Coralogix's NDJSON export, newest first: {"timestamp", "severity",
    # "applicationName", "subsystemName": "mwms-worker-2", "computerName", "category", "text"}.
    # Its message field is "text", and a blank line printed is an entry whose text is "".
    logs = RUNS / "bd09" / "logs"
    head = (logs / "coralogix-export-ml-training.ndjson").read_text()[:262144]
    assert exports.sniff(head) == "ndjson"
    assert _named(logs) == {"worker:0", "worker:1", "worker:2"}
    assert verdict(logs) == ("peer_died", ["worker:2"], "failure")


def test_an_export_whose_entries_include_blank_lines_is_still_an_export() -> None:
    # bd10: NXLog's JSON (im_file, im_kernel, im_systemd records by "Hostname" and
    # "FileName"); seven of its entries are blank lines ("Message": ""). Read as one
    # stream before, the kernel's OOM kill of pid 12695 fell to no worker.
    logs = RUNS / "bd10" / "logs"
    assert exports.sniff((logs / "nxlog" / "mwms-collected.json").read_text()[:262144]) == "ndjson"
    assert verdict(logs) == ("oom", ["worker:0"], "failure")


def test_a_worker_that_removed_the_folder_others_saved_in_is_where_the_conflict_began() -> None:
    # bd16: worker:0 logs 'removing temporary checkpoint dir path=/tmp/bbdjob_run/bd16/ckpt',
    # the chief's own folder; the chief's MergeV2Checkpoints ('ckpt/ckpt-4_temp/part-00000-of-00001
    # did not exist') and worker:1's ('ckpt/tmp_worker_1; No such file or directory') fail.
    # All three were named before: the two that failed and the one that also names the folder.
    assert verdict(RUNS / "bd16" / "logs") == ("checkpoint_conflict", ["worker:0"], "failure")


def test_an_export_whose_message_field_no_list_names_is_read_by_its_shape(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The same export with its message field under a name no list holds ("body_line"):
    # the field on every entry that holds TensorFlow's lines, with the most values, is it.
    text = (RUNS / "bd09" / "logs" / "coralogix-export-ml-training.ndjson").read_text()
    renamed = text.replace('"text": ', '"body_line": ')
    (tmp_path / "export.ndjson").write_text(renamed)
    assert exports.sniff(renamed[:262144]) == "ndjson"
    assert verdict(tmp_path) == ("peer_died", ["worker:2"], "failure")
    # One process's own JSON lines (one writer) are its log, no export.
    one = "\n".join(
        ln
        for ln in renamed.splitlines()
        if '"subsystemName": "mwms-worker-0"' in ln and '"body_line": ""' not in ln
    )
    assert exports.sniff(one + "\n") is None


def test_an_exports_writer_field_named_by_no_list_is_found_by_its_task_names(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # The same export with its writer fields renamed ("svc", "cn"): values such as
    # "mwms-worker-2" on most entries (the platform's "kube-events" on the rest) name the writers.
    text = (RUNS / "bd09" / "logs" / "coralogix-export-ml-training.ndjson").read_text()
    (tmp_path / "export.ndjson").write_text(
        text.replace('"subsystemName": ', '"svc": ').replace('"computerName": ', '"cn": ')
    )
    assert _named(tmp_path) == {"worker:0", "worker:1", "worker:2"}
    assert verdict(tmp_path) == ("peer_died", ["worker:2"], "failure")


def test_a_csv_export_whose_columns_no_list_names_is_read_by_its_shape(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # AZ's az12 Azure Monitor CSV with every column renamed ("When", "Unit", "Line", ...):
    # the column that holds TensorFlow's lines, the one that holds a time and nothing else,
    # the one whose values name tasks. Read as the original is.
    original = FIXTURES / "blind" / "batch_az" / "runs" / "az12" / "logs" / "ContainerLogV2_export.csv"
    lines = original.read_text().split("\n")
    renamed = "\n".join(["When,Machine,Ctr,Unit,Ns,Line,Src", *lines[1:]])
    assert exports.sniff(renamed[:262144]) == "csv"
    (tmp_path / "renamed").mkdir()
    (tmp_path / "renamed" / "export.csv").write_text(renamed)
    (tmp_path / "original").mkdir()
    (tmp_path / "original" / "export.csv").write_text(original.read_text())
    assert (
        verdict(tmp_path / "renamed")
        == verdict(tmp_path / "original")
        == ("preemption", ["worker:0"], "failure")
    )
    tables, _ = load_tables(tmp_path / "renamed")
    assert all(r["ts"] is not None for r in tables.events.to_pylist())
    # A log whose lines hold commas (pm2's stamps before JSON records) is no table.
    pm2 = FIXTURES / "blind" / "batch_l" / "runs" / "l03" / "logs" / "pm2" / "logs" / "mwms-w1-out.log"
    assert exports.sniff(pm2.read_text()[:262144]) is None


def test_a_worker_that_says_its_training_completed_finished_without_an_exit_record(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # bd15 moved into per-worker folders (tests/relayout 'folders'), away from Posit
    # Workbench's job.json exit codes: worker:1's last progress is 'epoch finished epoch=3
    # step=7' and then, in its own words, 'msg="training complete"': it finished early
    # (its input ended), not died. It was peer_died there before.
    from .relayout import TRANSFORMS, Layout

    logs = RUNS / "bd15" / "logs"
    fn, _ = TRANSFORMS["folders"]
    out = tmp_path / "logs"
    assert fn(logs, out, Layout(logs))
    assert verdict(out)[:2] == verdict(logs)[:2] == ("data_exhaustion", ["worker:1"])

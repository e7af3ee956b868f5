"""What blind batch Q's first score showed unread, on the batch's own
recordings (fixtures/blind/batch_q, labels committed before recording).
Verdicts are held by tests/test_blind_runs.py; these hold how the evidence
is read, each mechanism on the run that showed it."""

from __future__ import annotations

from typing import Any

from mwms_doctor.facts import establish
from mwms_doctor.ingest.exports import sniff, to_json_lines
from mwms_doctor.ingest.wrappers import detect
from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_q" / "runs"


def _workers(name: str) -> dict[str, dict[str, Any]]:
    tables, _ = load_tables(RUNS / name / "logs")
    return {r["worker"]: r for r in tables.workers.to_pylist()}


def _verdict(name: str) -> dict[str, Any]:
    return run_job(RUNS / name / "logs").model.verdict


def test_a_process_managers_log_gives_each_programs_last_exit() -> None:
    # q02: circus' "trainer-1: process 22946 exited with status 1; respawning", later "... status 0";
    # each program's log is "<date> <line>" (a stamp before whole lines, tracebacks included).
    lines = (RUNS / "q02/logs/var/log/circus/trainer-1.stdout.log").read_text().splitlines()
    assert detect(lines) == ("stamp",)
    w = _workers("q02")
    assert (w["worker:1"]["exit_code"], w["worker:0"]["exit_code"]) == (0, 0)
    assert "circus.log:8" in w["worker:1"]["exit_note"]  # its last end, not the respawned one
    assert _verdict("q02")["status"] == "healthy"


def test_a_logging_format_with_its_own_date_and_level_is_no_stamp() -> None:
    assert (
        detect(["2026-11-25 02:56:51 INFO trainer: step 1", "2026-11-25 02:56:52 INFO trainer: step 2"]) == ()
    )


def test_a_viewers_export_one_entry_a_line_is_split_by_its_writer() -> None:
    # q03: Graylog, newest first, {"timestamp", "source": "train-worker-1", "message": "<the app's JSON>"}.
    assert sniff((RUNS / "q03/logs/graylog-search-export.json").read_text()) == "ndjson"
    named = sorted(w for w, r in _workers("q03").items() if r["has_log"])
    assert named == ["worker:0", "worker:1", "worker:2", "worker:3"]
    # Entries of one time are listed in either order: the closing line tied with the last epoch counts.
    assert establish(load_tables(RUNS / "q03" / "logs")[0]).facts.all_finished


def test_an_asciinema_recording_is_read_as_the_terminal_showed_it() -> None:
    text = (RUNS / "q04/logs/session.cast").read_text()
    assert sniff(text) == "asciicast"
    first, *_, last = to_json_lines(text, "asciicast").splitlines()
    assert '"2026-11-25T02:57:11.400000+00:00"' in first and "start_both.sh" in first
    assert "$ exit" in last
    # The leader saw every task connect: no "logs end during the start-up".
    assert _verdict("q04")["class"] != "handshake_deadlock"


def test_stream_folders_with_a_file_per_host_pair_into_one_process() -> None:
    # q07/q10: parallel-ssh's -o out -e err: out/10.1.4.21 and err/10.1.4.21.
    w = _workers("q10")
    assert sorted(x for x, r in w.items() if r["has_log"]) == ["worker:0", "worker:1"]
    assert sorted(w["worker:1"]["sources"]) == ["err/10.1.4.22", "out/10.1.4.22"]
    # ... and its console's "[1] 02:59:52 [SUCCESS] 10.1.4.21" is that host's exit 0.
    assert (w["worker:0"]["exit_code"], w["worker:1"]["exit_code"]) == (0, 0)
    assert _verdict("q10")["class"] == "version_skew"


def test_a_peer_address_is_known_from_its_own_server_where_no_spec_was_printed() -> None:
    # q07: the chief's "tcp handshaker shutdown" to 127.0.0.1:46141, which worker:0's server started on.
    tables, _ = load_tables(RUNS / "q07" / "logs")
    peers = {r["peer_task"] for r in tables.rpc.to_pylist() if r["peer"] == "ipv4:127.0.0.1:46141"}
    assert peers == {"worker:0"}
    assert _verdict("q07")["class"] == "firewall_blocked"


def test_a_ci_step_log_and_its_run_record() -> None:
    # q12: Drone's [{"pos", "out", "time"}] step logs, and build.json's steps with exit codes.
    step = (RUNS / "q12/logs/build-312/stage-1/step-3-train-worker-1.json").read_text()
    assert sniff(step) == "json_document"
    assert '"time": ""' in to_json_lines(step, "json_document").splitlines()[0]  # an offset is no time
    w = _workers("q12")
    assert {x: r["exit_code"] for x, r in w.items()} == {"worker:0": 0, "worker:1": 0, "worker:2": 0}


def test_the_other_writers_of_a_shared_checkpoint_folder_are_named() -> None:
    # q15: "03:00:40 [trn01] <line>"; worker:0's MergeV2Checkpoints failed, worker:1 saved to the same folder.
    v = _verdict("q15")
    assert v["class"] == "checkpoint_conflict" and v["root_workers"] == ["worker:0", "worker:1"]
    w = _workers("q15")
    assert w["worker:1"]["exit_code"] == 1 and "trn03" in w["worker:1"]["exit_note"]  # the run's node map


def test_every_worker_ending_on_the_same_lines_together_finished() -> None:
    # q16: after a whole-job restart, every worker's last line is "epoch 3 done: ..." at one moment.
    assert establish(load_tables(RUNS / "q16" / "logs")[0]).facts.all_finished


def test_a_procfile_runners_tags_split_the_workers() -> None:
    # q17: honcho, "03:01:10 worker0.1 | <line>".
    v = _verdict("q17")
    assert (v["class"], v["root_workers"]) == ("worker_exception", ["worker:2"])

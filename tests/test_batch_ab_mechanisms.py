"""What blind batch AB's first score (81.2% class, 73.3% root) missed, on the
batch's own recordings (fixtures/blind/batch_ab, labels committed before
recording). Verdicts are held by tests/test_blind_runs.py; these hold how the
evidence is read, each mechanism on the run that showed it."""

from __future__ import annotations

from mwms_doctor.ingest.env import sniff_env
from mwms_doctor.ingest.templates import classify
from mwms_doctor.pipeline import load_job, load_tables, run_job
from mwms_doctor.stacks import INPUT, TF, main_threads

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_ab" / "runs"


def test_nomads_alloc_status_is_a_record_of_the_task_it_names() -> None:
    # ab03: `nomad alloc status` files ("Name = ctr-mw-train.worker[1]", events newest
    # first: "Terminated  Exit Code: 0, Signal: 2" after "Sent interrupt") were read as
    # three unnamed workers whose "Killed  Task successfully killed" was an OOM kill.
    logs = RUNS / "ab03" / "logs"
    head = (logs / "nomad" / "nomad-alloc-status-ee62ae54.txt").read_text()[:4096]
    assert sniff_env(head, "nomad-alloc-status-ee62ae54.txt") == "nomad_status"
    tables, _ = load_tables(logs)
    workers = {r["worker"]: r for r in tables.workers.to_pylist()}
    assert not any(w.startswith("?") for w in workers)
    assert workers["worker:1"]["exit_code"] == 130  # stopped by SIGINT, as Nomad's event says


def test_a_cloud_logging_json_payload_keeps_the_scripts_fields() -> None:
    # ab10: a JSON logger's record under jsonPayload ({"msg": "step", "step": 24,
    # "data_ms": 351, ...}) was read as its message alone, "step": the numbers that show
    # worker:1's input standing apart were lost.
    tables, _ = load_tables(RUNS / "ab10" / "logs")
    texts = [t for t in tables.events.column("text").to_pylist() if t and t.startswith("step ")]
    assert texts and all("data_ms=" in t and "step_ms=" in t for t in texts)
    verdict = run_job(RUNS / "ab10" / "logs", formats=()).model.verdict
    assert (verdict["class"], verdict["root_workers"]) == ("straggler", ["worker:1"])


def test_the_preemption_handlers_own_notice_is_a_sigterm_caught() -> None:
    # ab13: PreemptionCheckpointHandler installs its own SIGTERM handler, so no
    # "SIGTERM caught" line; the member that got the signal says so itself.
    assert classify("Member 2 has received termination notice.")[0] == "tf.sigterm_caught"
    assert classify("Termination caught in main thread on preempted worker")[0] == "tf.sigterm_caught"


def test_a_faulthandler_dump_says_where_each_main_thread_waited() -> None:
    # ab02: the script's faulthandler watchdog dumped every thread after 10 s without a
    # step; worker:1's main thread waits in the tf.data iterator, the others' run the
    # step's function (its collective waiting for worker:1).
    job, _ = load_job(RUNS / "ab02" / "logs")
    threads = main_threads(job)
    assert {w: t.where for w, t in threads.items()} == {"worker:0": TF, "worker:1": INPUT, "worker:2": TF}
    assert run_job(RUNS / "ab02" / "logs", formats=()).model.verdict["root_workers"] == ["worker:1"]


def test_a_task_stopped_from_outside_before_it_joined_did_not_crash() -> None:
    # ab03: worker:1 waits for a marker file before it starts TensorFlow's server; Nomad
    # stops it with SIGINT (a KeyboardInterrupt traceback). It never crashed: its last
    # words, in a short "I 22:12:14.358 worker-1 | ..." layout (read as a line of its
    # own, not folded into TF's record before it), say where it was.
    from mwms_doctor.ingest.lines import parse_header

    h = parse_header("I 22:12:14.358 worker-1 | waiting for feature snapshot /data/_READY", 2026)
    assert h is not None and h.severity == "info" and h.msg.startswith("worker-1 |")
    summary = run_job(RUNS / "ab03" / "logs", formats=()).model.verdict["summary"]
    assert "waiting for feature snapshot" in summary and "crashed" not in summary


def test_a_platform_record_that_ran_no_tensorflow_is_no_oom_kill(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # ab03 with its Nomad status files unread (as any platform's record nobody reads
    # yet): an unnamed part that never ran TensorFlow, whose event table says "Killed
    # Task successfully killed", beside named workers, is no process killed for memory.
    from mwms_doctor.ingest import readers

    real = readers.sniff_env
    monkeypatch.setattr(readers, "sniff_env", lambda head, rel: None if "nomad" in rel else real(head, rel))
    model = run_job(RUNS / "ab03" / "logs", formats=()).model
    assert "OM002" not in [f.code for f in model.findings]
    assert model.verdict["class"] == "handshake_deadlock"

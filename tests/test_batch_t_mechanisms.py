"""What blind batch T's first score showed unread, on the batch's own
recordings (fixtures/blind/batch_t, labels committed before recording).
Verdicts are held by tests/test_blind_runs.py; these hold how the evidence
is read, each mechanism on the run that showed it."""

from __future__ import annotations

from mwms_doctor.facts import establish
from mwms_doctor.ingest.lines import parse_header
from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

RUNS = FIXTURES / "blind" / "batch_t" / "runs"


def test_asctime_with_msecs_again_and_a_level_letter_before_the_logger() -> None:
    # t02: "%(asctime)s.%(msecs)03d] %(process)d %(levelname).1s %(name)s: %(message)s"
    h = parse_header("[2026-11-25 04:51:08,889.889] 11705 I mw.train: epoch=3 step=18/20 loss=1.89336", 2000)
    assert h is not None and h.ts is not None and h.ts.microsecond == 889000
    assert (h.severity, h.msg) == ("info", "epoch=3 step=18/20 loss=1.89336")
    # A letter with no logger after it is a word of the message.
    plain = parse_header("2026-11-25 10:00:00 I think it works", 2000)
    assert plain is not None and plain.severity is None and plain.msg == "I think it works"


def test_a_total_reached_by_a_stride_of_steps_counted_from_zero() -> None:
    # t02: steps printed 0, 2 ... 18 of "/20" in each epoch, then the script's closing words.
    assert establish(load_tables(RUNS / "t02" / "logs")[0]).facts.all_finished
    assert run_job(RUNS / "t02" / "logs").model.verdict["status"] == "healthy"


def test_a_launchers_failed_end_before_the_worker_came_up_again_is_no_end() -> None:
    # t03: go-task's "task: Failed to run task "train:worker-1": exit status 1", then worker:1's
    # tagged lines start its server again and it finishes.
    w = {r["worker"]: r for r in load_tables(RUNS / "t03" / "logs")[0].workers.to_pylist()}
    assert w["worker:1"]["exit_code"] is None
    assert run_job(RUNS / "t03" / "logs").model.verdict["status"] == "healthy"


def _verdict(run: str) -> dict:
    return run_job(RUNS / run / "logs", formats=()).model.verdict


def test_a_cloud_logging_export_names_its_writers_under_labels_with_dots_in_their_keys() -> None:
    # t10: `gcloud logging read --format=json`, newest first: each entry's text under
    # jsonPayload.message, its VM under labels["compute.googleapis.com/resource_name"].
    from mwms_doctor.ingest.exports import convert, sniff

    text = (RUNS / "t10" / "logs" / "logs.json").read_text()
    kind = sniff(text[:65536])
    assert kind == "json_document"
    import json

    lines = [json.loads(ln) for ln in convert(text, kind)[0].splitlines()]
    writers = {ln.get("kubernetes", {}).get("pod", {}).get("name") for ln in lines}
    assert len(writers) == 3 and None not in writers
    assert all(a["time"] <= b["time"] for a, b in zip(lines, lines[1:], strict=False))  # oldest first


def test_a_writer_named_by_a_host_takes_the_task_name_another_field_gives_it() -> None:
    # t14: a New Relic CSV; hostname ip-10-0-3-21 .. 22, service.name mwms-worker-0 .. 1.
    workers = {r["worker"] for r in load_tables(RUNS / "t14" / "logs")[0].workers.to_pylist() if r["has_log"]}
    assert workers == {"chief:0", "worker:0", "worker:1"}
    assert _verdict("t14")["root_workers"] == ["worker:1"]


def test_one_workers_slow_callbacks_set_the_jobs_pace() -> None:
    # t10: only worker:2 printed Keras' "Callback method ... is slow compared to the batch
    # time", and the job's ms/step is about its callback's time.
    v = _verdict("t10")
    assert (v["class"], v["root_workers"]) == ("straggler", ["worker:2"])
    # A callback slower than its batch in a job whose steps are much longer is no straggler:
    # the oom run q09's worker caches memory in its callback (0.14 s against 0.011 s batches).
    q09 = run_job(FIXTURES / "blind" / "batch_q" / "runs" / "q09" / "logs", formats=()).model
    assert q09.verdict["class"] != "straggler"


def test_a_ci_platforms_memory_limit_line_is_an_oom_kill() -> None:
    # t07: Bitbucket Pipelines' "Container 'Build' exceeded memory limit." in worker:1's step log.
    v = _verdict("t07")
    assert (v["class"], v["root_workers"]) == ("oom", ["worker:1"])


def test_the_platforms_memory_limit_words_from_their_sources() -> None:
    # Real lines from public threads (Slurm, YARN, ECS, Heroku), each read as a memory kill.
    from mwms_doctor.ingest.templates import classify

    for line in (
        "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=191.batch cgroup. Some of your "
        "processes may have been killed by the cgroup out-of-memory handler.",
        "slurmstepd: error: Detected 1 oom_kill event in StepId=11300781.0. Some of the step tasks have been OOM Killed.",
        "srun: error: sdumont6156: task 0: Out Of Memory",
        "Container [pid=116086,containerID=container_1535113754342_0003_01_000002] is running beyond virtual "
        "memory limits. Current usage: 106.2 MB of 1 GB physical memory used; 5.8 GB of 2.1 GB virtual memory used. "
        "Killing container.",
        "OutOfMemoryError: Container killed due to memory usage",
        "heroku[worker.2]: Error R15 (Memory quota vastly exceeded)",
    ):
        kind, fields, _ = classify(line)
        # ECS's stopped reason reads as an exception of its own, a MemoryError (OM002 reads both).
        assert kind == "platform.memory_limit" or fields.get("exc_type", "").endswith("MemoryError"), line


def test_a_step_that_fails_on_an_empty_batch_after_training_is_a_worker_out_of_data() -> None:
    # t11: worker:1's shard ends mid-epoch; its step's x[0] fails with "slice index 0 of
    # dimension 0 out of bounds" (an empty batch), and sacct says how each array task ended.
    v = _verdict("t11")
    assert (v["class"], v["root_workers"]) == ("data_exhaustion", ["worker:1"])
    w = {r["worker"]: r for r in load_tables(RUNS / "t11" / "logs")[0].workers.to_pylist()}
    assert w["worker:1"]["exit_code"] == 1 and "FAILED" in w["worker:1"]["exit_note"]


def test_the_same_example_ids_at_every_step_on_every_worker_is_unsharded_data() -> None:
    # t09: every worker printed first_example_id=0, 96, 192 ... at the same steps.
    assert _verdict("t09")["class"] == "identical_data"
    # t02 (healthy, sharded) prints first_example_id too, different on each worker.
    assert _verdict("t02")["status"] == "healthy"


def test_a_logger_that_relogs_a_childs_stderr_at_error_keeps_each_lines_own_level() -> None:
    # t16: Kedro-style "<asctime> - mwms.pipeline - ERROR - <the child's stderr line>".
    warn = parse_header(
        "2026-11-25 04:55:47,562 - mwms.pipeline - ERROR - WARNING: All log messages before "
        "absl::InitializeLog() is called are written to STDERR",
        2026,
    )
    assert warn is not None and warn.severity == "warning"
    info = parse_header(
        "2026-11-25 04:55:53,103 - mwms.pipeline - ERROR - I0000 00:00:1795582553.103461   23614 "
        "generator_dataset_op.cc:213] Memory patch applied: M_TRIM_THRESHOLD=128 kb was set.",
        2026,
    )
    assert info is not None and info.severity == "info" and info.origin == "generator_dataset_op.cc:213"
    v = _verdict("t16")
    assert (v["class"], v["root_workers"]) == ("hang", ["worker:0"])


def test_a_platforms_line_about_a_dyno_follows_the_dynos_task_numbering() -> None:
    # r10: Heroku dynos worker.1..3 are tasks 0..2 (worker.1 runs the coordination service);
    # "heroku[worker.2]: Error R15" is worker:1's memory kill.
    r10 = FIXTURES / "blind" / "batch_r" / "runs" / "r10" / "logs"
    w = {r["worker"] for r in load_tables(r10)[0].workers.to_pylist() if r["has_log"]}
    assert w == {"worker:0", "worker:1", "worker:2"}
    v = run_job(r10, formats=()).model.verdict
    assert (v["class"], v["root_workers"]) == ("oom", ["worker:1"])

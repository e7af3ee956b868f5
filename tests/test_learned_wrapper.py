"""A wrapper learned from the file itself: a launcher nobody listed puts its
own prefix (a time, a tag) before each line; the lines TensorFlow prints are
known whatever stands before them, so the prefix is what stands before them
on most lines. Real recordings: Metaflow's console (fixtures/blind/batch_p/p08,
batch_o/o08), which no named wrapper reads."""

from __future__ import annotations

from mwms_doctor.ingest.wrappers import LEARNED, detect, is_keyed, unwrap
from mwms_doctor.pipeline import load_tables, run_job

from .paths import FIXTURES

P08 = FIXTURES / "blind" / "batch_p" / "runs" / "p08" / "logs"


def test_metaflows_task_prefixes_are_learned_and_split_the_workers() -> None:
    lines = (P08 / "run-1716073174.log").read_text().splitlines()
    (chain,) = detect(lines)
    assert chain.startswith(LEARNED) and is_keyed((chain,))
    # "2026-11-25 02:19:34.068 [1716073174/train/2 (pid 17528)] Task is starting."
    u = unwrap(lines[9], (chain,))
    assert (u.key, u.text) == ("1716073174/train/2 pid 17528", "Task is starting.")
    assert u.ts is not None and u.ts.isoformat().startswith("2026-11-25T02:19:34.068")
    tables, _ = load_tables(P08)
    named = sorted(r["worker"] for r in tables.workers.to_pylist() if r["has_log"])
    assert named == ["worker:0", "worker:1", "worker:2"]


def test_a_runners_sigterm_after_the_job_failed_is_no_preemption() -> None:
    # p08: Metaflow's "Terminating 2 active tasks..." after worker:2 died; worker:1 then caught a SIGTERM.
    v = run_job(P08).model.verdict
    assert (v["class"], v["root_workers"]) == ("peer_died", ["worker:2"])


def test_an_invented_prefix_with_a_clock_and_a_tag() -> None:
    lines = []
    for i in range(6):
        for host in ("gpu-a", "gpu-b"):
            lines.append(
                f"<<{host}>> 10:00:0{i} I0000 00:00:17955756{i}0.1 1 grpc_server_lib.cc:467] Started"
            )
            lines.append(f"<<{host}>> 10:00:0{i} epoch {i} done")
    (chain,) = detect(lines)
    u = unwrap(lines[3], (chain,))
    assert (u.key, u.text, u.ts) == ("gpu-b", "epoch 0 done", None)  # a time of day alone is no time


def test_no_wrapper_is_learned_from_a_plain_log_or_a_logging_format() -> None:
    plain = (FIXTURES / "runs" / "healthy" / "logs" / "worker-0.log").read_text().splitlines()
    assert detect(plain) == ()
    logging = [f"2026-11-25 10:00:0{i},000 INFO trainer: epoch {i} done" for i in range(8)]
    assert detect(logging) == ()

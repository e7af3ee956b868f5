"""Collector wrappers and layouts: every recorded shape ingests with every worker
resolved and every TF line timed."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from mwms_doctor.ingest.wrappers import detect, join_partials, unwrap
from mwms_doctor.pipeline import load_tables

from .paths import RUNS

SHAPES = {
    # run: (wrappers expected on its worker logs, number of workers)
    "k8s_cri_peer_killed": (("cri",), 3),
    "kubectl_oom": (("kubectl_prefix", "timestamps"), 3),
    "compose_peer_killed": (("compose",), 3),
    "split_streams_never_started": ((), 3),
    "slurm_peer_killed": ((), 3),
    "gz_rotated_oom": ((), 3),
    "verbose_healthy": ((), 3),
    "grpc_trace_peer_killed": ((), 3),
    "clock_skew_peer_killed": ((), 3),
}


@pytest.mark.parametrize("run", sorted(p.name for p in RUNS.iterdir()))
def test_every_recorded_run_resolves_every_worker_and_times_every_tf_line(run: str) -> None:
    tables, _ = load_tables(RUNS / run / "logs")
    workers = tables.workers.to_pylist()
    assert all(not w["worker"].startswith("?") for w in workers), [w["worker"] for w in workers]
    assert not tables.skipped, tables.skipped
    ev = tables.events
    cpp = pc.fill_null(pc.match_substring_regex(pc.cast(ev["origin"], pa.string()), r"\.(cc|h):\d+$"), False)
    assert ev.filter(pc.and_(cpp, pc.is_null(ev["ts"]))).num_rows == 0
    if run in SHAPES:
        assert len(workers) == SHAPES[run][1]


@pytest.mark.parametrize("run", [r for r, (w, _) in SHAPES.items() if w])
def test_wrappers_are_detected_and_peeled(run: str) -> None:
    want, _ = SHAPES[run]
    files = [p for p in (RUNS / run / "logs").rglob("*.log")]
    assert files
    for path in files:
        lines = path.read_bytes().decode(errors="replace").split("\n")
        assert detect(lines) == want, path
        for line in lines[:50]:
            if line.strip():
                assert not unwrap(line, want).text.startswith(("[pod/", "2026-11-21T")), line


def test_cri_partial_lines_are_joined() -> None:
    a = unwrap("2026-11-21T19:01:44.246547732Z stdout P 1/240 [==", ("cri",))
    b = unwrap("2026-11-21T19:01:44.300000000Z stdout F ==] - 1s", ("cri",))
    err = unwrap("2026-11-21T19:01:44.250000000Z stderr F E0000 boom", ("cri",))
    joined = list(join_partials([(1, a), (2, err), (3, b)]))
    assert [(n, u.text) for n, u in joined] == [(2, "E0000 boom"), (1, "1/240 [====] - 1s")]
    assert joined[1][1].ts == a.ts


def test_a_few_prefixed_prints_do_not_make_a_wrapper() -> None:
    lines = ["I0000 00:00:1795285805.270246    2057 port.cc:153] hello"] * 10 + ["0: a print"] * 2
    assert detect(lines) == ()


def test_compose_launcher_lines_are_no_worker_but_give_exit_codes() -> None:
    tables, _ = load_tables(RUNS / "compose_peer_killed" / "logs")
    rows = {r["worker"]: r for r in tables.workers.to_pylist()}
    assert set(rows) == {"worker:0", "worker:1", "worker:2"}
    assert rows["worker:0"]["exit_code"] == 137 and rows["worker:0"]["exit_signal"] == "SIGKILL"


def test_slurm_srun_messages_give_exit_codes() -> None:
    tables, _ = load_tables(RUNS / "slurm_peer_killed" / "logs")
    rows = {r["worker"]: r for r in tables.workers.to_pylist()}
    assert rows["worker:2"]["exit_code"] == 137
    assert rows["worker:0"]["exit_code"] == 1


def test_split_streams_and_rotated_parts_belong_to_one_worker() -> None:
    tables, _ = load_tables(RUNS / "split_streams_never_started" / "logs")
    rows = {r["worker"]: r for r in tables.workers.to_pylist()}
    assert rows["worker:0"]["sources"] == ["worker-0/stderr.txt", "worker-0/stdout.txt"]
    assert rows["worker:1"]["has_log"] is False
    tables, _ = load_tables(RUNS / "gz_rotated_oom" / "logs")
    rows = {r["worker"]: r for r in tables.workers.to_pylist()}
    assert rows["worker:2"]["sources"] == ["worker-2.log", "worker-2.log.1", "worker-2.log.2.gz"]


def test_env_dumps_feed_versions_and_redact_secrets() -> None:
    tables, _ = load_tables(RUNS / "k8s_cri_peer_killed" / "logs")
    env = tables.env
    assert env is not None
    rows = env.to_pylist()
    assert not any("fake-" in str(r["value"]) for r in rows)
    assert {r["worker"] for r in rows if r["key"] == "tensorflow"} == {"worker:0", "worker:1", "worker:2"}
    assert all(w["tf_version"] == "2.21.0" for w in tables.workers.to_pylist())


def test_grpc_failures_name_the_dead_peer() -> None:
    tables, _ = load_tables(RUNS / "grpc_trace_peer_killed" / "logs")
    rpc = tables.rpc
    assert rpc is not None and rpc.num_rows > 0
    reset = rpc.filter(pc.equal(pc.cast(rpc["reason"], pa.string()), "connection_reset"))
    assert set(pc.unique(pc.cast(reset["peer_task"], pa.string())).to_pylist()) == {"worker:1"}


@pytest.mark.parametrize("tag", ["[w{i}] ", "[node0{i}]: ", "worker{i}: ", "gpu-{i}| ", "{i}| "])
def test_a_file_tagged_per_line_by_a_users_own_launcher_is_split_by_worker(tmp_path: Path, tag: str) -> None:
    """One combined file whose every line a launcher tagged with a name that
    ends in a number, in any form: the recorded peer_killed run's three logs,
    interleaved as a launcher writes them. Three workers, each its own lines,
    the verdict the same as from the separate files (issue 21: a combined
    file with per-line prefixes was read as one worker)."""
    import itertools

    from mwms_doctor.pipeline import run_job

    logs = [(RUNS / "peer_killed" / "logs" / f"worker-{i}.log").read_text().splitlines() for i in range(3)]
    lines = [
        tag.format(i=i) + line
        for rows in itertools.zip_longest(*logs)
        for i, line in enumerate(rows)
        if line is not None
    ]
    (tmp_path / "job.log").write_text("\n".join(lines) + "\n")
    result = run_job(tmp_path)
    workers = {r["worker"]: r for r in result.tables.workers.to_pylist()}
    assert sorted(w for w, r in workers.items() if r["has_log"]) == ["worker:0", "worker:1", "worker:2"]
    for i in range(3):
        # Each worker's own server line, the port its TF_CONFIG gave it.
        assert workers[f"worker:{i}"]["port"] == 23450 + i
    assert (result.verdict["class"], result.verdict["root_workers"]) == ("peer_died", ["worker:1"])


def test_a_time_or_an_nccl_host_prefix_is_no_launchers_tag() -> None:
    """``23:56:40.288 ...`` starts with a time, ``host135:1517:1519 [1] NCCL
    INFO`` with NCCL's host:pid:tid: no tag a launcher put there."""
    assert detect(["23:56:40.288581 61070 notification.cc:194] RpcNotification:Failed"] * 10) == ()
    assert detect(["heinzel135:151779:151929 [1] NCCL INFO Ring 00 : 1[1] -> 2[2]"] * 10) == ()

"""Collector wrappers and layouts: every recorded shape ingests with every worker
resolved and every TF line timed."""

from __future__ import annotations

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

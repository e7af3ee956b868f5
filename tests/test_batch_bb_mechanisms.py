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


def test_a_connectivity_checks_capture_is_an_observers_record_timed_by_what_it_states(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # bb07: netcheck.txt, untimed nc lines under '# connectivity check ... (2026-11-28T07:32:15.796Z)':
    # worker:0's and worker:1's ports answered, worker:2's was refused, 16 s after worker:2
    # logged 'Started server with target: grpc://127.0.0.1:58842'. It was not read at all before.
    logs = RUNS / "bb07" / "logs"
    tables, _ = load_tables(logs)
    probes = [r for r in tables.rpc.to_pylist() if r["source"] == "netcheck.txt"]
    assert [(r["worker"], r["peer_task"], r["reason"]) for r in probes] == [
        ("?launcher", "worker:2", "connection_refused")
    ]
    assert probes[0]["ts"].isoformat() == "2026-11-28T07:32:15.796000+00:00"
    # The clush fan-out's 'clush: node3: killed by signal 9' is how worker:2 ended.
    ended = {r["worker"]: r["exit_signal"] for r in tables.workers.to_pylist()}
    assert ended == {"worker:0": "SIGKILL", "worker:1": "SIGKILL", "worker:2": "SIGKILL"}
    assert verdict(logs) == ("firewall_blocked", ["worker:2"], "failure")
    # Without the check, nothing says the port was blocked: the cluster never formed.
    for f in logs.iterdir():
        if f.name != "netcheck.txt":
            (tmp_path / f.name).write_bytes(f.read_bytes())
    assert verdict(tmp_path)[0] == "handshake_deadlock"
    # The same check run before the job started (its stated time earlier than the
    # server's start) is the start-up's race, no block.
    early = (logs / "netcheck.txt").read_text().replace("07:32:15.796Z", "07:31:40.000Z")
    (tmp_path / "netcheck.txt").write_text(early)
    assert verdict(tmp_path)[0] == "handshake_deadlock"

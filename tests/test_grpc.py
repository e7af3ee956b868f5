"""gRPC failures → the rpc table, on real recorded logs and sourced samples."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from mwms_doctor.ingest.grpc import (
    parse_payload,
    resolve_peer,
    rpc_rows_from_text,
    rpc_table,
)
from mwms_doctor.ingest.identity import Cluster
from mwms_doctor.ingest.worker_log import parse_log
from mwms_doctor.tables import RPC

from .paths import FIXTURES, RUNS

EVIDENCE = FIXTURES / "evidence" / "grpc"
LOCAL3 = Cluster(
    addresses={"worker:0": "localhost:23450", "worker:1": "localhost:23451", "worker:2": "localhost:23452"},
    tasks={"worker:0", "worker:1", "worker:2"},
)


def _events(*paths: tuple[Path, str]) -> pa.Table:
    """A minimal events table from real logs: the columns rpc_table reads."""
    cols: dict[str, list[object]] = {k: [] for k in ("worker", "source", "line", "ts", "text", "origin")}
    for path, worker in paths:
        with path.open(encoding="utf-8") as fh:
            log = parse_log(fh, path.name, 2026, None)
        for i in range(len(log)):
            cols["worker"].append(worker)
            cols["source"].append(path.name)
            cols["line"].append(log.line[i])
            cols["ts"].append(log.ts[i])
            cols["text"].append(log.text[i])
            cols["origin"].append(log.origin[i])
    return pa.table(
        {
            "worker": pa.array(cols["worker"], pa.string()),
            "source": pa.array(cols["source"], pa.string()),
            "line": pa.array(cols["line"], pa.int32()),
            "ts": pa.array(cols["ts"], pa.timestamp("us", tz="UTC")),
            "text": pa.array(cols["text"], pa.string()),
            "origin": pa.array(cols["origin"], pa.string()),
        }
    )


def _record(path: Path, line: int) -> tuple[str, str | None]:
    with path.open(encoding="utf-8") as fh:
        log = parse_log(fh, path.name, 2026, None)
    i = log.line.index(line)
    return log.text[i], log.origin[i]


# --- real TF 2.21 runs ---------------------------------------------------------------


def test_peer_killed_survivors_name_the_dead_peer() -> None:
    logs = RUNS / "peer_killed" / "logs"
    table = rpc_table(
        _events((logs / "worker-0.log", "worker:0"), (logs / "worker-2.log", "worker:2")), LOCAL3
    )
    assert table.schema == RPC
    rows = table.to_pylist()
    resets = [r for r in rows if r["reason"] == "connection_reset"]
    assert {r["peer_task"] for r in resets} == {"worker:1"}
    assert {r["worker"] for r in resets} == {"worker:0", "worker:2"}
    first = min(resets, key=lambda r: (r["worker"], r["line"]))
    assert (first["worker"], first["line"]) == ("worker:0", 28)
    assert first["grpc_code"] == 14 and first["status"] == "UNAVAILABLE" and first["errno"] == 104
    assert first["method"] == "/tensorflow.WorkerService/RecvBuf"
    assert first["via"] == "status_payload"
    assert first["message"] == "recvmsg:Connection reset by peer"


def test_relayed_abort_is_kept_apart_from_the_origin() -> None:
    text, origin = _record(RUNS / "peer_killed" / "logs" / "worker-0.log", 28)
    rows = rpc_rows_from_text(text, origin)
    by_task = {r["peer_task"]: r for r in rows}
    assert set(by_task) == {"worker:1", "worker:2"}
    relay = by_task["worker:2"]
    assert relay["reason"] == "relayed_abort"
    assert relay["errno"] is None  # the reset happened between worker:2 and worker:1
    assert relay["grpc_code"] == 14
    # The nested, escaped block about task 1 inside task 2's message is not a row of its own.
    assert len(rows) == 2


def test_healthy_run_has_no_rpc_failures() -> None:
    logs = RUNS / "healthy" / "logs"
    events = _events(*((logs / f"worker-{i}.log", f"worker:{i}") for i in range(3)))
    assert rpc_table(events, LOCAL3).num_rows == 0


def test_connect_refused_grpc_trace_tf221() -> None:
    path = EVIDENCE / "tf221_connect_refused_trace" / "worker-1.log"
    cluster = Cluster(addresses={"worker:0": "localhost:29871", "worker:1": "localhost:29872"})
    rows = rpc_table(_events((path, "worker:1")), cluster).to_pylist()
    assert rows, "gRPC debug lines with connect failures must give rows"
    assert all(r["via"] == "grpc_core" for r in rows)
    assert all(r["peer"] == "ipv4:127.0.0.1:29871" and r["peer_task"] == "worker:0" for r in rows)
    assert all(r["reason"] == "connection_refused" and r["errno"] == 111 for r in rows)
    subchannel = [r for r in rows if r["grpc_code"] == 2]  # "connect failed (UNKNOWN:... {grpc_status:2})"
    transition = [
        r for r in rows if r["grpc_code"] == 14
    ]  # "CONNECTING -> TRANSIENT_FAILURE (... UNAVAILABLE"
    assert subchannel and len(transition) == 1
    # "get current state: TRANSIENT_FAILURE" and "backoff delay elapsed" are no failures.
    with path.open() as fh:
        n_connect_failed = sum("connect failed (" in line for line in fh)
    assert len(subchannel) == n_connect_failed


def test_unhealthy_heartbeat_names_the_silent_task() -> None:
    logs = EVIDENCE / "tf221_unhealthy_heartbeat"
    cluster = Cluster(addresses={"worker:0": "localhost:29881", "worker:1": "localhost:29882"})
    events = _events((logs / "worker-0.log", "worker:0"), (logs / "worker-1.log", "worker:1"))
    rows = rpc_table(events, cluster).to_pylist()
    assert len(rows) == 1
    row = rows[0]
    assert (row["worker"], row["peer_task"], row["reason"]) == ("worker:0", "worker:1", "unhealthy_heartbeat")
    assert row["grpc_code"] == 14 and row["via"] == "tf_error"


def test_message_too_large_is_a_grpc_limit() -> None:
    path = FIXTURES / "rules" / "OM001" / "quiet_grpc_message_too_large" / "logs" / "worker-1.log"
    rows = rpc_table(_events((path, "worker:1")), LOCAL3).to_pylist()
    assert [(r["reason"], r["grpc_code"], r["status"]) for r in rows] == [
        ("message_too_large", 8, "RESOURCE_EXHAUSTED")
    ]


# --- older formats (hand-written from cited sources) ---------------------------------------


@pytest.fixture(scope="module")
def old_rows() -> list[dict[str, object]]:
    path = EVIDENCE / "old_formats" / "worker-0.log"
    cluster = Cluster(
        addresses={"worker:0": "10.8.0.11:2222", "worker:1": "10.8.0.12:2222", "worker:2": "10.8.0.13:2222"}
    )
    rows: list[dict[str, object]] = rpc_table(_events((path, "worker:0")), cluster).to_pylist()
    return rows


def _at(rows: list[dict[str, object]], line: int) -> list[dict[str, object]]:
    return [r for r in rows if r["line"] == line]


def test_old_json_deadline_block(old_rows: list[dict[str, object]]) -> None:
    (row,) = _at(old_rows, 2)
    assert (row["peer_task"], row["grpc_code"], row["reason"]) == ("worker:1", 4, "deadline_exceeded")
    assert row["method"] is None and row["status"] == "DEADLINE_EXCEEDED"


def test_old_json_pick_subchannel_block(old_rows: list[dict[str, object]]) -> None:
    (row,) = _at(old_rows, 5)
    assert row["peer_task"] == "worker:2"
    assert row["method"] == "/tensorflow.eager.EagerService/Enqueue"
    assert (row["grpc_code"], row["reason"]) == (14, "connect_failed")
    assert row["message"] == "failed to connect to all addresses"


def test_grpc_error_string_resolves_peer_by_ip(old_rows: list[dict[str, object]]) -> None:
    (row,) = _at(old_rows, 9)
    assert (row["peer"], row["peer_task"], row["reason"]) == (
        "ipv4:10.8.0.13:2222",
        "worker:2",
        "socket_closed",
    )
    assert row["via"] == "tf_error" and row["grpc_code"] == 14


def test_gpr_log_connect_failed_with_debug_continuation(old_rows: list[dict[str, object]]) -> None:
    rows = _at(old_rows, 10)  # the I-line; the D-lines after it are folded into its record
    assert {(r["reason"], r["errno"]) for r in rows} == {
        ("connection_refused", 111),
        ("connect_timeout", 110),
    }
    assert all(r["peer_task"] == "worker:1" and r["via"] == "grpc_core" for r in rows)


def test_new_style_failed_to_connect_names_the_address(old_rows: list[dict[str, object]]) -> None:
    (row,) = _at(old_rows, 13)
    assert (row["peer"], row["peer_task"], row["errno"]) == ("ipv4:10.8.0.12:2222", "worker:1", 111)
    assert row["reason"] == "connection_refused"


def test_coordination_service_target_is_the_leader(old_rows: list[dict[str, object]]) -> None:
    (row,) = _at(old_rows, 14)
    assert (row["peer"], row["peer_task"]) == ("coordination_service", "worker:0")
    assert row["method"] == "/tensorflow.CoordinationService/PollForError"
    assert row["reason"] == "socket_closed"


def test_from_task_prefix_in_a_traceback(old_rows: list[dict[str, object]]) -> None:
    (row,) = _at(old_rows, 17)
    assert (row["peer_task"], row["reason"], row["errno"]) == ("worker:1", "connection_reset", 104)


def test_sent_message_larger_than_max(old_rows: list[dict[str, object]]) -> None:
    (row,) = _at(old_rows, 22)
    assert (row["reason"], row["grpc_code"]) == ("message_too_large", 8)


# --- pieces --------------------------------------------------------------------------------------


def test_payload_new_style_with_created_time() -> None:
    p = parse_payload(
        ':UNKNOWN:Error received from peer  {created_time:"2026-01-02T03:04:05.6+00:00", grpc_status:14, '
        'grpc_message:"failed to connect to all addresses; last error: UNKNOWN: ipv4:127.0.0.1:2223: '
        'Connection refused"}'
    )
    assert p.code == 14
    assert p.message.startswith("failed to connect to all addresses")


def test_payload_nested_message_does_not_lend_its_status() -> None:
    p = parse_payload('{grpc_message:"aborted by: x {grpc_status:4, grpc_message:\\"y\\"}", grpc_status:14}')
    assert p.code == 14


@pytest.mark.parametrize(
    ("address", "task"),
    [
        ("ipv4:127.0.0.1:23451", "worker:1"),
        ("ipv6:[::1]:23452", "worker:2"),
        ("dns:///localhost:23450", "worker:0"),
        ("ipv4:10.0.0.9:23451", None),  # another host: the port alone proves nothing
        ("ipv4:127.0.0.1:9999", None),
    ],
)
def test_resolve_peer_spellings_of_loopback(address: str, task: str | None) -> None:
    assert resolve_peer(address, LOCAL3) == task


@pytest.mark.parametrize(
    "text",
    [
        # An HTTP client's refusal is not gRPC's.
        "requests.exceptions.ConnectionError: [Errno 111] Connection refused",
        # Device memory, not a message limit.
        "OP_REQUIRES failed at constant_op.cc:176 : RESOURCE_EXHAUSTED: OOM when allocating tensor with shape[8]",
        "Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.85GiB with freed_by_count=0.",
        "ConnectivityStateTracker client_channel[0x55b2048bfe88]: get current state: TRANSIENT_FAILURE",
        "ConnectivityStateTracker client_channel[0x55]: IDLE -> CONNECTING (started resolving, OK)",
        "Waiting for 1/3 tasks to connect.",
        "Started server with target: grpc://localhost:23450",
    ],
)
def test_near_misses_give_no_rows(text: str) -> None:
    assert rpc_rows_from_text(text) == []


def test_gpr_debug_line_as_a_plain_record() -> None:
    # lines.py does not know the D severity yet: the whole line arrives as the text.
    line = (
        "D0614 09:12:53.011920443    3803 subchannel.cc:677]          Connect failed: "
        '{"created":"@1686733973.01","description":"Failed to connect to remote host: OS Error",'
        '"errno":111,"os_error":"Connection refused","syscall":"connect","target_address":"ipv4:10.0.0.2:2222"}'
    )
    (row,) = rpc_rows_from_text(line)
    assert (row["peer"], row["errno"], row["via"]) == ("ipv4:10.0.0.2:2222", 111, "grpc_core")


def test_empty_events_give_an_empty_table() -> None:
    empty = _events()
    table = rpc_table(empty, Cluster())
    assert table.num_rows == 0 and table.schema == RPC

"""gRPC failures: the ``rpc`` table, one row per failed call or connection a worker saw.

Where the failures are read from (every shape quoted from real logs; see
``fixtures/evidence/grpc/*/SOURCE.md``):

* ``status_payload``: the blocks TF appends to a status,
  ``Additional GRPC error information from remote target /job:worker/replica:0/task:1
  while calling /tensorflow.WorkerService/RecvBuf:`` followed by gRPC's debug
  string, new (``:UNKNOWN:Error received from peer  {grpc_status:14,
  grpc_message:"..."}``) or old JSON (``:{"created":"@1610000000.1",
  "description":"Failed to pick subchannel", ... "referenced_errors":[...]}``);
* ``grpc_core``: gRPC's own log lines, printed with ``GRPC_VERBOSITY=debug`` /
  ``GRPC_TRACE=subchannel,...``: ``subchannel 0x.. {address=ipv4:127.0.0.1:2223,
  args={...}}: connect failed (...)``, ``ConnectivityStateTracker ...:
  CONNECTING -> TRANSIENT_FAILURE (...)``, and old ``Connect failed: {json}``;
* ``tf_error``: TF's own words without a payload: ``UnavailableError: Socket
  closed``, ``The following tasks are unhealthy (stopped sending heartbeats)``,
  ``RESOURCE_EXHAUSTED: Received message larger than max (N vs. M)``.

A record that relays a peer's abort (``Collective ops is aborted by: ...``) keeps
a row for that peer with reason ``relayed_abort``: the echo, not the cause.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from ..tables import RPC, sort_key
from ..tasks import task_id, task_mentions
from .identity import Cluster
from .messages import errno_of, grpc_reason, phrases_regex
from .probes import probe_result

GRPC_CODES: dict[int, str] = {
    0: "OK",
    1: "CANCELLED",
    2: "UNKNOWN",
    3: "INVALID_ARGUMENT",
    4: "DEADLINE_EXCEEDED",
    5: "NOT_FOUND",
    6: "ALREADY_EXISTS",
    7: "PERMISSION_DENIED",
    8: "RESOURCE_EXHAUSTED",
    9: "FAILED_PRECONDITION",
    10: "ABORTED",
    11: "OUT_OF_RANGE",
    12: "UNIMPLEMENTED",
    13: "INTERNAL",
    14: "UNAVAILABLE",
    15: "DATA_LOSS",
    16: "UNAUTHENTICATED",
}
_CODE_OF = {name: code for code, name in GRPC_CODES.items()}
# TF's Python exception classes (errors_impl) → the status they carry.
_PY_ERRORS = {
    "CancelledError": 1,
    "UnknownError": 2,
    "InvalidArgumentError": 3,
    "DeadlineExceededError": 4,
    "NotFoundError": 5,
    "AlreadyExistsError": 6,
    "PermissionDeniedError": 7,
    "ResourceExhaustedError": 8,
    "FailedPreconditionError": 9,
    "AbortedError": 10,
    "OutOfRangeError": 11,
    "UnimplementedError": 12,
    "InternalError": 13,
    "UnavailableError": 14,
    "DataLossError": 15,
    "UnauthenticatedError": 16,
}

_RELAYED = re.compile(r"^\s*(?:\w+: )?Collective ops is aborted by:")

# A peer's address as gRPC prints it: always with a scheme, so "file.cc:123"
# is never taken for host:port.
_ADDRESS = re.compile(
    r"(?:ipv4:\d{1,3}(?:\.\d{1,3}){3}:\d+"
    r"|ipv6:(?:\[[0-9A-Fa-f:.%\w]+\]|[0-9A-Fa-f:.]+?):\d+(?![\d:])"
    r"|(?:dns:///?|grpc://)[\w.\-]+:\d+)"
)
_LOG_HEADER = re.compile(
    r"^(?:[DIWEF]\d{4} \d{2}:\d{2}:\d{2}(?:\.\d+)?\s+\d+ (?P<o1>[\w.\-/]+:\d+)\]"
    r"|\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?: [DIWEF] (?P<o2>[\w.\-/]+:\d+)\])\s*"
)
# Files of gRPC core whose lines are about connections.
_GRPC_CORE_FILE = re.compile(
    r"(?:^|/)(?:subchannel|connectivity_state|chttp2_\w+|tcp_\w+|pick_first|client_channel\w*|"
    r"posix_\w+|\w*handshaker|dns_resolver\w*|frame_goaway|writing|secure_endpoint|backoff)\.cc:\d+$"
)
_BLOCK = re.compile(
    r"^Additional GRPC error information(?: from remote target (?P<target>\S+?))?"
    r"(?: while calling (?P<method>\S+?))?:[ \t]*$",
    re.M,
)
_FROM_TASK = re.compile(r"From (/job:\w+/replica:\d+/task:\d+)[^:\n]*:")
_PAIR = re.compile(r'"?(?P<key>[A-Za-z_]\w*)"?\s*:\s*(?P<value>"(?:[^"\\]|\\.)*"|[^,{}\[\]\s"]+)')
_STATUS_WORD = re.compile(r"\b(" + "|".join(n for n in _CODE_OF if n not in ("OK",)) + r")\b")
_PY_ERROR = re.compile(r"\b(" + "|".join(_PY_ERRORS) + r")\b")
# TF 1.x and early 2.x wrote statuses in words: "Unavailable: Socket closed".
_OLD_STATUS = re.compile(
    r"\b(Cancelled|Invalid argument|Deadline exceeded|Not found|Already exists|Permission denied|"
    r"Resource exhausted|Failed precondition|Aborted|Out of range|Unimplemented|Internal|Unavailable|"
    r"Data loss|Unauthenticated): "
)
_METHOD = re.compile(r"(?:while calling |RPC: )(/[\w.]+/\w+)")
_UNHEALTHY = re.compile(r"unhealthy \(stopped sending heartbeats\):?\s*\n?(?P<tasks>(?:\s*/job:\S+\s*)+)")
_HEARTBEAT_TIMEOUT = re.compile(r"Task (/job:\w+/replica:\d+/task:\d+) heartbeat timeout")
_HEARTBEAT = re.compile(r"unhealthy \(stopped sending heartbeats\)|heartbeat timeout")
_SUBCHANNEL = re.compile(
    r"subchannel 0x[0-9a-f]+ \{address=(?P<addr>[^,}\s]+).*?\}\}?: connect failed \((?P<msg>.*)\)"
    r"(?:, backing off for \d+ ms)?\s*$"
)
_TRANSIENT = re.compile(r"-> TRANSIENT_FAILURE \((?P<msg>.*)\)\s*$")
_OLD_CONNECT = re.compile(r"Connect failed: (?P<payload>\{.*\})\s*$")
_TRACEBACK_FRAME = re.compile(r'^\s+(?:File "|\^)')
# Quick test before the real parse (almost every record is not about gRPC):
# the words of every reason, and gRPC's own framing.
PREFILTER = (
    phrases_regex("grpc")
    + r"|GRPC error|grpc_status|failed to connect|onnect failed|timed out|TRANSIENT_FAILURE"
)
_PREFILTER = re.compile(PREFILTER, re.I)
MESSAGE_MAX = 500


@dataclass
class _Payload:
    """What a gRPC debug string says."""

    code: int | None = None
    message: str = ""
    addresses: tuple[str, ...] = ()
    errno: int | None = None


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        value = value[1:-1]
        return re.sub(r"\\(.)", lambda m: "\n" if m[1] == "n" else m[1], value)
    return value


def parse_payload(text: str) -> _Payload:
    """Key/values of a gRPC debug string, old JSON or new ``{grpc_status:14, ...}``.

    Quoted values are read whole, so a relayed error nested in ``grpc_message``
    never lends its keys to the outer one."""
    out = _Payload()
    descriptions: list[str] = []
    addresses: list[str] = []
    os_error = ""
    for m in _PAIR.finditer(text):
        key, value = m["key"], _unquote(m["value"])
        if key == "grpc_status" and out.code is None and value.isdigit():
            out.code = int(value)
        elif key == "grpc_message" and not out.message:
            out.message = value
        elif key == "description":
            descriptions.append(value)
        elif key == "target_address":
            addresses.append(value)
        elif key == "errno" and value.isdigit() and out.errno is None:
            out.errno = int(value)
        elif key == "os_error" and not os_error:
            os_error = value
    if not out.message:
        # "Failed to pick subchannel" wraps "failed to connect to all addresses": the inner one says more.
        out.message = descriptions[-1] if descriptions else ""
        if os_error and os_error not in out.message:
            out.message = f"{out.message}: {os_error}" if out.message else os_error
    for d in descriptions:
        addresses.extend(_ADDRESS.findall(d))
    head = text.split("{", 1)[0]
    addresses.extend(_ADDRESS.findall(head))
    if not out.message:
        out.message = head.strip(" :")
    out.addresses = tuple(dict.fromkeys(addresses))
    return out


def classify_reason(message: str, code: int | None) -> str:
    """The normalised reason of one failure's message: the first phrase of the
    catalogue's that it holds (the specific cause before the generic wrapper:
    "failed to connect to all addresses; last error: ... Connection refused"
    is connection_refused), else what its status code says."""
    if (reason := grpc_reason(message)) is not None:
        return reason
    if code == 4:
        return "deadline_exceeded"
    if code == 14:
        return "unavailable_other"
    if code is not None and code in GRPC_CODES:
        return GRPC_CODES[code].lower()
    return "other"


def _status_code(text: str) -> int | None:
    """The status a TF error text names: ``UNAVAILABLE:`` or ``UnavailableError``."""
    m = _STATUS_WORD.search(text)
    if m:
        return _CODE_OF[m[1]]
    m = _PY_ERROR.search(text)
    if m:
        return _PY_ERRORS[m[1]]
    m = _OLD_STATUS.search(text)
    return _CODE_OF[m[1].upper().replace(" ", "_")] if m else None


def _row(
    via: str,
    message: str,
    *,
    code: int | None = None,
    peer: str | None = None,
    peer_task: str | None = None,
    method: str | None = None,
    errno: int | None = None,
    reason: str | None = None,
) -> dict[str, object]:
    message = message.strip()
    reason = reason or classify_reason(message, code)
    if code is None:
        code = _default_code(reason)
    return {
        "peer": peer,
        "peer_task": peer_task,
        "method": method,
        "grpc_code": code,
        "status": GRPC_CODES.get(code) if code is not None else None,
        "errno": errno if errno is not None else errno_of(message),
        "reason": reason,
        "message": message[:MESSAGE_MAX],
        "via": via,
    }


def _default_code(reason: str) -> int | None:
    if reason == "deadline_exceeded":
        return 4
    if reason == "message_too_large":
        return 8
    if reason in ("other",):
        return None
    return 14


def _first_line(message: str) -> str:
    lines = [ln for ln in message.strip().splitlines() if ln.strip()]
    return lines[0] if lines else ""


def _strip_header(line: str) -> tuple[str, str | None]:
    """A line without its log header (gRPC's ``D...`` lines included), and its origin."""
    m = _LOG_HEADER.match(line)
    if not m:
        return line, None
    return line[m.end() :], m["o1"] or m["o2"]


# --- status payloads ------------------------------------------------------------


def _remote_target_task(target: str | None) -> str | None:
    if not target:
        return None
    return task_id(target) or target  # "coordination_service" stays as printed


def _block_rows(text: str) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for m in _BLOCK.finditer(text):
        rest = text[m.end() :].lstrip("\n")
        payload_line = rest.split("\n", 1)[0]
        payload = parse_payload(payload_line)
        target = m["target"]
        if target is None:
            before = _FROM_TASK.findall(text[: m.start()])
            target = before[-1] if before else None
        code = payload.code if payload.code is not None else _status_code(payload_line)
        relayed = bool(_RELAYED.match(payload.message))
        row = _row(
            "status_payload",
            _first_line(payload.message),
            code=code,
            peer=payload.addresses[0] if payload.addresses else None,
            peer_task=_remote_target_task(target),
            method=m["method"],
            errno=payload.errno,
            reason="relayed_abort" if relayed else None,
        )
        if relayed:
            row["errno"] = None  # the OS error is the origin's, not this call's
        rows.append(row)
    return rows


# --- TF's own words ----------------------------------------------------------------


def _heartbeat_rows(text: str) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    method_m = _METHOD.search(text)
    method = method_m[1] if method_m else None
    tasks: list[str] = []
    for m in _UNHEALTHY.finditer(text):
        tasks.extend(task_mentions(m["tasks"]))
    tasks.extend(task_id(t) for t in _HEARTBEAT_TIMEOUT.findall(text))
    line = next((ln for ln in text.splitlines() if _HEARTBEAT.search(ln)), "")
    code = _status_code(line) or 14
    for task in dict.fromkeys(tasks):
        rows.append(
            _row("tf_error", line, code=code, peer_task=task, method=method, reason="unhealthy_heartbeat")
        )
    return rows


def _error_line(text: str) -> str | None:
    """The line of a TF error text that says what failed, skipping traceback frames."""
    for line in text.splitlines():
        if _TRACEBACK_FRAME.match(line):
            continue
        if grpc_reason(line) is not None:
            return line
    return None


def _is_rpc_context(text: str, reason: str) -> bool:
    """Only gRPC's failures: "Connection refused" from an HTTP client is not one."""
    if reason in ("message_too_large", "unhealthy_heartbeat", "connect_failed"):
        return True
    if re.search(r"grpc|recvmsg|sendmsg|/job:\w+", text, re.I) or grpc_reason(text) == "socket_closed":
        return True
    return _STATUS_WORD.search(text) is not None or _PY_ERROR.search(text) is not None


def _tf_error_rows(text: str) -> list[dict[str, object]]:
    line = _error_line(text)
    if line is None:
        return []
    clean, _ = _strip_header(line)
    code = _status_code(clean)
    if code is None:
        code = _status_code(text)
    reason = classify_reason(clean, code)
    if not _is_rpc_context(text, reason):
        return []
    payload = parse_payload(text) if "grpc_status" in text else _Payload()
    if code is None:
        code = payload.code
    addresses = list(payload.addresses) or _ADDRESS.findall(text)
    task_m = _FROM_TASK.search(text)
    method_m = _METHOD.search(text)
    return [
        _row(
            "tf_error",
            clean,
            code=code,
            peer=addresses[0] if addresses else None,
            peer_task=task_id(task_m[1]) if task_m else None,
            method=method_m[1] if method_m else None,
            errno=payload.errno,
            reason=reason,
        )
    ]


# --- gRPC core's log lines ---------------------------------------------------------


def _core_row(line: str, origin: str | None) -> dict[str, object] | None:
    if m := _SUBCHANNEL.search(line):
        msg = m["msg"]
        payload = parse_payload(msg)
        return _row("grpc_core", msg, code=payload.code, peer=m["addr"], errno=payload.errno)
    if m := _OLD_CONNECT.search(line):
        payload = parse_payload(m["payload"])
        peer = payload.addresses[0] if payload.addresses else None
        return _row("grpc_core", payload.message, code=payload.code, peer=peer, errno=payload.errno)
    if m := _TRANSIENT.search(line):
        msg = m["msg"]
        reason = classify_reason(msg, None)
        if reason in ("other", "unavailable_other") and "UNAVAILABLE" not in msg:
            return None  # "(started resolving, OK)": a state change, no failure
        addresses = _ADDRESS.findall(msg)
        return _row("grpc_core", msg, code=_status_code(msg), peer=addresses[0] if addresses else None)
    if origin and _GRPC_CORE_FILE.search(origin):
        if classify_reason(line, None) == "other":
            return None
        addresses = _ADDRESS.findall(line)
        payload = parse_payload(line) if "{" in line else _Payload()
        return _row(
            "grpc_core",
            payload.message or line,
            code=payload.code,
            peer=addresses[0] if addresses else (payload.addresses[0] if payload.addresses else None),
            errno=payload.errno,
        )
    return None


def _core_rows(text: str, origin: str | None) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for i, raw in enumerate(text.splitlines()):
        line, line_origin = _strip_header(raw)
        row = _core_row(line, line_origin or (origin if i == 0 else None))
        if row is not None:
            rows.append(row)
    return rows


def rpc_rows_from_text(text: str, origin: str | None = None) -> list[dict[str, object]]:
    """Every gRPC failure one log record reports; ``origin`` is its ``file.cc:N``.

    Keys: peer, peer_task, method, grpc_code, status, errno, reason, message,
    via. ``peer_task`` is set only from task names in the text (a remote
    target, a heartbeat list); addresses are resolved by :func:`rpc_table`."""
    if not _PREFILTER.search(text):
        return []
    rows = _core_rows(text, origin)
    rows.extend(_block_rows(text))
    rows.extend(_heartbeat_rows(text))
    if not rows:
        rows.extend(_tf_error_rows(text))
    if not rows:
        rows.extend(_script_rows(text))
    return _dedupe(rows)


# A host and port as a script prints them ("127.0.0.1:65075", "trainer-0.svc:2222").
_PLAIN_ADDRESS = re.compile(
    r"(?<![\w.:/-])(?:\d{1,3}(?:\.\d{1,3}){3}|[A-Za-z][\w-]*(?:\.[\w-]+)+|localhost):\d{2,5}\b"
)
# What a script's own connection check can say of a peer's port.
_SCRIPT_REASONS = ("connection_refused", "connect_timeout", "no_route")


def _script_rows(text: str) -> list[dict[str, object]]:
    """A script's own connection check to an address ("peer check
    127.0.0.1:65075 failed: [Errno 111] Connection refused"): no gRPC call,
    but the same fact about the peer's port. Kept by :func:`rpc_rows` only
    where the address is a task's of the cluster."""
    line = _error_line(text)
    if line is None:
        return []
    clean, _ = _strip_header(line)
    if (probed := probe_result(clean)) is not None:
        # (netcat's, curl's words: "connect to HOST port PORT (tcp) failed: ...")
        address, reason = probed
        return [] if reason == "open" else [_row("script", clean, peer=address, reason=reason)]
    reason = classify_reason(clean, None)
    found = _PLAIN_ADDRESS.search(clean)
    if reason not in _SCRIPT_REASONS or found is None:
        return []
    return [_row("script", clean, peer=found[0], reason=reason)]


def _dedupe(rows: Iterable[dict[str, object]]) -> list[dict[str, object]]:
    seen: dict[tuple[object, ...], dict[str, object]] = {}
    for row in rows:
        key = (row["peer"], row["peer_task"], row["method"], row["reason"], row["via"], row["grpc_code"])
        seen.setdefault(key, row)
    return list(seen.values())


# --- addresses → tasks ---------------------------------------------------------------

_LOOPBACK = {"localhost", "127.0.0.1", "::1", "0.0.0.0", "[::1]", "ip6-localhost"}


def split_address(address: str) -> tuple[str, str] | None:
    """``ipv4:127.0.0.1:2223`` / ``ipv6:[::1]:2223`` / ``dns:///host:2223`` → (host, port)."""
    addr = re.sub(r"^(?:ipv4:|ipv6:|dns:///?|grpc://)", "", address)
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isdigit() or not host:
        return None
    return host.strip("[]"), port


def _norm_host(host: str) -> str:
    host = host.strip("[]").lower()
    if host in _LOOPBACK or host.startswith("127."):
        return "loopback"
    return host


def resolve_peer(address: str, cluster: Cluster) -> str | None:
    """The task listening at ``address``, by the cluster spec's addresses."""
    parts = split_address(address)
    if parts is None:
        return None
    host, port = parts
    wanted = (_norm_host(host), port)
    for task, addr in sorted(cluster.addresses.items(), key=lambda kv: sort_key(kv[0])):
        spec = split_address(addr)
        if spec and (_norm_host(spec[0]), spec[1]) == wanted:
            return task
    if wanted[0] == "loopback":
        # Every task on this host under another spelling: the port alone decides.
        return cluster.task_at(host, port)
    return None


def coordination_leader(cluster: Cluster) -> str:
    """The task that runs the coordination service: the first of the cluster."""
    tasks = set(cluster.tasks) | set(cluster.addresses)
    if "chief:0" in tasks:
        return "chief:0"
    return min(tasks, key=sort_key) if tasks else "worker:0"


def _resolve(row: dict[str, object], cluster: Cluster) -> dict[str, object]:
    task = row["peer_task"]
    if task == "coordination_service":
        row["peer_task"] = coordination_leader(cluster)
        row["peer"] = row["peer"] or "coordination_service"
    elif task is None and isinstance(row["peer"], str):
        row["peer_task"] = resolve_peer(row["peer"], cluster)
    return row


# --- the table --------------------------------------------------------------------------


def _candidates(events: pa.Table) -> Iterator[dict[str, object]]:
    if events.num_rows == 0:
        return
    mask = pc.match_substring_regex(events["text"], PREFILTER, ignore_case=True)
    cols = ["worker", "source", "line", "ts", "text", "origin"]
    yield from events.filter(mask).select(cols).to_pylist()


def rpc_rows(events: pa.Table, cluster: Cluster) -> list[dict[str, object]]:
    out: list[dict[str, object]] = []
    for ev in _candidates(events):
        origin = ev["origin"] if isinstance(ev["origin"], str) else None
        for row in rpc_rows_from_text(str(ev["text"]), origin):
            row = _resolve(row, cluster)
            if row["via"] == "script" and not row["peer_task"]:
                continue  # a script's connection to something else (a metrics server, a database)
            out.append(
                {"worker": ev["worker"], "source": ev["source"], "line": ev["line"], "ts": ev["ts"], **row}
            )
    return out


def rpc_table(events: pa.Table, cluster: Cluster) -> pa.Table:
    """The ``rpc`` table of a job, cast exactly to :data:`tables.RPC`."""
    rows = rpc_rows(events, cluster)
    if not rows:
        return RPC.empty_table()
    cols = {f.name: [r.get(f.name) for r in rows] for f in RPC}
    arrays = [pa.array(cols[f.name], _plain(f.type)) for f in RPC]
    return pa.Table.from_arrays(arrays, schema=_plain_schema()).cast(RPC)


def _plain(t: pa.DataType) -> pa.DataType:
    return t.value_type if pa.types.is_dictionary(t) else t


def _plain_schema() -> pa.Schema:
    return pa.schema([pa.field(f.name, _plain(f.type), f.nullable) for f in RPC])

"""Templates: what a log record *is*, and the fields it carries.

A record's ``kind`` is the id of the first template whose pattern matches its
text; the pattern's named groups become the record's ``fields``. Templates
name what TensorFlow said, never what it means for a diagnosis: that is the
rules' business. Each pattern is anchored on text TensorFlow prints (quoted
from TF 2.21 runs recorded by the harness unless a comment says otherwise).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate
from typing import Any

from .benign import benign_kind

TASK = r"/job:\w+/replica:\d+/task:\d+"
_TASK_RE = re.compile(r"/job:(\w+)/replica:\d+/task:(\d+)")


def task_id(text: str) -> str:
    """``/job:worker/replica:0/task:1`` → ``worker:1``."""
    m = _TASK_RE.search(text)
    return f"{m[1]}:{m[2]}" if m else ""


def tasks_in(text: str) -> list[str]:
    """Every distinct task named in ``text``, in order of first mention."""
    seen: dict[str, None] = {}
    for m in _TASK_RE.finditer(text):
        seen.setdefault(f"{m[1]}:{m[2]}", None)
    return list(seen)


@dataclass(frozen=True)
class Template:
    kind: str
    # The pattern's text and flags: compiled on first use (``pattern``), since
    # the signature prefilter means most templates are never tried in a run,
    # and compiling all ~80 took 26 ms of a small job's start-up.
    regex: str
    flags: int = 0
    # Known to be harmless although printed at error level (cuInit on a CPU box).
    benign: bool = False
    # Extra fields computed from the whole record text.
    extra: Callable[[str], dict[str, str]] | None = None
    # A whole line on its own (a print): never the continuation of the record before it.
    standalone: bool = False
    # What the fast scanner looks for to find this record in a big log without
    # parsing every line: a regex in the subset that POSIX ERE (grep -E), RE2
    # and Python's re all read the same way (no \\d, no lookarounds, no inline
    # flags). It must match wherever ``pattern`` does; a test checks that
    # against every recorded record of this kind.
    sig: str = ""
    # Printed over and over in a long run (every epoch): the scanner keeps the
    # first and the last of these, not all of them.
    frequent: bool = False
    # The severity a record of this kind has when its line carries none (a
    # shell's bare ``Killed``): what it means, not how it was printed.
    severity: str | None = None

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.regex, self.flags)


def _stragglers(text: str) -> dict[str, str]:
    _, _, tail = text.partition("Example stragglers:")
    return {"stragglers": ",".join(tasks_in(tail))} if tail else {}


def _unhealthy(text: str) -> dict[str, str]:
    return {"tasks": ",".join(tasks_in(text))}


_REMOTE = re.compile(
    r"Additional GRPC error information from remote target (?P<task>" + TASK + r")"
    r"(?: while calling (?P<method>\S+?))?:\s*\n?(?P<detail>.*?)(?=\nAdditional GRPC error|\Z)",
    re.S,
)
_GRPC_STATUS = re.compile(r"grpc_status:(\d+)")
_GRPC_MESSAGE = re.compile(r'grpc_message:"((?:[^"\\]|\\.)*)')


def _remote_errors(text: str) -> dict[str, str]:
    """Which remote tasks a gRPC error came from, and which of them is the origin.

    TF appends one ``Additional GRPC error information from remote target T``
    block per peer it heard the error from. A peer that only relays an abort
    says ``Collective ops is aborted by: ...`` itself; the peer whose message
    is anything else is where the error started (``Socket closed``,
    ``Connection reset by peer``)."""
    remotes: list[str] = []
    origin = ""
    origin_message = ""
    for m in _REMOTE.finditer(text):
        task = task_id(m["task"])
        if task not in remotes:
            remotes.append(task)
        detail = m["detail"]
        msg_m = _GRPC_MESSAGE.search(detail)
        message = msg_m[1] if msg_m else detail.strip().splitlines()[0] if detail.strip() else ""
        if not origin and not message.startswith("Collective ops is aborted by"):
            origin, origin_message = task, message
    out: dict[str, str] = {}
    if remotes:
        out["remote_tasks"] = ",".join(remotes)
    if origin:
        out["peer"] = origin
        out["peer_message"] = origin_message
    if status := _GRPC_STATUS.search(text):
        out["grpc_status"] = status[1]
    return out


def _oom_alloc(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    if (m := re.search(r"^Limit:\s+(\S+)", text, re.M)) or (m := re.search(r"memory_limit_: (\S+)", text)):
        out["limit"] = m[1]
    if m := re.search(r"^InUse:\s+(\S+)", text, re.M):
        out["in_use"] = m[1]
    return out


_EXC_LINE = re.compile(
    r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Failure|Abort|Fault))(?::\s?(?P<msg>.*))?$"
)
_INLINE_EXC = re.compile(r".*\b(?P<type>[A-Za-z_][\w.]*(?:Error|Exception)): (?P<msg>[^\n]*)$", re.S)
IPYTHON_HEAD = re.compile(r"^(?P<type>\w+)\s{2,}Traceback \(most recent call last\)")
# A Python exception printed without its traceback (pasted alone, or the last
# line kept of a long one): an error record of its own. Warnings are not.
BARE_EXCEPTION = re.compile(
    r"^ {0,8}(?:[a-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Fault)(?::\s.*|:?\s*)$"
)


def _traceback(text: str) -> dict[str, str]:
    """The exception that ended a traceback: its type and message.

    With chained exceptions ("During handling of the above exception ...")
    the last exception line is the one that was raised."""
    exc_type = exc_msg = ""
    for line in text.splitlines():
        if line[:1].isspace() or not line or "Traceback (most recent call last)" in line:
            continue
        m = _EXC_LINE.match(line)
        if m:
            exc_type, exc_msg = m["type"], m["msg"] or ""
    if not exc_type and (m := IPYTHON_HEAD.match(text)):
        exc_type = m["type"]  # Jupyter printed the type in the traceback's head; its last line is cut off
    if not exc_type and (m := _INLINE_EXC.search(text)):
        # A traceback flattened onto one line (a launcher's status message): the last exception named.
        exc_type, exc_msg = m["type"], m["msg"]
    out = {"exc_type": exc_type, "exc_message": exc_msg[:500]} if exc_type else {}
    # The modules the exception passed through (file names, innermost last):
    # where it came from says more than its type (a ValueError raised while
    # reading TF_CONFIG is a configuration error).
    frames = list(dict.fromkeys(m[1] for m in _FRAME.finditer(text)))
    if frames:
        out["frames"] = ",".join(frames[-12:])
    # Graph errors name the op that failed and where the program created it
    # ("Detected at node X defined at (most recent call last): File ..."): the
    # innermost frame there is the code site, comparable across workers.
    if (m := _DETECTED.search(text)) is not None:
        out["node"] = m["node"]
        sites = _SITE.findall(text[m.end() :])
        if sites:
            file, line, func = sites[-1]
            out["node_site"] = f"{file}:{line} in {func}"
    return out


_DETECTED = re.compile(r"Detected at node '?(?P<node>[^'\s]+)'? defined at \(most recent call last\):")
_SITE = re.compile(r'^\s*File "(?:[^"]*/)?([^"/]+)", line (\d+), in (\S+)', re.M)


_FRAME = re.compile(r'^\s*File "(?:[^"]*/)?([^"/]+)", line \d+', re.M)


# The scanner's signature of each template (see Template.sig).
_SIGS = {
    "tf.server_started": "Started server with target: grpc://",
    "coord.service_started": "Initializing CoordinationService",
    "coord.task_connected": "has connected to coordination service",
    "coord.waiting_for_tasks": "Waiting for [0-9]+/[0-9]+ tasks to connect",
    "coord.agent_connected": "Coordination agent has successfully connected",
    "coord.barrier_passed": r"Barrier\(.*\) has passed with status",
    "mwms.cluster_spec": "MultiWorkerMirroredStrategy with cluster_spec",
    "mwms.collective_devices": "Enabled multi-worker collective ops",
    "mwms.local_devices": "Using MirroredStrategy with devices",
    "tf_config.dump": "TF_CONFIG",
    "script.whoami": "([Ww]orker|[Rr]ank|[Tt]ask|[Cc]hief)[ _:=#]*([Ii]ndex|[Ii][Dd])?[ :=#]*[0-9]+ *(of|/) *[0-9]+|task_(index|id) *[:=]",
    "env.tf_version": "[Tt][Ee][Nn][Ss][Oo][Rr][Ff][Ll][Oo][Ww]( [Vv]ersion)?[:=]? *[Vv]?[0-9]+[.][0-9]+[.][0-9]"
    "|[Tt][Ee][Nn][Ss][Oo][Rr][Ff][Ll][Oo][Ww](-cpu|-gpu)?==",
    "keras.epoch": "Epoch [0-9]+/[0-9]+",
    "keras.epoch_end": r"[0-9]+/[0-9]+ (\[=+\] )?- [0-9.]+m?s (- |[0-9.]+m?s/step - )",
    "oom.tensor_allocation": "OOM when allocating tensor",
    "oom.allocator_exhausted": "ran out of memory trying to allocate",
    "oom.allocator_retry": "ran out of memory trying to allocate",
    "oom.cuda_alloc_failed": "CUDA_ERROR_OUT_OF_MEMORY|Dst tensor is not initialized",
    "oom.bfc_dump": "Sum Total of in-use chunks|Chunks of size [0-9]+ totalling|Bin [(][0-9]+[)]: Total Chunks|BFCAllocator dump",
    "oom.xla": "Ran out of memory in memory space|Out of memory while trying to allocate|RESOURCE_EXHAUSTED: Out of memory|[Rr]esource exhausted: Out of memory",
    "oom.cudnn_alloc": "CUDNN_STATUS_ALLOC_FAILED|CUBLAS_STATUS_ALLOC_FAILED|Failed to get convolution algorithm|cuDNN failed to initialize|Could not create cudnn handle",
    "k8s.evicted": "Evicted|low on resource",
    "train.epoch": "[Ee][Pp][Oo][Cc][Hh][ :#]*[0-9]+ */ *[0-9]+",
    "train.loss_not_finite": "[Ll][Oo][Ss][Ss] *(is|became|was|=|:) *([Nn][Aa][Nn]|[Ii][Nn][Ff])|NaN loss|non-finite loss",
    "oom.generic": "[Oo]ut[- ]of[- ][Mm]emory",
    "oom.resource_exhausted": "ResourceExhaustedError",
    "net.connect_failed": "connect[(][)] to [^ ]+ failed|unable to complete a TCP connection|usually caused by a firewall|could not (establish|open) a TCP connection",
    "peer.lost": "Aborting Ring[A-Za-z]+ with|StartAbort|peer process has unexpectedly disconnected|mpirun noticed that process rank|Primary job +terminated normally, but|one or more processes exited with non-zero status|has been detected as unhealthy|heartbeat timeout|incarnation doesn.t match|lame workers|Connection closed by peer|Connection reset by peer|Socket closed|description.:.EOF|Error reported to Coordinator",
    "collective.aborted": "Collective ops is aborted by",
    "coord.unhealthy_tasks": "tasks are unhealthy",
    "tf.sigterm_caught": "SIGTERM caught|Received SIGTERM",
    "train.loop_ended": "Loss for final step",
    "launcher.exited": "exited with code [0-9]+",
    "tf.server_start_failed": "Could not start gRPC server|Failed to add port to server|Address already in use|No address added out of total",
    "host.bad_alloc": "std::bad_alloc",
    "keras.input_exhausted": "Your (input|dataset iterator|dataset|generator) ran out of data",
    "tf.end_of_sequence": "End of sequence",
    "numerics.check_failed": "Tensor had (NaN|Inf|NaN and Inf) values",
    "keras.invalid_loss": "Invalid loss, terminating training",
    "grpc.message_too_large": "(Received|Sent) message larger than max",
    "tf1.create_session_waiting": "CreateSession still waiting for response from worker",
    "collective.shape_mismatch": "Shape mismatch in the collective instance|Inconsistent output shapes",
    "collective.type_mismatch": "Collective instance [0-9]+ expected type",
    "collective.group_mismatch": "but that group has size|and group_key ?[0-9]+ but th",
    "collective.rank_mismatch": "Mismatched (ALLREDUCE|ALLGATHER|BROADCAST|allreduce|allgather|broadcast)|different ranks are trying to submit|only subset of ranks",
    "coord.barrier_timeout": "Barrier timed out",
    "mwms.waiting_for_cluster": "Waiting for the cluster, timeout",
    "tf1.session_retry": "An error was raised while a session was being created",
    "cluster.startup_wait": "waiting for [0-9]+ reservations|timed out waiting for reservations|Master init: |RegisterTask|to (connect to|register with) (the )?coordination service|Waiting for (all )?(workers|the cluster|TFSparkNodes) to",
    "mwms.cluster_ready": "Cluster is ready",
    "coord.task_restarted": "tried to connect with a different incarnation",
    "mwms.peer_down": "seems down, retrying|[Cc]luster check alive failed",
    "nccl.error": "NCCL WARN|NCCL: |NCCL error|NCCL failure|nccl[A-Z][A-Za-z]*Error|unhandled system error|unhandled cuda error|ncclCommInitRank failed|Error invoking NCCL",
    "tf.op_not_registered": "Op type not registered|is neither a type of a primitive operation nor a name of a function",
    "grpc.protobuf_too_large": "Cannot serialize protocol buffer of type|exceeded maximum protobuf size|protocol message was rejected because it was too big|[Mm]essage exceeds [0-9]+ bytes|larger than 2GB|2GB limit",
    "tf.graph_incompatible": "NodeDef mentions attr|NodeDef missing attr|GraphDef (min consumer|producer)|not built with the same version|Loaded runtime Cu[Dd][Nn][Nn] library",
    "checkpoint.write_failed": "MergeV2Checkpoints|_temp/part-|_temp_[0-9a-f]+|Failed to rename: |[Uu]nable to (lock|create|open|truncate) file|variables_temp|[.]ckpt|tempstate|TensorSliceReader|AlreadyExistsError",
    "train.step": "[Ss][Tt][Ee][Pp]( |:|=|#|\\[)*[0-9]|[Ll][Oo][Ss][Ss] *[=:] *[^ ,]*,? *([Gg][Ll][Oo][Bb][Aa][Ll]_)?[Ss][Tt][Ee][Pp] *[=:]",
    "shell.killed": "Killed",
    "kernel.oom_kill": "Out of memory: Kill|invoked oom-killer|oom-kill:|Memory cgroup out of memory|oom_reaper",
    "k8s.oom_killed": "OOMKilled",
    "proc.exit_code": "[Ee][Xx][Ii][Tt](_|[Ee][Dd])?( [Ww][Ii][Tt][Hh])?( [Ee][Xx][Ii][Tt])? ?([Cc][Oo][Dd][Ee]|[Ss][Tt][Aa][Tt][Uu][Ss])|non-zero exit status",
    "proc.script_missing": "can't open file '",
    "proc.crashed": "Segmentation fault|Fatal Python error|[*][*][*] SIG[A-Z]|[*][*][*] Error in|double free or corruption|stack smashing detected|core dumped|[Ss]ignal: (killed|terminated|aborted|segmentation)|[Kk]illed by signal|[Tt]erminated by signal",
}


def _t(kind: str, pattern: str, flags: int = 0, **kw: object) -> Template:
    return Template(kind, pattern, flags, sig=_SIGS[kind], **kw)  # type: ignore[arg-type]


TEMPLATES: tuple[Template, ...] = (
    # --- the cluster comes up -------------------------------------------------
    _t("tf.server_started", r"Started server with target: grpc://(?P<host>[^\s:]+|\[[^\]]+\]):(?P<port>\d+)"),
    _t("coord.service_started", r"Initializing CoordinationService"),
    _t(
        "coord.task_connected",
        r"(?P<task_name>"
        + TASK
        + r") has connected to coordination service\. Incarnation: (?P<incarnation>\d+)",
        extra=lambda text: {"task": task_id(text)},
    ),
    _t(
        "coord.waiting_for_tasks",
        r"Waiting for (?P<waiting>\d+)/(?P<total>\d+) tasks to connect",
        extra=_stragglers,
    ),
    _t("coord.agent_connected", r"Coordination agent has successfully connected"),
    # Older TF 2.x: the startup barrier that waits for every task (context_distributed_manager.cc).
    _t("coord.barrier_timeout", r"Barrier timed out\. Barrier_id: (?P<barrier>\S+)"),
    # Cluster start-up that never completes, in other launchers' and TF1's words:
    # TensorFlowOnSpark's reservations, a TF1 master that cannot reach its
    # workers, a task that cannot register with the coordination service.
    _t(
        "cluster.startup_wait",
        r"(?P<wait>waiting for \d+ reservations|timed out waiting for reservations|Master init: \w+"
        r"|RegisterTask|Failed to (?:connect to|register with) (?:the )?coordination service"
        r"|Waiting for (?:all )?(?:workers|the cluster|TFSparkNodes) to (?:start|be ready|join))",
    ),
    # TF1 MonitoredSession retrying a session it cannot create (INFO level, in a loop).
    _t(
        "tf1.session_retry",
        r"An error was raised while a session was being created",
        severity="error",
    ),
    # TF 2.4-2.6 MWMS: each worker waits until every worker's server answers.
    _t("mwms.waiting_for_cluster", r"Waiting for the cluster, timeout = (?P<timeout>\S+)"),
    _t("mwms.cluster_ready", r"Cluster is ready\."),
    # The coordination leader when a task registers again after a restart (TF 2.21, recorded).
    _t(
        "coord.task_restarted",
        r"^(?P<task_name>" + TASK + r") unexpectedly tried to connect with a different incarnation",
        extra=lambda text: {"task": task_id(text)},
    ),
    _t("coord.barrier_passed", r"Barrier\((?P<barrier>[^)]*)\) has passed with status: (?P<status>\w+)"),
    _t(
        "mwms.cluster_spec",
        r"MultiWorkerMirroredStrategy with cluster_spec = (?P<cluster_spec>\{.*?\}), "
        r"task_type = '(?P<task_type>\w+)', task_id = (?P<task_index>\d+), num_workers = (?P<num_workers>\d+)",
    ),
    _t(
        "mwms.collective_devices",
        r"Enabled multi-worker collective ops with available devices: \[(?P<devices>[^\]]*)\]",
    ),
    _t("mwms.local_devices", r"Using MirroredStrategy with devices \((?P<devices>[^)]*)\)"),
    # A TF_CONFIG printed by a script or an estimator, as JSON or as a Python dict
    # ("TF_CONFIG: {...}", "TF_CONFIG environment variable: {'cluster': ...}", "TF_CONFIG is {...}").
    _t(
        "tf_config.dump",
        r"TF_CONFIG(?:\W{1,4}|\s+(?:environment variable|is|was|set to)\W{0,3})(?P<tf_config>\{.*\})",
    ),
    # What a script says of itself: "worker 1 of 3", "rank 2/4", "task_index=1".
    _t(
        "script.whoami",
        r"\b(?P<role>[Ww]orker|[Rr]ank|[Tt]ask|[Cc]hief)[ _:=#]*(?:[Ii]ndex|[Ii][Dd])?[ :=#]*(?P<index>\d+)\s*(?:of|/)\s*(?P<total>\d+)\b"
        r"|\btask_(?:index|id)\s*[:=]\s*(?P<index2>\d+)",
    ),
    # What training scripts commonly print (`print("TensorFlow version:", tf.__version__)`)
    # and `pip freeze` lines; TF itself prints no version banner.
    _t(
        "env.tf_version",
        r"^(?:TensorFlow(?: version)?[:=]?\s+v?|tensorflow(?:-cpu|-gpu)?==)(?P<version>\d+\.\d+\.\d+\S*)\s*$",
        re.I,
        standalone=True,
    ),
    # --- training ---------------------------------------------------------------
    _t("keras.epoch", r"^Epoch (?P<epoch>\d+)/(?P<epochs>\d+)\s*$", standalone=True, frequent=True),
    # verbose=2: "8/8 - 2s - loss: 0.72 - ..."; verbose=1: "8/8 [=====] - 1s 9ms/step - loss: ..."
    _t(
        "keras.epoch_end",
        r"^(?P<step>\d+)/(?P<steps>\d+) (?:\[=+\] )?- [\d.]+m?s (?:[\d.]+m?s/step )?- (?P<metrics>loss: .*)$",
        standalone=True,
        frequent=True,
    ),
    # --- failures ---------------------------------------------------------------
    _t(
        "oom.tensor_allocation",
        r"OOM when allocating tensor(?: with shape ?\[(?P<shape>[^\]]*)\])?(?: and type (?P<dtype>\w+))?"
        r"(?: on (?P<device>\S+))?(?: by allocator (?P<allocator>\w+))?",
    ),
    _t(
        "oom.allocator_exhausted",
        # The BFC allocator's warning; "freed_by_count=0 ... not a failure" is a
        # retry hint, not an OOM, and is deliberately a different template.
        r"Allocator \((?P<allocator>[^)]+)\) ran out of memory trying to allocate (?P<requested>[\d.]+\s?\w+)"
        r"(?: \(rounded to (?P<requested_bytes>\d+)\))?(?!.*freed_by_count)",
        extra=_oom_alloc,
    ),
    _t("oom.allocator_retry", r"ran out of memory trying to allocate .*freed_by_count"),
    # The CUDA driver refusing memory (cuda_driver.cc). TF prints it while it
    # backs off to smaller reservations too, so alone it is not a failure;
    # "Dst tensor is not initialized" is how a failed copy to a full GPU surfaces.
    _t(
        "oom.cuda_alloc_failed",
        r"failed to allocate (?P<requested>[\d.]+\s?\w+) \((?P<requested_bytes>\d+) bytes\) from device: "
        r"CUDA_ERROR_OUT_OF_MEMORY|Dst tensor is not initialized",
    ),
    # A BFC allocator dump (TF prints it when an allocation fails), seen in part.
    _t(
        "oom.bfc_dump",
        r"Sum Total of in-use chunks: (?P<in_use>\S+)|Chunks of size \d+ totalling|Bin \(\d+\): Total Chunks"
        r"|BFCAllocator dump",
    ),
    # XLA and TPU compilers running out of device memory.
    _t(
        "oom.xla",
        r"Ran out of memory in memory space (?P<space>\w+)|Out of memory while trying to allocate (?P<requested>[\d.]+\s?\w+)"
        r"|RESOURCE_EXHAUSTED: Out of memory|[Rr]esource exhausted: Out of memory",
    ),
    # cuDNN/cuBLAS cannot get their workspace: usually because TF already took
    # the GPU's memory (the fix is memory growth or a smaller batch).
    _t(
        "oom.cudnn_alloc",
        r"(?P<status>CUDNN_STATUS_ALLOC_FAILED|CUBLAS_STATUS_ALLOC_FAILED)|Failed to get convolution algorithm"
        r"|cuDNN failed to initialize|Could not create cudnn handle",
    ),
    _t("collective.aborted", r"Collective ops is aborted by: (?P<reason>[^\n]*)", extra=_remote_errors),
    # Collective members that disagree (collective_param_resolver_local.cc, TF 2.x).
    _t(
        "collective.shape_mismatch",
        r"Shape mismatch in the collective instance (?P<instance>\d+)(?:\. Op at device (?P<device>\S+) expected "
        r"shape \[(?P<shape>[^\]]*)\] but another member in the group expected shape \[(?P<other_shape>[^\]]*)\])?"
        # TF 2.0-2.3 ring reducers: the collective's output disagrees with what this member expected.
        r"|Inconsistent output shapes, got \[(?P<got_shape>[^\]]*)\], but expected is \[(?P<expected_shape>[^\]]*)\]",
        extra=lambda text: {"task": task_id(text)},
    ),
    # Members that disagree on the group itself: its size, or the device type a key was registered with.
    _t(
        "collective.group_mismatch",
        r"has group_size (?P<size>\d+) and group_key ?\d+ but that group has size (?P<group_size>\d+)"
        r"|is joining a group with size ?(?P<joining>\d+), but that group has size (?P<existing>\d+)"
        r"|is assigned to device \S+ with type \w+ and group_key \d+ but th",
    ),
    # Horovod's coordinator: ranks that submitted different tensors, or one rank never did.
    _t(
        "collective.rank_mismatch",
        r"Mismatched (?:ALLREDUCE|ALLGATHER|BROADCAST|allreduce|allgather|broadcast)[^\n]*"
        r"|different ranks are trying to submit different tensors|only subset of ranks is submitting tensors",
    ),
    _t(
        "collective.type_mismatch",
        r"Collective instance (?P<instance>\d+) expected type (?P<expected_type>\d+) and data_type "
        r"(?P<expected_dtype>\d+) but got type (?P<type>\d+) and data_type (?P<dtype>\d+)",
    ),
    # TF 2.4-2.6 MWMS health checks (collective_all_reduce_strategy.py): a peer is gone.
    _t(
        "mwms.peer_down",
        r"(?P<task_name>"
        + TASK
        + r") seems down, retrying|[Cc]luster check alive failed, (?P<down>"
        + TASK
        + r") is down",
        extra=lambda text: {"task": task_id(text)},
    ),
    # NCCL's own warnings and the errors TF wraps them in (nccl_manager.cc, nccl_communicator.cc).
    _t(
        "nccl.error",
        r"NCCL WARN (?P<nccl_message>.*)|NCCL: (?P<nccl_status>unhandled system error|unhandled cuda error"
        r"|internal error|invalid usage|invalid argument|remote process exited[^.]*)"
        r"|(?P<nccl_code>nccl[A-Z]\w*Error)|NCCL (?:error|failure)[: ]"
        r"|(?:Internal|INTERNAL|InternalError|Unknown|UNKNOWN):\s+unhandled (?:system|cuda) error"
        r"|(?P<nccl_call>ncclCommInitRank failed|Error invoking NCCL)[^\n]*",
        severity="error",
    ),
    # TF1 and graph mode: "Op type not registered 'X' in binary running on H";
    # TF2 eager and remote functions: "'X' is neither a type of a primitive
    # operation nor a name of a function registered in binary running on H"
    # (TF's own text adds: the client and server binaries may not be built
    # with the same version).
    _t(
        "tf.op_not_registered",
        r"Op type not registered '(?P<op>[^']+)' in binary running on (?P<host>\S+)"
        r"|'(?P<function>[^']+)' is neither a type of a primitive operation nor a name of a function"
        r" registered in binary running on (?P<function_host>\S+?)\.?(?:\s|$)",
    ),
    _t(
        "grpc.protobuf_too_large",
        r"(?P<message_type>[\w.]+) exceeded maximum protobuf size of 2GB: (?P<size>\d+)"
        r"|A protocol message was rejected because it was too big \(more than (?P<max>\d+) bytes\)"
        r"|[Mm]essage exceeds (?P<limit>\d+) bytes|(?:larger than|exceeds?) (?:the )?2GB(?: limit)?"
        r"|Cannot (?:create|serialize) a tensor proto whose content is larger than 2GB"
        r"|Cannot serialize protocol buffer of type (?P<proto>[\w.]+) as the serialized size \((?P<serialized>\d+) ?bytes\)"
        r" would be larger than the limit",
    ),
    # A graph or binary from another TensorFlow version (TF1 and TF2 texts).
    _t(
        "tf.graph_incompatible",
        r"NodeDef mentions attr '(?P<attr>[^']+)' not in Op|NodeDef missing attr '(?P<missing>[^']+)'"
        r"|GraphDef (?:min consumer|producer) version|not built with the same version"
        r"|Loaded runtime Cu[Dd][Nn][Nn] library: (?P<runtime>\S+) but source was compiled with: (?P<built>\S+)",
    ),
    # A checkpoint whose files another writer moved or removed (MergeV2Checkpoints
    # merges each writer's ``<prefix>_temp/part-*`` files into the checkpoint).
    _t(
        "checkpoint.write_failed",
        r"(?:MergeV2Checkpoints.*?|Failed to rename: )(?:(?P<path>\S+_temp(?:_[0-9a-f]+)?/part-\S+)|\S+_temp\S*)"
        r"|(?P<temp_path>\S+_temp(?:_[0-9a-f]+)?/part-\d+-of-\d+\S*)[;:] No such file or directory"
        # h5py when another process holds the file (several workers saving one .h5 path).
        r"|[Uu]nable to (?:lock|create|open|truncate) file(?:[^\n]*name = '(?P<h5_path>[^']+)')?"
        r"[^\n]*(?:errno = 11|Resource temporarily unavailable|file locking|lock)"
        # A save or restore that finds another writer's files gone, or already there
        # (TF1 sharded saves, SavedModel exports, model_to_estimator warm starts).
        r"|(?:NotFound|AlreadyExists|Unknown|DataLoss|Not found|already exists)[^\n]{0,40}?"
        r"(?P<io_path>\S*(?:_temp_[0-9a-f]{6,}|variables_temp|\.ckpt|tempstate|checkpoint)\S*)"
        r"|Unsuccessful TensorSliceReader constructor|AlreadyExistsError: file already exists"
        r"|MergeV2Checkpoints[^\n]*(?:Not found|No such file)",
        re.S,
    ),
    _t("coord.unhealthy_tasks", r"The following tasks are unhealthy", extra=_unhealthy),
    # A connection to another node that failed outside gRPC: Open MPI's TCP
    # transport and daemons, launchers (their own words name the firewall).
    _t(
        "net.connect_failed",
        r"connect\(\) to (?P<address>\S+) failed: (?P<why>No route to host|Connection refused|Connection timed out)"
        r"|unable to complete a TCP connection|usually caused by a firewall|could not (?:establish|open) a TCP connection",
        severity="error",
    ),
    # A peer lost, as every TF era and launcher words it (TF1/2.0 ring reducers,
    # the coordination service, MPI and Horovod, gRPC's connection errors);
    # which peer, when the text says, is in ``task``. More specific records
    # (collective.aborted, coord.unhealthy_tasks) are matched before this one.
    _t(
        "peer.lost",
        r"(?P<how>Aborting Ring\w+ with (?:Unavailable|UNAVAILABLE)\b|StartAbort (?:Unavailable|UNAVAILABLE)\b|peer process has unexpectedly disconnected"
        r"|mpirun noticed that process rank \d+|has been detected as unhealthy|heartbeat timeout"
        # Open MPI's own words when a rank exits non-zero (its process, not a signal).
        r"|Primary job +terminated normally, but \d+ process(?:es)? returned"
        r"|mpirun detected that one or more processes exited with non-zero status"
        r"|incarnation doesn.t match|lame workers|Connection closed by peer|Connection reset by peer"
        r"|Socket closed|\"description\":\"EOF\"|Error reported to Coordinator: <class '[\w.]*UnavailableError'>)",
        extra=lambda text: {"task": task_id(text)},
        severity="error",
    ),
    _t("tf.sigterm_caught", r"SIGTERM caught|Received SIGTERM"),
    # An Estimator's train() returned on this worker (its input ended, or it
    # reached max_steps): its training loop is over, whatever the others do.
    _t("train.loop_ended", r"Loss for final step: (?P<loss>[-+\w.]*\w)"),
    _t(
        "tf.server_start_failed",
        r"Could not start gRPC server|Failed to add port to server(?:: .*? for '(?P<address>[^']+)')?"
        r"|bind addr=(?P<bind>\S+): Address already in use|No address added out of total \d+ resolved"
        r"|Address already in use|UNKNOWN: Could not start gRPC server",
        severity="error",
    ),
    # libstdc++'s last words when C++ code cannot get memory ("terminate called
    # after throwing an instance of 'std::bad_alloc'  what():  std::bad_alloc").
    _t("host.bad_alloc", r"std::bad_alloc"),
    # tf_keras's data_adapter warning when a dataset ends before steps_per_epoch * epochs.
    _t(
        "keras.input_exhausted",
        r"Your (?:input|dataset iterator|dataset|generator) ran out of data; interrupting training",
        standalone=True,
    ),
    _t(
        "tf.end_of_sequence",
        r"\bEnd of sequence\b",
    ),
    # tf.debugging.check_numerics / enable_check_numerics (array_ops, check_numerics_op.cc).
    _t(
        "numerics.check_failed",
        r"(?P<message>[^\n:]*?) : Tensor had (?P<values>NaN and Inf|NaN|Inf) values",
    ),
    # tf_keras.callbacks.TerminateOnNaN.
    _t("keras.invalid_loss", r"Batch (?P<batch>\d+): Invalid loss, terminating training", standalone=True),
    _t(
        "grpc.message_too_large",
        r"(?P<direction>Received|Sent) message larger than max \((?P<size>\d+) vs\. (?P<max>\d+)\)",
    ),
    # TF1 distributed sessions (master_session.cc).
    _t(
        "tf1.create_session_waiting",
        r"CreateSession still waiting for response from worker: (?P<task_name>" + TASK + ")",
        extra=lambda text: {"task": task_id(text)},
    ),
    # docker-compose's own line when a service's container ends.
    _t("launcher.exited", r"^(?P<service>[\w.-]+) exited with code (?P<code>\d+)\s*$", standalone=True),
    # --- what the platform says when a process dies (shells, kernels, schedulers) ----
    # The kernel's OOM killer (dmesg, journalctl -k), pasted into a log or a ticket.
    _t(
        "kernel.oom_kill",
        r"Out of memory: Kill(?:ed)? process (?P<pid>\d+)|invoked oom-killer|oom-kill:"
        r"|Memory cgroup out of memory|oom_reaper: reaped process (?P<reaped>\d+)",
        severity="error",
    ),
    # Kubernetes evicting a pod (kubectl get pods / describe / events).
    _t("k8s.evicted", r"\bEvicted\b|[Tt]he node was low on resource: (?P<resource>\w+)", severity="error"),
    # Kubernetes' reason for a container the kernel killed for its memory limit.
    _t("k8s.oom_killed", r"\bOOMKilled\b", severity="error"),
    # A shell's word for a child killed by SIGKILL ("Killed", "line 1: 1234 Killed  python ...").
    _t(
        "shell.killed",
        r"^(?:[^\n]*: line \d+: +\d+ )?Killed(?:\s+\S[^\n]*)?\s*$",
        standalone=True,
        severity="error",
    ),
    # The worker's script could not even start (a file missing from the image).
    _t(
        "proc.script_missing",
        r"can't open file '(?P<script>[^']+)': \[Errno 2\] No such file or directory",
        severity="error",
    ),
    # Native crashes: the process ends without a Python traceback.
    _t(
        "proc.crashed",
        r"(?P<crash>Segmentation fault|Fatal Python error: \w+|\*\*\* SIG[A-Z]+|Aborted \(core dumped\)"
        r"|\*\*\* Error in `[^`]+': [^*]+|double free or corruption|stack smashing detected"
        r"|core dumped|[Ss]ignal: (?:killed|terminated|aborted|segmentation fault)"
        r"|(?:[Kk]illed|[Tt]erminated) by signal (?:SIG)?\w+)",
        severity="error",
    ),
    # An exit status a launcher, scheduler or shell printed (not 0: that one is below).
    _t(
        "proc.exit_code",
        r"(?i)\b(?:exit(?:ed)?(?: with)?(?: exit)? (?:code|status)|exit_?code|returned non-zero exit status"
        r"|terminated with exit code)\b[\s:=]*(?P<code>-?[1-9]\d*)\b",
        severity="error",
    ),
    # --- progress a training script prints ---------------------------------------
    # Custom loops and TF1 estimators: "epoch 3/10 step 120 loss=0.41", "[step 120] loss 0.41",
    # "Step 120: loss = 0.41 (0.2 s)", "INFO:tensorflow:loss = 3.72, step = 10300 (50.581 sec)".
    _t(
        "train.step",
        r"(?i)\b(?:global_)?step\b[\s:=#\[]*\d+(?!\.\d)(?:\s*/\s*\d+)?[^\n]{0,80}?"
        r"\b(?:loss|took|time|sec|s/step|ms|examples)\b"
        r"|\bloss\b\s*[=:]\s*[-+\w.]+,?\s*(?:global_)?step\s*[=:]\s*\d+",
        extra=lambda text: _progress(text),
        frequent=True,
    ),
    # A script's epoch line without a step: "epoch 3/3 done: mean loss 0.46", "Epoch 2/10 - loss ...".
    _t(
        "train.epoch",
        r"(?i)\bepoch\b\s*[:#]?\s*(?P<epoch>\d+)\s*/\s*(?P<epochs>\d+)\b(?![^\n]*\bstep)",
        frequent=True,
    ),
    # A loss reported as not finite in any words ("loss is NaN.", Keras bars with unknown totals).
    _t(
        "train.loss_not_finite",
        r"(?i)\bloss\b\s*(?:is|became|was|=|:)\s*(?P<value>nan|inf)\b|\bNaN loss\b|non-finite loss",
        severity="error",
    ),
    # TF's exception for an allocation that failed, when its message (which the
    # specific templates above read) was cut off, as in a notebook's traceback.
    _t("oom.resource_exhausted", r"\bResourceExhaustedError\b"),
    # Memory run out, in words no specific template knows ("Internal: out of memory",
    # "The replica master 0 ran out-of-memory").
    _t("oom.generic", r"(?i)\b(?:ran )?out[- ]of[- ]memory\b", severity="error"),
)


_STEP = re.compile(r"(?i)\b(?:global_)?step\b[\s:=#\[]*(?P<step>\d+)(?!\.\d)(?:\s*/\s*(?P<steps>\d+))?")
_LOSS = re.compile(r"(?i)\bloss\b\s*[=:]?\s*(?P<loss>[-+]?(?:\d*\.?\d*(?:nan|inf)|\d+\.?\d*(?:e[-+]?\d+)?))")
_EPOCH = re.compile(r"(?i)\bepoch\b[\s:=#\[]*(?P<epoch>\d+)(?:\s*/\s*(?P<epochs>\d+))?")


def _progress(text: str) -> dict[str, str]:
    """Step, loss and epoch from a script's progress line."""
    out: dict[str, str] = {}
    if m := _STEP.search(text):
        out["step"] = m["step"]
        if m["steps"]:
            out["steps"] = m["steps"]
    if m := _LOSS.search(text):
        out["loss"] = m["loss"]
    if m := _EPOCH.search(text):
        out["epoch"] = m["epoch"]
        if m["epochs"]:
            out["epochs"] = m["epochs"]
    return out


# Records that show a worker made training progress (Keras' and the script's own).
PROGRESS_KINDS = ("keras.epoch_end", "train.step", "train.epoch", "keras.epoch")

# A script's progress print: never the continuation of a C++ record before it.
PROGRESS_LINE = re.compile(
    "|".join(
        f"(?:{t.regex.removeprefix('(?i)')})" for t in TEMPLATES if t.kind in ("train.step", "train.epoch")
    ),
    re.I,
)

# The least severity a record of a kind has, whatever it was printed at (a
# bare "Killed" prints none; TF1 prints some failures at INFO level).
TEMPLATE_SEVERITY: dict[str, str] = {t.kind: t.severity for t in TEMPLATES if t.severity}

# Lines that start a record of their own even right after a C++ record, whose
# unheadered followers are otherwise its continuation.
STANDALONE = re.compile(
    "|".join(
        [
            *(f"(?:{t.regex})" for t in TEMPLATES if t.standalone),
            r"^\d+/\d+ \[",  # a Keras progress bar
            r"^WARNING: All log messages before absl::InitializeLog",
        ]
    ),
    re.I,
)

_TRACEBACK = Template("py.traceback", r"^Traceback \(most recent call last\):", extra=_traceback)


# TF errors whose template a traceback that ends in them keeps (as ``tf_kind``).
_IN_TRACEBACKS = (
    "oom.",
    "collective.",
    "numerics.",
    "host.",
    "nccl.",
    "grpc.",
    "checkpoint.",
    "tf.graph_incompatible",
    "tf.op_not_registered",
    "tf.end_of_sequence",
    "tf.server_start_failed",
    "cluster.",
)


def classify(text: str) -> tuple[str | None, dict[str, str], bool]:
    """(kind, fields, benign) for a record's text; kind None when no template matches."""
    return _classify(text, _candidates)


def classify_many(texts: list[str]) -> list[tuple[str | None, dict[str, str], bool]]:
    """``classify`` of each text, with one multi-pattern pass over all of them
    to find each one's candidate templates (instead of one pass per text)."""
    many = _candidates_many(texts)
    if many is None:
        return [_classify(t, _candidates) for t in texts]
    return [_classify(t, _known(maybe)) for t, maybe in zip(texts, many, strict=True)]


_Candidates = Callable[[str], "set[int] | None"]


def _known(maybe: set[int]) -> _Candidates:
    """Candidates found beforehand, for a text and any part of it."""

    def candidates(_text: str) -> set[int] | None:
        return maybe

    return candidates


def _classify(text: str, candidates: _Candidates) -> tuple[str | None, dict[str, str], bool]:
    first, _, rest = text.partition("\n")
    if (harmless := benign_kind(first)) is not None:
        # Lines a script printed right after it can be folded into its record:
        # what they say is not harmless by association.
        found = _match(rest, candidates) if rest.strip() else None
        return found if found is not None and found[0] is not None else (harmless, {}, True)
    if (
        text.startswith("Traceback")
        or BARE_EXCEPTION.match(first)
        or IPYTHON_HEAD.match(first)
        or "Traceback (most recent call last)" in first  # a traceback flattened onto one line
    ):
        fields = _traceback(text)
        # A traceback that ends in a TF error keeps the error's own template too.
        maybe = candidates(text)
        for t in _in_order(maybe):
            if t.kind.startswith(_IN_TRACEBACKS) and (m := t.pattern.search(text)):
                fields.update({k: v for k, v in m.groupdict().items() if v is not None})
                fields["tf_kind"] = t.kind
                if t.extra:
                    fields.update(t.extra(text))
                break
        return _TRACEBACK.kind, fields, False
    return _match(text, candidates)


def _in_order(maybe: set[int] | None) -> Iterable[Template]:
    """The templates to try, in TEMPLATES' order (first match wins): only the
    candidates when there are any, else all."""
    return TEMPLATES if maybe is None else [TEMPLATES[i] for i in sorted(maybe)]


def _match(text: str, candidates: _Candidates) -> tuple[str | None, dict[str, str], bool]:
    maybe = candidates(text)
    for t in _in_order(maybe):
        m = t.pattern.search(text)
        if m:
            fields = {k: v for k, v in m.groupdict().items() if v is not None}
            if t.extra:
                fields.update(t.extra(text))
            if t.kind in _ABORTS and (why := _abort_reason(fields.get("reason", ""))) is not None:
                # "Collective ops is aborted by: <reason>": the reason decides
                # what happened (a shape mismatch, not a lost peer).
                return why[0], {**fields, **why[1]}, False
            return t.kind, fields, t.benign
    return None, {}, False


_ABORTS = ("collective.aborted",)
_REASON_KINDS = ("collective.shape_mismatch", "collective.type_mismatch", "collective.group_mismatch")


def _abort_reason(reason: str) -> tuple[str, dict[str, str]] | None:
    for t in TEMPLATES:
        if t.kind in _REASON_KINDS and (m := t.pattern.search(reason)):
            fields = {k: v for k, v in m.groupdict().items() if v is not None}
            if t.extra:
                fields.update(t.extra(reason))
            return t.kind, fields
    return None


# Which templates can match a text: every template's ``sig`` matches wherever
# its pattern does (a test holds each one to that over every recorded record),
# so one multi-pattern pass over the text names the few whose full patterns
# are worth trying, instead of trying all of them in turn.
_PREFILTER: object = None  # the hyperscan database, False when there is none
_BATCH: object = None  # the same patterns for many texts in one pass


def _prefilter(batch: bool) -> Any:
    global _PREFILTER, _BATCH
    if (_BATCH if batch else _PREFILTER) is None:
        from . import multipattern

        hs = multipattern.hyperscan_module()
        _PREFILTER = _BATCH = False
        if hs is not None:
            exprs = [t.sig.encode() for t in TEMPLATES]
            ids = list(range(len(exprs)))
            _PREFILTER = multipattern.database(hs, exprs, ids, [hs.HS_FLAG_SINGLEMATCH] * len(exprs))
            # Texts joined by newlines: every match has to be reported (one a
            # pattern would be one in the whole batch), and ^ (should a
            # signature ever use it) starts any line, so a text's candidates
            # are never fewer than its own pass would give.
            _BATCH = multipattern.database(hs, exprs, ids, [hs.HS_FLAG_MULTILINE] * len(exprs))
    return _BATCH if batch else _PREFILTER


def _candidates(text: str) -> set[int] | None:
    """Indexes in TEMPLATES of the templates whose signature ``text`` matches;
    None when no multi-pattern engine is available (then all are tried)."""
    db = _prefilter(batch=False)
    if db is False:
        return None
    found: set[int] = set()
    add = found.add

    def on_match(i: int, _from: int, _to: int, _flags: int, _ctx: object) -> None:
        add(i)

    db.scan(text.encode("utf-8", "surrogatepass"), match_event_handler=on_match)
    return found


def _candidates_many(texts: list[str]) -> list[set[int]] | None:
    """``_candidates`` of each text, from one pass over them all joined by
    newlines. A match ends inside the text it was found in (one that runs
    over a newline into the next text only adds a candidate, which its full
    pattern then turns down)."""
    db = _prefilter(batch=True)
    if db is False:
        return None
    parts = [t.encode("utf-8", "surrogatepass") for t in texts]
    ends = list(accumulate(len(p) + 1 for p in parts))
    found: list[set[int]] = [set() for _ in parts]

    def on_match(i: int, _from: int, to: int, _flags: int, _ctx: object) -> None:
        found[bisect_right(ends, to - 1)].add(i)

    db.scan(b"\n".join(parts), match_event_handler=on_match)
    return found


def reset_prefilter() -> None:
    """Forget the prefilter (tests switch engines)."""
    global _PREFILTER, _BATCH
    _PREFILTER = _BATCH = None

"""The message catalogue: every message this tool recognises, one entry each.

A **message** is a record a program prints (TensorFlow, Keras, Horovod, Open
MPI, NCCL, gRPC, Kubernetes, Slurm, the kernel, a shell, the training script
itself). Its entry holds, in one place:

* ``regex``: how a record of it is recognised; its named groups become the
  record's ``fields`` (``extra`` computes more from the whole record);
* ``sig``: what the fast scanner looks for to find such a record in a big log
  (the subset of syntax that grep -E, RE2, hyperscan, Python's re and ripgrep
  read alike). Derived from ``regex`` when the entry gives none
  (``portable.signature``); a test holds every sig to matching wherever its
  regex does, over every recorded record;
* ``means``: what it says, in words; ``tags``: what it means to the rules
  (``progress``, ``peer_report``, ``in_traceback``, ``abort_reason``,
  ``benign``), never the rules' own copies of its wording;
* ``origin``: who prints it, in which file and function, in which eras;
  ``seen``: where it was seen when no recording of this project holds it;
* ``tier``: the order in which messages are tried, since the first match
  wins: ``relay`` (a message that carries another's reason), ``specific``,
  then ``general`` (words that more specific messages also contain).
  Within a tier, catalogue order; ``docs/messages.md`` lists them as tried.

A **phrase** is a few words inside a message of any kind (``Socket closed``,
``Connection refused``): its tags say what those words mean wherever they
appear (a lost peer, an echo of another worker's failure, a gRPC failure's
reason and errno, a clue to a class, what the scanner must not miss).

Adding a message a new release prints is one ``Message`` here;
``scripts/messages.py`` regenerates the docs page and prints coverage.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache, cached_property

from ..tasks import TASK, task_id, tasks_in

TIERS = ("relay", "specific", "general")


@dataclass(frozen=True)
class Origin:
    """Where a message is printed: the program, the file and function in its
    source, and the versions that print it."""

    emitter: str  # TensorFlow, tf_keras, Horovod, Open MPI, NCCL, gRPC, Kubernetes, Slurm, Linux ...
    file: str = ""  # in the emitter's repository
    function: str = ""
    eras: str = ""  # "TF 2.4-2.21", "all"
    repository: str = ""  # owner/name on GitHub, when it is public

    def __str__(self) -> str:
        where = ":".join(p for p in (self.file, self.function) if p)
        return ", ".join(p for p in (self.emitter, where, self.eras) if p)


def _tf(file: str, function: str = "", eras: str = "") -> Origin:
    return Origin("TensorFlow", file, function, eras, "tensorflow/tensorflow")


def _keras(file: str, function: str = "", eras: str = "") -> Origin:
    return Origin("tf_keras", file, function, eras, "keras-team/tf-keras")


SCRIPT = Origin("the training script", eras="any")


@dataclass(frozen=True)
class Message:
    kind: str
    regex: str
    means: str
    origin: Origin
    sig: str = ""  # the scanner's signature; derived from ``regex`` when empty
    tags: tuple[str, ...] = ()
    flags: int = 0
    # Extra fields computed from the whole record text.
    extra: Callable[[str], dict[str, str]] | None = None
    # A whole line on its own (a print): never the continuation of the record before it.
    standalone: bool = False
    # Printed over and over in a long run (every epoch): the scanner keeps the
    # first and the last of these, not all of them.
    frequent: bool = False
    # The severity a record of this kind has when its line carries none (a
    # shell's bare ``Killed``): what it means, not how it was printed.
    severity: str | None = None
    tier: str = "specific"
    # Why it is harmless although printed at warning or error level (then
    # matched on a record's first line before any other message).
    benign: str | None = None
    seen: tuple[str, ...] = ()  # public threads or sources where it was seen, when no recording holds it

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.regex, self.flags)

    @cached_property
    def signature(self) -> str:
        if self.sig:
            return self.sig
        from .portable import signature

        return signature(self.regex, self.flags)


@dataclass(frozen=True)
class Phrase:
    name: str
    regex: str  # matched case-insensitively, anywhere in a text
    tags: tuple[str, ...]
    origin: Origin
    grpc_reason: str | None = None  # the rpc table's reason for a failure whose message holds it
    errno: int | None = None  # the OS error it names (Linux numbering)
    sig: str = ""  # the scanner's signature (tag ``scan:<group>``): case as printed

    @cached_property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(self.regex, re.I)


# --- what a record's fields are, beyond its named groups ------------------------------


def _task(text: str) -> dict[str, str]:
    return {"task": task_id(text)}


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


_TODO = Origin("unknown")

# --- the messages ----------------------------------------------------------------------

MESSAGES: tuple[Message, ...] = (
    Message(
        "tf.server_started",
        r"Started server with target: grpc://(?P<host>[^\s:]+|\[[^\]]+\]):(?P<port>\d+)",
        sig=r"Started server with target: grpc://",
        means="A task started its gRPC server and listens at this address: it reached TensorFlow's distributed runtime.",
        origin=_TODO,
    ),
    Message(
        "coord.service_started",
        r"Initializing CoordinationService",
        sig=r"Initializing CoordinationService",
        means="This task runs the coordination service: it is the cluster's leader (the first task of the cluster).",
        origin=_TODO,
    ),
    Message(
        "coord.task_connected",
        (
            r"(?P<task_name>/job:\w+/replica:\d+/task:\d+) has connected to coordination service\. Incarnation: (?P<incarnation>\d+)"
        ),
        sig=r"has connected to coordination service",
        means="The leader saw a task register with the coordination service.",
        origin=_TODO,
        extra=_task,
    ),
    Message(
        "coord.waiting_for_tasks",
        r"Waiting for (?P<waiting>\d+)/(?P<total>\d+) tasks to connect",
        sig=r"Waiting for [0-9]+/[0-9]+ tasks to connect",
        means="The leader is still waiting for tasks to register; 'Example stragglers' names those it waits for. TF 2.21 has no registration timeout: alone it is no failure.",
        origin=_TODO,
        extra=_stragglers,
    ),
    Message(
        "coord.agent_connected",
        r"Coordination agent has successfully connected",
        sig=r"Coordination agent has successfully connected",
        means="This task registered with the coordination service: it joined the cluster.",
        origin=_TODO,
    ),
    Message(
        "coord.barrier_timeout",
        r"Barrier timed out\. Barrier_id: (?P<barrier>\S+)",
        sig=r"Barrier timed out",
        means="Older TF 2.x: the startup barrier that waits for every task (context_distributed_manager.cc).",
        origin=_TODO,
    ),
    Message(
        "cluster.startup_wait",
        (
            r"(?P<wait>waiting for \d+ reservations|timed out waiting for reservations"
            r"|Master init: \w+|RegisterTask|Failed to (?:connect to"
            r"|register with) (?:the )?coordination service|Waiting for (?:all )?(?:workers"
            r"|the cluster|TFSparkNodes) to (?:start|be ready|join))"
        ),
        sig=(
            r"waiting for [0-9]+ reservations|timed out waiting for reservations|Master init: "
            r"|RegisterTask|to (connect to|register with) (the )?coordination service"
            r"|Waiting for (all )?(workers|the cluster|TFSparkNodes) to"
        ),
        means="Cluster start-up that never completes, in other launchers' and TF1's words: TensorFlowOnSpark's reservations, a TF1 master that cannot reach its workers, a task that cannot register with the coordination service.",
        origin=_TODO,
        tags=("in_traceback",),
    ),
    Message(
        "tf1.session_retry",
        r"An error was raised while a session was being created",
        sig=r"An error was raised while a session was being created",
        means="TF1 MonitoredSession retrying a session it cannot create (INFO level, in a loop).",
        origin=_TODO,
        severity="error",
    ),
    Message(
        "mwms.waiting_for_cluster",
        r"Waiting for the cluster, timeout = (?P<timeout>\S+)",
        sig=r"Waiting for the cluster, timeout",
        means="TF 2.4-2.6 MWMS: each worker waits until every worker's server answers.",
        origin=_TODO,
    ),
    Message(
        "mwms.cluster_ready",
        r"Cluster is ready\.",
        sig=r"Cluster is ready",
        means="TF 2.4-2.6 MWMS: every worker's server answered; the cluster is up.",
        origin=_TODO,
    ),
    Message(
        "coord.task_restarted",
        (
            r"^(?P<task_name>/job:\w+/replica:\d+/task:\d+) unexpectedly tried to connect with a different incarnation"
        ),
        sig=r"tried to connect with a different incarnation",
        means="The coordination leader when a task registers again after a restart (TF 2.21, recorded).",
        origin=_TODO,
        extra=_task,
    ),
    Message(
        "coord.barrier_passed",
        r"Barrier\((?P<barrier>[^)]*)\) has passed with status: (?P<status>\w+)",
        sig=r"Barrier\(.*\) has passed with status",
        means="A coordination barrier passed (every task reached it).",
        origin=_TODO,
    ),
    Message(
        "mwms.cluster_spec",
        (
            r"MultiWorkerMirroredStrategy with cluster_spec = (?P<cluster_spec>\{.*?\}), task_type = '(?P<task_type>\w+)', task_id = (?P<task_index>\d+), num_workers = (?P<num_workers>\d+)"
        ),
        sig=r"MultiWorkerMirroredStrategy with cluster_spec",
        means="MultiWorkerMirroredStrategy starts with this cluster, task type and index: the task's own view of the cluster.",
        origin=_TODO,
    ),
    Message(
        "mwms.collective_devices",
        r"Enabled multi-worker collective ops with available devices: \[(?P<devices>[^\]]*)\]",
        sig=r"Enabled multi-worker collective ops",
        means="MWMS enabled collective ops over these devices (the task's devices are named with its task).",
        origin=_TODO,
    ),
    Message(
        "mwms.local_devices",
        r"Using MirroredStrategy with devices \((?P<devices>[^)]*)\)",
        sig=r"Using MirroredStrategy with devices",
        means="The devices a MirroredStrategy (or MWMS) runs on locally.",
        origin=_TODO,
    ),
    Message(
        "tf_config.dump",
        r"TF_CONFIG(?:\W{1,4}|\s+(?:environment variable|is|was|set to)\W{0,3})(?P<tf_config>\{.*\})",
        sig=r"TF_CONFIG",
        means='A TF_CONFIG printed by a script or an estimator, as JSON or as a Python dict ("TF_CONFIG: {...}", "TF_CONFIG environment variable: {\'cluster\': ...}", "TF_CONFIG is {...}").',
        origin=_TODO,
    ),
    Message(
        "script.whoami",
        (
            r"\b(?P<role>[Ww]orker|[Rr]ank|[Tt]ask|[Cc]hief)[ _:=#]*(?:[Ii]ndex"
            r"|[Ii][Dd])?[ :=#]*(?P<index>\d+)\s*(?:of|/)\s*(?P<total>\d+)\b|\btask_(?:index"
            r"|id)\s*[:=]\s*(?P<index2>\d+)"
        ),
        sig=(
            r"([Ww]orker|[Rr]ank|[Tt]ask|[Cc]hief)[ _:=#]*([Ii]ndex|[Ii][Dd])?[ :=#]*[0-9]+ *(of"
            r"|/) *[0-9]+|task_(index|id) *[:=]"
        ),
        means='What a script says of itself: "worker 1 of 3", "rank 2/4", "task_index=1".',
        origin=_TODO,
        tier="general",
    ),
    Message(
        "env.tf_version",
        (
            r"^(?:TensorFlow(?: version)?[:=]?\s+v?|tensorflow(?:-cpu"
            r"|-gpu)?==)(?P<version>\d+\.\d+\.\d+\S*)\s*$"
        ),
        sig=(
            r"[Tt][Ee][Nn][Ss][Oo][Rr][Ff][Ll][Oo][Ww]( [Vv]ersion)?[:=]? *[Vv]?[0-9]+[.][0-9]+[.][0-9]"
            r"|[Tt][Ee][Nn][Ss][Oo][Rr][Ff][Ll][Oo][Ww](-cpu|-gpu)?=="
        ),
        means='What training scripts commonly print (`print("TensorFlow version:", tf.__version__)`) and `pip freeze` lines; TF itself prints no version banner.',
        origin=_TODO,
        flags=re.I,
        standalone=True,
    ),
    Message(
        "keras.epoch",
        r"^Epoch (?P<epoch>\d+)/(?P<epochs>\d+)\s*$",
        sig=r"Epoch [0-9]+/[0-9]+",
        means="Keras starts an epoch (fit with verbose 1 or 2).",
        origin=_TODO,
        tags=("progress",),
        standalone=True,
        frequent=True,
    ),
    Message(
        "keras.epoch_end",
        (
            r"^(?P<step>\d+)/(?P<steps>\d+) (?:\[=+\] )?- [\d.]+m?s (?:[\d.]+m?s/step )?- (?P<metrics>loss: .*)$"
        ),
        sig=r"[0-9]+/[0-9]+ (\[=+\] )?- [0-9.]+m?s (- |[0-9.]+m?s/step - )",
        means='verbose=2: "8/8 - 2s - loss: 0.72 - ..."; verbose=1: "8/8 [=====] - 1s 9ms/step - loss: ..."',
        origin=_TODO,
        tags=("progress",),
        standalone=True,
        frequent=True,
    ),
    Message(
        "oom.tensor_allocation",
        (
            r"OOM when allocating tensor(?: with shape ?\[(?P<shape>[^\]]*)\])?(?: and type (?P<dtype>\w+))?(?: on (?P<device>\S+))?(?: by allocator (?P<allocator>\w+))?"
        ),
        sig=r"OOM when allocating tensor",
        means="An op could not get memory for its output tensor: the failed allocation, with shape, type and device.",
        origin=_TODO,
        tags=("in_traceback",),
    ),
    Message(
        "oom.allocator_exhausted",
        (
            r"Allocator \((?P<allocator>[^)]+)\) ran out of memory trying to allocate (?P<requested>[\d.]+\s?\w+)(?: \(rounded to (?P<requested_bytes>\d+)\))?(?!.*freed_by_count)"
        ),
        sig=r"ran out of memory trying to allocate",
        means="TensorFlow's allocator could not grant a request: it is out of memory (its limit and what is in use follow).",
        origin=_TODO,
        tags=("in_traceback",),
        extra=_oom_alloc,
    ),
    Message(
        "oom.allocator_retry",
        r"ran out of memory trying to allocate .*freed_by_count",
        sig=r"ran out of memory trying to allocate",
        means="The allocator ran short but will retry after freeing memory: a hint of pressure, not a failure.",
        origin=_TODO,
        tags=("in_traceback",),
    ),
    Message(
        "oom.cuda_alloc_failed",
        (
            r"failed to allocate (?P<requested>[\d.]+\s?\w+) \((?P<requested_bytes>\d+) bytes\) from device: CUDA_ERROR_OUT_OF_MEMORY"
            r"|Dst tensor is not initialized"
        ),
        sig=r"CUDA_ERROR_OUT_OF_MEMORY|Dst tensor is not initialized",
        means='The CUDA driver refusing memory (cuda_driver.cc). TF prints it while it backs off to smaller reservations too, so alone it is not a failure; "Dst tensor is not initialized" is how a failed copy to a full GPU surfaces.',
        origin=_TODO,
        tags=("in_traceback",),
    ),
    Message(
        "oom.bfc_dump",
        (
            r"Sum Total of in-use chunks: (?P<in_use>\S+)|Chunks of size \d+ totalling"
            r"|Bin \(\d+\): Total Chunks|BFCAllocator dump"
        ),
        sig=(
            r"Sum Total of in-use chunks|Chunks of size [0-9]+ totalling"
            r"|Bin [(][0-9]+[)]: Total Chunks|BFCAllocator dump"
        ),
        means="A BFC allocator dump (TF prints it when an allocation fails), seen in part.",
        origin=_TODO,
        tags=("in_traceback",),
        tier="general",
    ),
    Message(
        "oom.xla",
        (
            r"Ran out of memory in memory space (?P<space>\w+)"
            r"|Out of memory while trying to allocate (?P<requested>[\d.]+\s?\w+)"
            r"|RESOURCE_EXHAUSTED: Out of memory|[Rr]esource exhausted: Out of memory"
        ),
        sig=(
            r"Ran out of memory in memory space|Out of memory while trying to allocate"
            r"|RESOURCE_EXHAUSTED: Out of memory|[Rr]esource exhausted: Out of memory"
        ),
        means="XLA and TPU compilers running out of device memory.",
        origin=_TODO,
        tags=("in_traceback",),
    ),
    Message(
        "oom.cudnn_alloc",
        (
            r"(?P<status>CUDNN_STATUS_ALLOC_FAILED|CUBLAS_STATUS_ALLOC_FAILED)"
            r"|Failed to get convolution algorithm|cuDNN failed to initialize"
            r"|Could not create cudnn handle"
        ),
        sig=(
            r"CUDNN_STATUS_ALLOC_FAILED|CUBLAS_STATUS_ALLOC_FAILED|Failed to get convolution algorithm"
            r"|cuDNN failed to initialize|Could not create cudnn handle"
        ),
        means="cuDNN/cuBLAS cannot get their workspace: usually because TF already took the GPU's memory (the fix is memory growth or a smaller batch).",
        origin=_TODO,
        tags=("in_traceback",),
    ),
    Message(
        "collective.aborted",
        r"Collective ops is aborted by: (?P<reason>[^\n]*)",
        sig=r"Collective ops is aborted by",
        means="A collective was aborted: the reason says by whom (a peer's error, relayed) or why (members that disagree).",
        origin=_TODO,
        tags=("peer_report", "in_traceback"),
        extra=_remote_errors,
        tier="relay",
    ),
    Message(
        "collective.shape_mismatch",
        (
            r"Shape mismatch in the collective instance (?P<instance>\d+)(?:\. Op at device (?P<device>\S+) expected shape \[(?P<shape>[^\]]*)\] but another member in the group expected shape \[(?P<other_shape>[^\]]*)\])?"
            r"|Inconsistent output shapes, got \[(?P<got_shape>[^\]]*)\], but expected is \[(?P<expected_shape>[^\]]*)\]"
        ),
        sig=r"Shape mismatch in the collective instance|Inconsistent output shapes",
        means="Collective members that disagree (collective_param_resolver_local.cc, TF 2.x).",
        origin=_TODO,
        tags=("abort_reason", "in_traceback"),
        extra=_task,
    ),
    Message(
        "collective.group_mismatch",
        (
            r"has group_size (?P<size>\d+) and group_key ?\d+ but that group has size (?P<group_size>\d+)"
            r"|is joining a group with size ?(?P<joining>\d+), but that group has size (?P<existing>\d+)"
            r"|is assigned to device \S+ with type \w+ and group_key \d+ but th"
        ),
        sig=r"but that group has size|and group_key ?[0-9]+ but th",
        means="Members that disagree on the group itself: its size, or the device type a key was registered with.",
        origin=_TODO,
        tags=("abort_reason", "in_traceback"),
    ),
    Message(
        "collective.rank_mismatch",
        (
            r"Mismatched (?:ALLREDUCE|ALLGATHER|BROADCAST|allreduce|allgather|broadcast)[^\n]*"
            r"|different ranks are trying to submit different tensors"
            r"|only subset of ranks is submitting tensors"
        ),
        sig=(
            r"Mismatched (ALLREDUCE|ALLGATHER|BROADCAST|allreduce|allgather|broadcast)"
            r"|different ranks are trying to submit|only subset of ranks"
        ),
        means="Horovod's coordinator: ranks that submitted different tensors, or one rank never did.",
        origin=_TODO,
        tags=("in_traceback",),
    ),
    Message(
        "collective.type_mismatch",
        (
            r"Collective instance (?P<instance>\d+) expected type (?P<expected_type>\d+) and data_type (?P<expected_dtype>\d+) but got type (?P<type>\d+) and data_type (?P<dtype>\d+)"
        ),
        sig=r"Collective instance [0-9]+ expected type",
        means="Members of one collective brought tensors of different data types.",
        origin=_TODO,
        tags=("abort_reason", "in_traceback"),
    ),
    Message(
        "mwms.peer_down",
        (
            r"(?P<task_name>/job:\w+/replica:\d+/task:\d+) seems down, retrying"
            r"|[Cc]luster check alive failed, (?P<down>/job:\w+/replica:\d+/task:\d+) is down"
        ),
        sig=r"seems down, retrying|[Cc]luster check alive failed",
        means="TF 2.4-2.6 MWMS health checks (collective_all_reduce_strategy.py): a peer is gone.",
        origin=_TODO,
        tags=("peer_report",),
        extra=_task,
    ),
    Message(
        "nccl.error",
        (
            r"NCCL WARN (?P<nccl_message>.*)|NCCL: (?P<nccl_status>unhandled system error"
            r"|unhandled cuda error|internal error|invalid usage|invalid argument"
            r"|remote process exited[^.]*)|(?P<nccl_code>nccl[A-Z]\w*Error)|NCCL (?:error|failure)[: ]"
            r"|(?:Internal|INTERNAL|InternalError|Unknown|UNKNOWN):\s+unhandled (?:system|cuda) error"
            r"|(?P<nccl_call>ncclCommInitRank failed|Error invoking NCCL)[^\n]*"
        ),
        sig=(
            r"NCCL WARN|NCCL: |NCCL error|NCCL failure|nccl[A-Z][A-Za-z]*Error|unhandled system error"
            r"|unhandled cuda error|ncclCommInitRank failed|Error invoking NCCL"
        ),
        means="NCCL's own warnings and the errors TF wraps them in (nccl_manager.cc, nccl_communicator.cc).",
        origin=_TODO,
        tags=("in_traceback",),
        severity="error",
    ),
    Message(
        "tf.op_not_registered",
        (
            r"Op type not registered '(?P<op>[^']+)' in binary running on (?P<host>\S+)"
            r"|'(?P<function>[^']+)' is neither a type of a primitive operation nor a name of a function registered in binary running on (?P<function_host>\S+?)\.?(?:\s"
            r"|$)"
        ),
        sig=(
            r"Op type not registered"
            r"|is neither a type of a primitive operation nor a name of a function"
        ),
        means="TF1 and graph mode: \"Op type not registered 'X' in binary running on H\"; TF2 eager and remote functions: \"'X' is neither a type of a primitive operation nor a name of a function registered in binary running on H\" (TF's own text adds: the client and server binaries may not be built with the same version).",
        origin=_TODO,
        tags=("in_traceback",),
    ),
    Message(
        "grpc.protobuf_too_large",
        (
            r"(?P<message_type>[\w.]+) exceeded maximum protobuf size of 2GB: (?P<size>\d+)"
            r"|A protocol message was rejected because it was too big \(more than (?P<max>\d+) bytes\)"
            r"|[Mm]essage exceeds (?P<limit>\d+) bytes|(?:larger than"
            r"|exceeds?) (?:the )?2GB(?: limit)?|Cannot (?:create"
            r"|serialize) a tensor proto whose content is larger than 2GB"
            r"|Cannot serialize protocol buffer of type (?P<proto>[\w.]+) as the serialized size \((?P<serialized>\d+) ?bytes\) would be larger than the limit"
        ),
        sig=(
            r"Cannot serialize protocol buffer of type|exceeded maximum protobuf size"
            r"|protocol message was rejected because it was too big|[Mm]essage exceeds [0-9]+ bytes"
            r"|larger than 2GB|2GB limit"
        ),
        means="A message or tensor proto was larger than protobuf's 2 GB limit.",
        origin=_TODO,
        tags=("in_traceback",),
    ),
    Message(
        "tf.graph_incompatible",
        (
            r"NodeDef mentions attr '(?P<attr>[^']+)' not in Op"
            r"|NodeDef missing attr '(?P<missing>[^']+)'|GraphDef (?:min consumer|producer) version"
            r"|not built with the same version"
            r"|Loaded runtime Cu[Dd][Nn][Nn] library: (?P<runtime>\S+) but source was compiled with: (?P<built>\S+)"
        ),
        sig=(
            r"NodeDef mentions attr|NodeDef missing attr|GraphDef (min consumer|producer)"
            r"|not built with the same version|Loaded runtime Cu[Dd][Nn][Nn] library"
        ),
        means="A graph or binary from another TensorFlow version (TF1 and TF2 texts).",
        origin=_TODO,
        tags=("in_traceback",),
        tier="general",
    ),
    Message(
        "checkpoint.write_failed",
        (
            r"(?:MergeV2Checkpoints.*?"
            r"|Failed to rename: )(?:(?P<path>\S+_temp(?:_[0-9a-f]+)?/part-\S+)|\S+_temp\S*)"
            r"|(?P<temp_path>\S+_temp(?:_[0-9a-f]+)?/part-\d+-of-\d+\S*)[;:] No such file or directory"
            r"|[Uu]nable to (?:lock|create|open"
            r"|truncate) file(?:[^\n]*name = '(?P<h5_path>[^']+)')?[^\n]*(?:errno = 11"
            r"|Resource temporarily unavailable|file locking|lock)|(?:NotFound|AlreadyExists|Unknown"
            r"|DataLoss|Not found|already exists)[^\n]{0,40}?(?P<io_path>\S*(?:_temp_[0-9a-f]{6,}"
            r"|variables_temp|\.ckpt|tempstate|checkpoint)\S*)"
            r"|Unsuccessful TensorSliceReader constructor|AlreadyExistsError: file already exists"
            r"|MergeV2Checkpoints[^\n]*(?:Not found|No such file)"
        ),
        sig=(
            r"MergeV2Checkpoints|_temp/part-|_temp_[0-9a-f]+|Failed to rename: |[Uu]nable to (lock"
            r"|create|open|truncate) file|variables_temp|[.]ckpt|tempstate|TensorSliceReader"
            r"|AlreadyExistsError"
        ),
        means="A checkpoint whose files another writer moved or removed (MergeV2Checkpoints merges each writer's ``<prefix>_temp/part-*`` files into the checkpoint).",
        origin=_TODO,
        tags=("in_traceback",),
        flags=re.S,
    ),
    Message(
        "coord.unhealthy_tasks",
        r"The following tasks are unhealthy",
        sig=r"tasks are unhealthy",
        means="The coordination service stopped hearing heartbeats from these tasks: they are gone.",
        origin=_TODO,
        tags=("peer_report",),
        extra=_unhealthy,
    ),
    Message(
        "net.connect_failed",
        (
            r"connect\(\) to (?P<address>\S+) failed: (?P<why>No route to host|Connection refused"
            r"|Connection timed out)|unable to complete a TCP connection|usually caused by a firewall"
            r"|could not (?:establish|open) a TCP connection"
        ),
        sig=(
            r"connect[(][)] to [^ ]+ failed|unable to complete a TCP connection"
            r"|usually caused by a firewall|could not (establish|open) a TCP connection"
        ),
        means="A connection to another node that failed outside gRPC: Open MPI's TCP transport and daemons, launchers (their own words name the firewall).",
        origin=_TODO,
        severity="error",
    ),
    Message(
        "peer.lost",
        (
            r"(?P<how>Aborting Ring\w+ with (?:Unavailable|UNAVAILABLE)\b|StartAbort (?:Unavailable"
            r"|UNAVAILABLE)\b|peer process has unexpectedly disconnected"
            r"|mpirun noticed that process rank \d+|has been detected as unhealthy|heartbeat timeout"
            r"|Primary job +terminated normally, but \d+ process(?:es)? returned"
            r"|mpirun detected that one or more processes exited with non-zero status"
            r"|incarnation doesn.t match|lame workers|Connection closed by peer"
            r"|Connection reset by peer|Socket closed|\"description\":\"EOF\""
            r"|Error reported to Coordinator: <class '[\w.]*UnavailableError'>)"
        ),
        sig=(
            r"Aborting Ring[A-Za-z]+ with|StartAbort|peer process has unexpectedly disconnected"
            r"|mpirun noticed that process rank|Primary job +terminated normally, but"
            r"|one or more processes exited with non-zero status|has been detected as unhealthy"
            r"|heartbeat timeout|incarnation doesn.t match|lame workers|Connection closed by peer"
            r"|Connection reset by peer|Socket closed|description.:.EOF|Error reported to Coordinator"
        ),
        means="A peer lost, as every TF era and launcher words it (TF1/2.0 ring reducers, the coordination service, MPI and Horovod, gRPC's connection errors); which peer, when the text says, is in ``task``. More specific records (collective.aborted, coord.unhealthy_tasks) are matched before this one.",
        origin=_TODO,
        tags=("peer_report",),
        extra=_task,
        severity="error",
        tier="general",
    ),
    Message(
        "tf.sigterm_caught",
        r"SIGTERM caught|Received SIGTERM",
        sig=r"SIGTERM caught|Received SIGTERM",
        means="The process received SIGTERM (TF's preemption notifier logs it): someone asked it to stop.",
        origin=_TODO,
    ),
    Message(
        "train.loop_ended",
        r"Loss for final step: (?P<loss>[-+\w.]*\w)",
        sig=r"Loss for final step",
        means="An Estimator's train() returned on this worker (its input ended, or it reached max_steps): its training loop is over, whatever the others do.",
        origin=_TODO,
    ),
    Message(
        "tf.server_start_failed",
        (
            r"Could not start gRPC server"
            r"|Failed to add port to server(?:: .*? for '(?P<address>[^']+)')?"
            r"|bind addr=(?P<bind>\S+): Address already in use"
            r"|No address added out of total \d+ resolved|Address already in use"
            r"|UNKNOWN: Could not start gRPC server"
        ),
        sig=(
            r"Could not start gRPC server|Failed to add port to server|Address already in use"
            r"|No address added out of total"
        ),
        means="The task could not start its gRPC server (its port is taken or cannot be bound).",
        origin=_TODO,
        tags=("in_traceback",),
        severity="error",
    ),
    Message(
        "host.bad_alloc",
        r"std::bad_alloc",
        sig=r"std::bad_alloc",
        means="libstdc++'s last words when C++ code cannot get memory (\"terminate called after throwing an instance of 'std::bad_alloc'  what():  std::bad_alloc\").",
        origin=_TODO,
        tags=("in_traceback",),
    ),
    Message(
        "keras.input_exhausted",
        r"Your (?:input|dataset iterator|dataset|generator) ran out of data; interrupting training",
        sig=r"Your (input|dataset iterator|dataset|generator) ran out of data",
        means="tf_keras's data_adapter warning when a dataset ends before steps_per_epoch * epochs.",
        origin=_TODO,
        standalone=True,
    ),
    Message(
        "tf.end_of_sequence",
        r"\bEnd of sequence\b",
        sig=r"End of sequence",
        means="An input iterator reached its end (OUT_OF_RANGE).",
        origin=_TODO,
        tags=("in_traceback",),
    ),
    Message(
        "numerics.check_failed",
        r"(?P<message>[^\n:]*?) : Tensor had (?P<values>NaN and Inf|NaN|Inf) values",
        sig=r"Tensor had (NaN|Inf|NaN and Inf) values",
        means="tf.debugging.check_numerics / enable_check_numerics (array_ops, check_numerics_op.cc).",
        origin=_TODO,
        tags=("in_traceback",),
    ),
    Message(
        "keras.invalid_loss",
        r"Batch (?P<batch>\d+): Invalid loss, terminating training",
        sig=r"Invalid loss, terminating training",
        means="tf_keras.callbacks.TerminateOnNaN.",
        origin=_TODO,
        standalone=True,
    ),
    Message(
        "grpc.message_too_large",
        r"(?P<direction>Received|Sent) message larger than max \((?P<size>\d+) vs\. (?P<max>\d+)\)",
        sig=r"(Received|Sent) message larger than max",
        means="gRPC refused a message larger than its limit.",
        origin=_TODO,
        tags=("in_traceback",),
    ),
    Message(
        "tf1.create_session_waiting",
        (
            r"CreateSession still waiting for response from worker: (?P<task_name>/job:\w+/replica:\d+/task:\d+)"
        ),
        sig=r"CreateSession still waiting for response from worker",
        means="TF1 distributed sessions (master_session.cc).",
        origin=_TODO,
        extra=_task,
    ),
    Message(
        "launcher.exited",
        r"^(?P<service>[\w.-]+) exited with code (?P<code>\d+)\s*$",
        sig=r"exited with code [0-9]+",
        means="docker-compose's own line when a service's container ends.",
        origin=_TODO,
        standalone=True,
    ),
    Message(
        "kernel.oom_kill",
        (
            r"Out of memory: Kill(?:ed)? process (?P<pid>\d+)|invoked oom-killer|oom-kill:"
            r"|Memory cgroup out of memory|oom_reaper: reaped process (?P<reaped>\d+)"
        ),
        sig=r"Out of memory: Kill|invoked oom-killer|oom-kill:|Memory cgroup out of memory|oom_reaper",
        means="The kernel's OOM killer (dmesg, journalctl -k), pasted into a log or a ticket.",
        origin=_TODO,
        severity="error",
    ),
    Message(
        "k8s.evicted",
        r"\bEvicted\b|[Tt]he node was low on resource: (?P<resource>\w+)",
        sig=r"Evicted|low on resource",
        means="Kubernetes evicting a pod (kubectl get pods / describe / events).",
        origin=_TODO,
        severity="error",
    ),
    Message(
        "k8s.oom_killed",
        r"\bOOMKilled\b",
        sig=r"OOMKilled",
        means="Kubernetes' reason for a container the kernel killed for its memory limit.",
        origin=_TODO,
        severity="error",
    ),
    Message(
        "shell.killed",
        r"^(?:[^\n]*: line \d+: +\d+ )?Killed(?:\s+\S[^\n]*)?\s*$",
        sig=r"Killed",
        means='A shell\'s word for a child killed by SIGKILL ("Killed", "line 1: 1234 Killed  python ...").',
        origin=_TODO,
        standalone=True,
        severity="error",
    ),
    Message(
        "proc.script_missing",
        r"can't open file '(?P<script>[^']+)': \[Errno 2\] No such file or directory",
        sig=r"can't open file '",
        means="The worker's script could not even start (a file missing from the image).",
        origin=_TODO,
        severity="error",
    ),
    Message(
        "proc.crashed",
        (
            r"(?P<crash>Segmentation fault|Fatal Python error: \w+|\*\*\* SIG[A-Z]+"
            r"|Aborted \(core dumped\)|\*\*\* Error in `[^`]+': [^*]+|double free or corruption"
            r"|stack smashing detected|core dumped|[Ss]ignal: (?:killed|terminated|aborted"
            r"|segmentation fault)|(?:[Kk]illed|[Tt]erminated) by signal (?:SIG)?\w+)"
        ),
        sig=(
            r"Segmentation fault|Fatal Python error|[*][*][*] SIG[A-Z]|[*][*][*] Error in"
            r"|double free or corruption|stack smashing detected|core dumped|[Ss]ignal: (killed"
            r"|terminated|aborted|segmentation)|[Kk]illed by signal|[Tt]erminated by signal"
        ),
        means="Native crashes: the process ends without a Python traceback.",
        origin=_TODO,
        severity="error",
        tier="general",
    ),
    Message(
        "proc.exit_code",
        (
            r"(?i)\b(?:exit(?:ed)?(?: with)?(?: exit)? (?:code|status)|exit_?code"
            r"|returned non-zero exit status|terminated with exit code)\b[\s:=]*(?P<code>-?[1-9]\d*)\b"
        ),
        sig=(
            r"[Ee][Xx][Ii][Tt](_|[Ee][Dd])?( [Ww][Ii][Tt][Hh])?( [Ee][Xx][Ii][Tt])? ?([Cc][Oo][Dd][Ee]"
            r"|[Ss][Tt][Aa][Tt][Uu][Ss])|non-zero exit status"
        ),
        means="An exit status a launcher, scheduler or shell printed (not 0: that one is below).",
        origin=_TODO,
        severity="error",
        tier="general",
    ),
    Message(
        "train.step",
        (
            r"(?i)\b(?:global_)?step\b[\s:=#\[]*\d+(?!\.\d)(?:\s*/\s*\d+)?[^\n]{0,80}?\b(?:loss|took"
            r"|time|sec|s/step|ms|examples)\b"
            r"|\bloss\b\s*[=:]\s*[-+\w.]+,?\s*(?:global_)?step\s*[=:]\s*\d+"
        ),
        sig=(
            r"[Ss][Tt][Ee][Pp]( |:|=|#|\[)*[0-9]"
            r"|[Ll][Oo][Ss][Ss] *[=:] *[^ ,]*,? *([Gg][Ll][Oo][Bb][Aa][Ll]_)?[Ss][Tt][Ee][Pp] *[=:]"
        ),
        means='Custom loops and TF1 estimators: "epoch 3/10 step 120 loss=0.41", "[step 120] loss 0.41", "Step 120: loss = 0.41 (0.2 s)", "INFO:tensorflow:loss = 3.72, step = 10300 (50.581 sec)".',
        origin=_TODO,
        tags=("progress",),
        extra=_progress,
        frequent=True,
        tier="general",
    ),
    Message(
        "train.epoch",
        r"(?i)\bepoch\b\s*[:#]?\s*(?P<epoch>\d+)\s*/\s*(?P<epochs>\d+)\b(?![^\n]*\bstep)",
        sig=r"[Ee][Pp][Oo][Cc][Hh][ :#]*[0-9]+ */ *[0-9]+",
        means='A script\'s epoch line without a step: "epoch 3/3 done: mean loss 0.46", "Epoch 2/10 - loss ...".',
        origin=_TODO,
        tags=("progress",),
        frequent=True,
        tier="general",
    ),
    Message(
        "train.loss_not_finite",
        r"(?i)\bloss\b\s*(?:is|became|was|=|:)\s*(?P<value>nan|inf)\b|\bNaN loss\b|non-finite loss",
        sig=(
            r"[Ll][Oo][Ss][Ss] *(is|became|was|=|:) *([Nn][Aa][Nn]|[Ii][Nn][Ff])|NaN loss"
            r"|non-finite loss"
        ),
        means='A loss reported as not finite in any words ("loss is NaN.", Keras bars with unknown totals).',
        origin=_TODO,
        severity="error",
        tier="general",
    ),
    Message(
        "oom.resource_exhausted",
        r"\bResourceExhaustedError\b",
        sig=r"ResourceExhaustedError",
        means="TF's exception for an allocation that failed, when its message (which the specific templates above read) was cut off, as in a notebook's traceback.",
        origin=_TODO,
        tags=("in_traceback",),
        tier="general",
    ),
    Message(
        "oom.generic",
        r"(?i)\b(?:ran )?out[- ]of[- ]memory\b",
        sig=r"[Oo]ut[- ]of[- ][Mm]emory",
        means='Memory run out, in words no specific template knows ("Internal: out of memory", "The replica master 0 ran out-of-memory").',
        origin=_TODO,
        tags=("in_traceback",),
        severity="error",
        tier="general",
    ),
    Message(
        "benign.plugin_factory",
        r"Unable to register (?:cuDNN|cuFFT|cuBLAS) factory: Attempting to register factory for plugin",
        sig=r"Unable to register cu(DNN|FFT|BLAS) factory",
        means="TF 2.14+ registers the CUDA plugins twice when both TF and XLA load them; E-level, harmless",
        origin=_TODO,
        benign="TF 2.14+ registers the CUDA plugins twice when both TF and XLA load them; E-level, harmless",
        seen=("tensorflow/tensorflow#62075 (maintainers: a known, harmless log message)",),
    ),
    Message(
        "benign.end_of_sequence_rendezvous",
        (
            r"Local rendezvous is aborting with status: OUT_OF_RANGE: End of sequence"
            r"|\[_Derived_\]\s*OUT_OF_RANGE: End of sequence"
        ),
        sig=r"Local rendezvous is aborting with status: OUT_OF_RANGE|OUT_OF_RANGE: End of sequence",
        means="TF 2.10+ logs the end of a finite dataset at every epoch end while training goes on",
        origin=_TODO,
        benign="TF 2.10+ logs the end of a finite dataset at every epoch end while training goes on",
        seen=("tensorflow/tensorflow#62963 (the W/I-level line at epoch ends; training continues)",),
    ),
    Message(
        "benign.cpu_instructions",
        (
            r"This TensorFlow binary is optimized to use available CPU instructions"
            r"|Your CPU supports instructions that this TensorFlow binary was not compiled to use"
            r"|oneDNN custom operations are on"
        ),
        sig=(
            r"binary is optimized to use available CPU|Your CPU supports instructions"
            r"|oneDNN custom operations"
        ),
        means="build notices printed at every start",
        origin=_TODO,
        benign="build notices printed at every start",
        seen=("TensorFlow source code (cpu_feature_guard.cc, util.cc)",),
    ),
    Message(
        "benign.tensorrt_missing",
        r"TF-TRT Warning: Could not find TensorRT",
        sig=r"TF-TRT Warning: Could not find TensorRT",
        means="TensorRT is optional; TF warns when it is absent",
        origin=_TODO,
        benign="TensorRT is optional; TF warns when it is absent",
        seen=("tensorflow/tensorflow#61468",),
    ),
    Message(
        "benign.cuda_library_missing",
        (
            r"Could not load dynamic library '(?:libcudart|libcublas|libcudnn|libcufft|libcurand"
            r"|libcusolver|libcusparse|libnvinfer|libnvinfer_plugin)[^']*'"
            r"|Cannot dlopen some GPU libraries"
            r"|Could not find cuda drivers on your machine, GPU will not be used"
        ),
        sig=(
            r"Could not load dynamic library|Cannot dlopen some GPU libraries"
            r"|Could not find cuda drivers"
        ),
        means="on a machine without a GPU (or where none is meant to be used) TF falls back to the CPU",
        origin=_TODO,
        benign="on a machine without a GPU (or where none is meant to be used) TF falls back to the CPU",
        seen=(
            "TF 2.x dso_loader.cc messages; harmless unless a GPU was expected (then the job runs slowly, not fails)",
        ),
    ),
    Message(
        "benign.cloud_logging_severity",
        (
            r'^\s*"?(?:severity|levelname|levelName|level|log_?level)"?\s*[:=]\s*"?\**(?:ERROR|WARNING'
            r'|WARN|CRITICAL|FATAL)\**"?,?\s*$'
        ),
        sig=(
            r'(severity|levelname|levelName|level|log_?level)"? *[:=] *"?[*]*(ERROR|WARNING|WARN'
            r"|CRITICAL|FATAL)"
        ),
        means="a log entry's level field alone: Cloud Logging and JSON loggers file whatever a process writes to stderr as ERROR (TF logs INFO there); the entry's message says what happened",
        origin=_TODO,
        benign="a log entry's level field alone: Cloud Logging and JSON loggers file whatever a process writes to stderr as ERROR (TF logs INFO there); the entry's message says what happened",
        seen=(
            "tensorflow/tensorflow#48010 (an ERROR entry every step whose payload is an INFO line; its severity and jsonPayload.levelname fields both say ERROR)",
        ),
    ),
    Message(
        "benign.cuinit",
        r"failed call to cuInit",
        sig=r"failed call to cuInit",
        means="cuInit fails on a machine without a GPU; TF then runs on the CPU",
        origin=_TODO,
        benign="cuInit fails on a machine without a GPU; TF then runs on the CPU",
        seen=("recorded on this project's CPU machines (TF 2.21)",),
    ),
)


# --- the phrases -----------------------------------------------------------------------
# In order: a gRPC failure's reason is the first phrase with one that its
# message holds.

_GRPC = Origin("gRPC", "src/core (status messages, OS errors it relays)", eras="all", repository="grpc/grpc")
_OS = Origin("the OS (strerror), relayed by gRPC or TensorFlow", eras="all")

PHRASES: tuple[Phrase, ...] = (
    Phrase(
        "message_too_large",
        r"(?:Received|Sent) message larger than max",
        ("grpc", "scan:grpc"),
        _GRPC,
        grpc_reason="message_too_large",
        sig="Received message larger than max",
    ),
    Phrase(
        "heartbeats_stopped",
        r"unhealthy \(stopped sending heartbeats\)|heartbeat timeout",
        ("grpc",),
        _tf("tensorflow/core/distributed_runtime/coordination/coordination_service.cc", eras="TF 2.7+"),
        grpc_reason="unhealthy_heartbeat",
    ),
    Phrase(
        "connection_refused",
        r"Connection refused|ECONNREFUSED",
        ("grpc", "echo", "clue:firewall_blocked", "scan:grpc"),
        _OS,
        grpc_reason="connection_refused",
        errno=111,
        sig="Connection refused",
    ),
    Phrase(
        "connection_reset",
        r"Connection reset by peer|ECONNRESET",
        ("grpc", "peer_lost"),
        _OS,
        grpc_reason="connection_reset",
        errno=104,
    ),
    Phrase("broken_pipe", r"Broken pipe|EPIPE\b", ("grpc",), _OS, grpc_reason="broken_pipe", errno=32),
    Phrase(
        "connection_timed_out",
        r"Connection timed out",
        ("grpc",),
        _OS,
        grpc_reason="connect_timeout",
        errno=110,
    ),
    # gRPC gives up a TCP connect it never heard back from (packets dropped)
    # as "tcp handshaker shutdown" (TF 2.21, recorded behind an iptables DROP).
    Phrase(
        "connect_timeout",
        r"connect(?:ion)? timed out|ETIMEDOUT|Timeout occurred: FD|tcp handshaker shutdown|handshake(?:r)? timed out",
        ("grpc",),
        _GRPC,
        grpc_reason="connect_timeout",
    ),
    Phrase(
        "no_route",
        r"No route to host|EHOSTUNREACH",
        ("grpc", "clue:firewall_blocked"),
        _OS,
        grpc_reason="no_route",
        errno=113,
    ),
    Phrase(
        "network_unreachable",
        r"Network is unreachable|ENETUNREACH",
        ("grpc",),
        _OS,
        grpc_reason="no_route",
        errno=101,
    ),
    Phrase(
        "name_resolution",
        r"DNS resolution failed|Name or service not known|Temporary failure in name resolution"
        r"|Could not resolve host|name resolution",
        ("grpc",),
        _GRPC,
        grpc_reason="name_resolution",
    ),
    Phrase(
        "socket_closed",
        r"Socket closed|Stream removed|Connection closed|Endpoint closing|GOAWAY",
        ("grpc", "peer_lost", "echo", "clue:peer_died", "scan:grpc"),
        _GRPC,
        grpc_reason="socket_closed",
        sig="Socket closed",
    ),
    Phrase(
        "deadline_exceeded",
        r"Deadline Exceeded|DEADLINE_EXCEEDED",
        ("grpc", "echo", "clue:firewall_blocked", "scan:grpc"),
        _GRPC,
        grpc_reason="deadline_exceeded",
        sig="DEADLINE_EXCEEDED|Deadline Exceeded",
    ),
    Phrase(
        "connect_failed",
        r"failed to connect to all addresses|Failed to pick subchannel|Connect failed",
        ("grpc", "scan:grpc"),
        _GRPC,
        grpc_reason="connect_failed",
        sig="failed to connect to all addresses",
    ),
    # Words of a lost peer, an echo of another worker's failure, or both.
    Phrase("unavailable", r"UNAVAILABLE", ("clue:peer_died", "scan:grpc"), _GRPC, sig="UNAVAILABLE"),
    Phrase(
        "connection_reset_words",
        r"Connection reset",
        ("echo", "clue:peer_died", "scan:grpc"),
        _OS,
        sig="Connection reset",
    ),
    Phrase(
        "heartbeat_words",
        r"unhealthy|heartbeat",
        ("peer_lost", "echo", "clue:peer_died"),
        _tf("tensorflow/core/distributed_runtime/coordination/coordination_service.cc", eras="TF 2.7+"),
    ),
    Phrase("eof", r"EOF\b", ("peer_lost", "clue:peer_died"), _GRPC),
    Phrase(
        "peer_disconnected",
        r"peer process has unexpectedly disconnected",
        ("peer_lost",),
        Origin("Open MPI", "opal/mca/btl/tcp", eras="all", repository="open-mpi/ompi"),
    ),
    Phrase(
        "incarnation",
        r"incarnation",
        ("peer_lost",),
        _tf("tensorflow/core/distributed_runtime/coordination/coordination_service.cc", eras="TF 2.7+"),
    ),
    Phrase(
        "collective_aborted_words",
        r"Collective ops is aborted",
        ("echo",),
        _tf(
            "tensorflow/core/common_runtime/base_collective_executor.cc", "BaseCollectiveExecutor::StartAbort"
        ),
    ),
    Phrase(
        "coordination_words",
        r"coordination service|PollForError|barrier",
        ("echo",),
        _tf("tensorflow/core/distributed_runtime/coordination/coordination_service_agent.cc", eras="TF 2.7+"),
    ),
    Phrase("failed_to_connect", r"failed to connect", ("echo", "clue:firewall_blocked"), _GRPC),
    Phrase(
        "recvbuf",
        r"RecvBuf",
        ("echo",),
        _tf("tensorflow/core/distributed_runtime/rpc/grpc_worker_service.cc", "RecvBufAsync"),
    ),
    # Clues: words that point at a class in errors no rule explained.
    Phrase(
        "timeout_words",
        r"timed out|OS Error|session was being created",
        ("clue:firewall_blocked",),
        _GRPC,
    ),
    Phrase(
        "memory_words",
        r"memory|OOM|RESOURCE_EXHAUSTED|alloc|Killed",
        ("clue:oom",),
        _tf("tensorflow/core/common_runtime/bfc_allocator.cc"),
    ),
    Phrase(
        "tf_config_words",
        r"TF_CONFIG|cluster spec|ClusterSpec|task_type|task index",
        ("clue:tf_config_mismatch",),
        _tf("tensorflow/python/distribute/cluster_resolver/tfconfig_cluster_resolver.py"),
    ),
    Phrase(
        "version_words",
        r"version|not registered|NodeDef|protobuf",
        ("clue:version_skew",),
        _tf("tensorflow/core/framework/op.cc"),
    ),
    Phrase(
        "data_end_words",
        r"End of sequence|OutOfRange|ran out of data",
        ("clue:data_exhaustion",),
        _tf("tensorflow/core/kernels/data/iterator_ops.cc"),
    ),
    Phrase(
        "checkpoint_words",
        r"checkpoint|\.ckpt|rename|SavedModel",
        ("clue:checkpoint_conflict",),
        _tf("tensorflow/core/util/tensor_bundle/tensor_bundle.cc"),
    ),
    Phrase("nccl_words", r"NCCL", ("clue:nccl_error",), Origin("NCCL", repository="NVIDIA/nccl")),
    Phrase("nan_words", r"\bnan\b|\binf\b", ("clue:nan_loss",), SCRIPT),
    Phrase("exception_words", r"Traceback|Error:", ("clue:worker_exception",), Origin("Python", eras="all")),
    # What the scanner looks for beyond the messages: words of failures no
    # message knows yet (their case as printed; ``sig`` is what is scanned for).
    Phrase(
        "grpc_status_words",
        r"grpc_status|grpc_message|RESOURCE_EXHAUSTED",
        ("scan:grpc",),
        _GRPC,
        sig="grpc_status|grpc_message|RESOURCE_EXHAUSTED",
    ),
    Phrase(
        "process_words",
        r"Killed|Segmentation fault|core dumped|MemoryError|bad_alloc|Out of memory|OOMKilled|SIGTERM|SIGKILL|preempt",
        ("scan:process",),
        Origin("the OS, shells and schedulers", eras="all"),
        sig="Killed|Segmentation fault|core dumped|MemoryError|bad_alloc|Out of memory|OOMKilled|SIGTERM|SIGKILL"
        "|[Pp]reempt",
    ),
    Phrase(
        "numeric_words",
        r"loss: -?(?:nan|inf)|NaN|Inf or NaN",
        ("scan:numeric",),
        SCRIPT,
        sig="loss: -?(nan|inf)|NaN|Inf or NaN",
    ),
    Phrase(
        "data_words",
        r"End of sequence|OUT_OF_RANGE|OutOfRange|auto[-_ ]?shard",
        ("scan:data",),
        _tf("tensorflow/core/grappler/optimizers/data/auto_shard.cc"),
        sig="End of sequence|OUT_OF_RANGE|OutOfRange|[Aa]uto[-_ ]?[Ss]hard",
    ),
)

# The classes clues point at, in the order an unknown verdict ranks them when
# as many errors name each: a lost peer is the commonest cause of all.
CLUE_ORDER = (
    "peer_died",
    "firewall_blocked",
    "oom",
    "tf_config_mismatch",
    "version_skew",
    "data_exhaustion",
    "checkpoint_conflict",
    "nccl_error",
    "nan_loss",
    "worker_exception",
)


# --- asking the catalogue --------------------------------------------------------------


def messages_tagged(tag: str) -> tuple[str, ...]:
    """The kinds of the messages with this tag, in catalogue order."""
    return tuple(m.kind for m in MESSAGES if tag in m.tags)


def message(kind: str) -> Message:
    return _BY_KIND[kind]


_BY_KIND = {m.kind: m for m in MESSAGES}


def phrases_regex(tag: str) -> str:
    """One alternation of the phrases with this tag (to be matched ignoring case)."""
    return "|".join(f"(?:{p.regex})" for p in PHRASES if tag in p.tags)


@cache
def _tagged_pattern(tag: str) -> re.Pattern[str] | None:
    regex = phrases_regex(tag)
    return re.compile(regex, re.I) if regex else None


def says(text: str, tag: str) -> bool:
    """Whether ``text`` holds a phrase with this tag (``peer_lost``, ``echo`` ...)."""
    pattern = _tagged_pattern(tag)
    return pattern is not None and pattern.search(text) is not None


def grpc_reason(text: str) -> str | None:
    """The reason of a gRPC failure whose message is ``text``: the first phrase's, in order."""
    return next((p.grpc_reason for p in PHRASES if p.grpc_reason and p.pattern.search(text)), None)


def errno_of(text: str) -> int | None:
    """The OS error ``text`` names, if any (Linux numbering)."""
    return next((p.errno for p in PHRASES if p.errno is not None and p.pattern.search(text)), None)


def clues() -> list[tuple[str, re.Pattern[str]]]:
    """(class, the words that point at it), in CLUE_ORDER."""
    return [(cls, pattern) for cls in CLUE_ORDER if (pattern := _tagged_pattern(f"clue:{cls}")) is not None]


def scan_words(group: str) -> str:
    """The scanner's signature of one group of phrases (tag ``scan:<group>``)."""
    return "|".join(p.sig or p.regex for p in PHRASES if f"scan:{group}" in p.tags)


def in_order(messages: Iterable[Message] = MESSAGES) -> list[Message]:
    """Messages in the order they are tried: by tier, then catalogue order."""
    return sorted(messages, key=lambda m: TIERS.index(m.tier))

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
  (``progress``: training went on; ``peer_report``: what a worker says of a
  peer; ``stall``: something gave up waiting for a peer after a deadline;
  ``in_traceback``: a traceback ending in it keeps its kind;
  ``stop_order``: a scheduler's record that it stopped the process from
  outside (said as the job was stopped, not by the process);
  ``abort_reason``: a relayed abort for this reason is this), never the
  rules' own copies of its wording;
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


# slurmstepd's record that it stopped a step or job (also read from a batch file's
# own lines by env.py): "*** STEP 551207.0 ON cn042 CANCELLED AT ... DUE TO TIME LIMIT ***".
SLURM_CANCELLED = r"\*\*\* (?:STEP|JOB) \S+ ON \S+ CANCELLED AT \S+(?: (?P<why>[^*]*?))? \*\*\*"
SCRIPT = Origin("the training script", eras="any")
# OpenPBS' and Torque's execution daemon, as it kills a job over one of its limits.
_PBS_MOM = Origin(
    "OpenPBS and Torque (pbs_mom)", "src/resmom/mom_main.c", "job_over_limit", "PBS all", "openpbs/openpbs"
)
BLACKBOX = Origin("mwms-doctor's black box", "analyzer/capture.py", eras="any")


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
    also: tuple[Origin, ...] = ()  # the same words printed by other programs or other versions

    @property
    def origins(self) -> tuple[Origin, ...]:
        return (self.origin, *self.also)

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


# A TF_CONFIG logged as its two parts ("TF_CONFIG cluster={...} task={...}"): its JSON, put together.
_TF_CONFIG_PARTS = re.compile(
    r"TF_CONFIG\W{0,3}\s*cluster\s*[=:]\s*(?P<cluster>\{.*?\})[,;]?\s*task\s*[=:]\s*(?P<task>\{[^{}]*\})"
)


def _tf_config_parts(text: str) -> dict[str, str]:
    m = _TF_CONFIG_PARTS.search(text)
    return {"tf_config": f'{{"cluster": {m["cluster"]}, "task": {m["task"]}}}'} if m else {}


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


def _task_and_remote(text: str) -> dict[str, str]:
    """The task a peer report names, and, from TF's gRPC blocks, the peer the
    error came from (``Socket closed`` from remote target .../task:2)."""
    return {**_task(text), **_remote_errors(text)}


def _oom_alloc(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    if (m := re.search(r"^Limit:\s+(\S+)", text, re.M)) or (m := re.search(r"memory_limit_: (\S+)", text)):
        out["limit"] = m[1]
    if m := re.search(r"^InUse:\s+(\S+)", text, re.M):
        out["in_use"] = m[1]
    return out


_STEP = re.compile(r"(?i)\b(?:global_)?step\b[\s:=#\[]*(?P<step>\d+)(?!\d|\.\d)(?:\s*/\s*(?P<steps>\d+))?")
# An epoch line's count of the steps it ran ("steps=7", "20 steps").
_EPOCH_STEPS = re.compile(r"(?i)(?<![\d.])\b(?P<n1>\d+) steps\b|\bsteps\s*[=:]\s*(?P<n2>\d+)\b")
_LOSS = re.compile(r"(?i)\bloss\b\s*[=:]?\s*(?P<loss>[-+]?(?:\d*\.?\d*(?:nan|inf)|\d+\.?\d*(?:e[-+]?\d+)?))")
_EPOCH = re.compile(r"(?i)\bepoch\b[\s:=#\[]*(?P<epoch>\d+)(?:\s*/\s*(?P<epochs>\d+))?")


def _epoch_fields(text: str) -> dict[str, str]:
    """How many steps an epoch line says its epoch ran, where it says."""
    m = _EPOCH_STEPS.search(text)
    return {"epoch_steps": m["n1"] or m["n2"]} if m else {}


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


# --- who prints them -----------------------------------------------------------------

_COORD = "third_party/xla/xla/tsl/distributed_runtime/coordination/coordination_service.cc"
_AGENT = "third_party/xla/xla/tsl/distributed_runtime/coordination/coordination_service_agent.cc"
_BFC = "third_party/xla/xla/tsl/framework/bfc_allocator.cc"
_MWMS = "tensorflow/python/distribute/collective_all_reduce_strategy.py"
_RESOLVER = "tensorflow/core/common_runtime/collective_param_resolver_local.cc"
_NCCL_MANAGER = "tensorflow/core/nccl/nccl_manager.cc"


def _ompi(file: str, function: str = "", eras: str = "") -> Origin:
    return Origin("Open MPI", file, function, eras, "open-mpi/ompi")


def _grpc(file: str, function: str = "", eras: str = "all") -> Origin:
    return Origin("gRPC core (bundled in TF)", file, function, eras, "grpc/grpc")


def _kernel(function: str, eras: str) -> Origin:
    return Origin("Linux kernel", "mm/oom_kill.c", function, eras, "torvalds/linux")


def _keras_everywhere(file: str, function: str) -> tuple[Origin, ...]:
    """Keras prints it in every era, from the same function of its four homes."""
    return (
        _tf(f"tensorflow/python/keras/{file}", function, "TF 1.x-2.5 (tf.keras inside TF)"),
        Origin("Keras 2", f"keras/{file}", function, "keras 2.6-2.15", "keras-team/keras"),
        _keras(f"tf_keras/{file}", function, "tf_keras (TF 2.16+ with TF_USE_LEGACY_KERAS=1)"),
    )


@dataclass(frozen=True)
class W:
    """One wording of a kind of message: its regex and who prints it."""

    regex: str
    origin: Origin
    sig: str = ""  # the scanner's signature; derived from the regex when empty
    flags: int = 0
    also: tuple[Origin, ...] = ()  # the same words printed by others too
    seen: tuple[str, ...] = ()


def _kind(
    kind: str,
    means: str,
    *wordings: W,
    tags: tuple[str, ...] = (),
    tier: str = "specific",
    extra: Callable[[str], dict[str, str]] | None = None,
    standalone: bool = False,
    frequent: bool = False,
    severity: str | None = None,
    benign: str | None = None,
) -> tuple[Message, ...]:
    """The messages of one kind: one per wording, each with its own origin,
    sharing what the kind means."""
    return tuple(
        Message(
            kind,
            w.regex,
            means,
            w.origin,
            sig=w.sig,
            tags=tags,
            flags=w.flags,
            extra=extra,
            standalone=standalone,
            frequent=frequent,
            severity=severity,
            tier=tier,
            benign=benign,
            also=w.also,
            seen=w.seen,
        )
        for w in wordings
    )


# --- the messages ----------------------------------------------------------------------

MESSAGES: tuple[Message, ...] = (
    # --- the cluster comes up -------------------------------------------------
    *_kind(
        "tf.server_started",
        "A task started its gRPC server and listens at this address: it reached TensorFlow's distributed runtime.",
        W(
            r"Started server with target: grpc://(?P<host>[^\s:]+|\[[^\]]+\]):(?P<port>\d+)",
            _tf(
                "tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc",
                "GrpcServer::Start",
                "TF 1.x-2.21",
            ),
            sig="Started server with target: grpc://",
        ),
    ),
    *_kind(
        "coord.service_started",
        "This task runs the coordination service: it is the cluster's leader (the first task of the cluster).",
        W(
            r"Initializing CoordinationService",
            _tf(_COORD, "CoordinationServiceStandaloneImpl (constructor)", "TF 2.17-2.21"),
        ),
    ),
    *_kind(
        "coord.task_connected",
        "The leader saw a task register with the coordination service.",
        W(
            r"(?P<task_name>"
            + TASK
            + r") has connected to coordination service\. Incarnation: (?P<incarnation>\d+)",
            _tf(
                _COORD,
                "CoordinationServiceStandaloneImpl::RegisterTask (TaskState::Connect in newer)",
                "TF 2.10-2.21",
            ),
            sig="has connected to coordination service",
        ),
        extra=_task,
    ),
    *_kind(
        "coord.waiting_for_tasks",
        "The leader is still waiting for tasks to register; 'Example stragglers' names those it waits for. "
        "TF 2.21 has no registration timeout: alone it is no failure.",
        W(
            r"Waiting for (?P<waiting>\d+)/(?P<total>\d+) tasks to connect",
            _tf(_COORD, "CoordinationServiceStandaloneImpl::LogConnectStatusLocked", "TF 2.16-2.21"),
            sig="Waiting for [0-9]+/[0-9]+ tasks to connect",
        ),
        extra=_stragglers,
    ),
    *_kind(
        "coord.agent_connected",
        "This task registered with the coordination service: it joined the cluster.",
        W(
            r"Coordination agent has successfully connected",
            _tf(_AGENT, "CoordinationServiceAgentImpl::Connect", "TF 2.10-2.21"),
        ),
    ),
    *_kind(
        "coord.barrier_timeout",
        "A coordination barrier (the start-up barrier waits for every task) timed out: some task never reached it.",
        W(
            r"Barrier timed out\. Barrier_id: (?P<barrier>\S+)",
            _tf(_COORD, "CoordinationServiceStandaloneImpl::StartCheckStaleness", "TF 2.9-2.17"),
            sig="Barrier timed out",
        ),
        W(
            r"Barrier timed out\. Id: (?P<barrier>\S+?)\.(?:\s|$)",
            _tf(_COORD, "CoordinationService::CheckBarrierTimeout", "TF 2.19-2.21"),
            sig="Barrier timed out",
        ),
    ),
    *_kind(
        "cluster.startup_wait",
        "Cluster start-up that never completes, in other launchers' and TF1's words: TensorFlowOnSpark's "
        "reservations, a TF1 master that cannot reach its workers, a task that cannot register with the "
        "coordination service.",
        W(
            r"(?P<wait>waiting for \d+ reservations)",
            Origin(
                "TensorFlowOnSpark",
                "tensorflowonspark/reservation.py",
                "Server.await_reservations",
                "TFoS 1.x-2.2",
                "yahoo/TensorFlowOnSpark",
            ),
            sig="waiting for [0-9]+ reservations",
        ),
        W(
            r"(?P<wait>timed out waiting for reservations)",
            Origin(
                "TensorFlowOnSpark",
                "tensorflowonspark/reservation.py",
                "Server.await_reservations",
                "TFoS 1.x-2.2",
                "yahoo/TensorFlowOnSpark",
            ),
        ),
        W(
            r"(?P<wait>Master init: \w+)",
            _tf("tensorflow/core/distributed_runtime/master.cc", "DeviceFinder::WhenFound", "TF 1.x-1.8"),
            sig="Master init: ",
        ),
        W(
            r"(?P<wait>RegisterTask)",
            _tf(
                _AGENT,
                "CoordinationServiceAgentImpl::Connect (the RegisterTask RPC's name in its errors)",
                "TF 2.10-2.21",
            ),
        ),
        W(
            r"(?P<wait>Failed to (?:connect to|register with) (?:the )?coordination service)",
            Origin("launchers and scripts (not found in TF's source)"),
            sig="to (connect to|register with) (the )?coordination service",
        ),
        W(
            r"(?P<wait>Waiting for (?:all )?(?:workers|the cluster|TFSparkNodes) to (?:start|be ready|join))",
            Origin(
                "TensorFlowOnSpark",
                "tensorflowonspark/TFCluster.py",
                "run",
                "TFoS 1.x-2.2",
                "yahoo/TensorFlowOnSpark",
            ),
            sig="Waiting for (all )?(workers|the cluster|TFSparkNodes) to",
        ),
        tags=("in_traceback",),
    ),
    *_kind(
        "tf1.session_retry",
        "TF1 MonitoredSession retrying a session it cannot create (INFO level, in a loop): a peer it needs is not there.",
        W(
            r"An error was raised while a session was being created",
            _tf(
                "tensorflow/python/training/monitored_session.py",
                "_RecoverableSession._create_session",
                "TF 1.x-2.21",
            ),
        ),
        severity="error",
    ),
    *_kind(
        "mwms.waiting_for_cluster",
        "TF 2.4-2.6 MWMS: each worker waits until every worker's server answers.",
        W(
            r"Waiting for the cluster, timeout = (?P<timeout>\S+)",
            _tf(_MWMS, "CollectiveAllReduceExtended._start_check_health_thread", "TF 2.4-2.21"),
            sig="Waiting for the cluster, timeout",
        ),
    ),
    *_kind(
        "mwms.cluster_ready",
        "MWMS: every worker's server answered; the cluster is up.",
        W(
            r"Cluster is ready\.",
            _tf(_MWMS, "CollectiveAllReduceExtended._start_check_health_thread", "TF 2.4-2.21"),
            sig="Cluster is ready",
        ),
    ),
    *_kind(
        "coord.task_restarted",
        "The coordination leader when a task registers again after a restart (TF 2.21, recorded).",
        W(
            r"^(?P<task_name>" + TASK + r") unexpectedly tried to connect with a different incarnation",
            _tf(_COORD, "CoordinationServiceStandaloneImpl::RegisterTask", "TF 2.12-2.21"),
            sig="tried to connect with a different incarnation",
        ),
        extra=_task,
    ),
    *_kind(
        "coord.barrier_passed",
        "A coordination barrier passed (every task reached it).",
        W(
            r"Barrier\((?P<barrier>[^)]*)\) has passed with status: (?P<status>\w+)",
            _tf(_COORD, "CoordinationServiceStandaloneImpl::PassBarrier", "TF 2.12-2.21"),
            sig=r"Barrier\(.*\) has passed with status",
        ),
    ),
    *_kind(
        "mwms.cluster_spec",
        "MultiWorkerMirroredStrategy starts with this cluster, task type and index: the task's own view of the cluster.",
        W(
            r"MultiWorkerMirroredStrategy with cluster_spec = (?P<cluster_spec>\{.*?\}), "
            r"task_type = '(?P<task_type>\w+)', task_id = (?P<task_index>\d+), num_workers = (?P<num_workers>\d+)",
            _tf(_MWMS, "CollectiveAllReduceExtended._initialize_multi_worker", "TF 2.1-2.21"),
            sig="MultiWorkerMirroredStrategy with cluster_spec",
        ),
    ),
    *_kind(
        "mwms.collective_devices",
        "MWMS enabled collective ops over these devices (the task's devices are named with its task).",
        W(
            r"Enabled multi-worker collective ops with available devices: \[(?P<devices>[^\]]*)\]",
            _tf(_MWMS, "CollectiveAllReduceExtended._initialize_multi_worker", "TF 1.15-2.21"),
            sig="Enabled multi-worker collective ops",
        ),
    ),
    *_kind(
        "mwms.local_devices",
        "The devices a MirroredStrategy (or MWMS) runs on locally.",
        W(
            r"Using MirroredStrategy with devices \((?P<devices>[^)]*)\)",
            _tf(
                "tensorflow/python/distribute/mirrored_strategy.py",
                "MirroredExtended._initialize_single_worker",
                "TF 2.1-2.21",
            ),
            sig="Using MirroredStrategy with devices",
        ),
    ),
    *_kind(
        "tf_config.dump",
        "A TF_CONFIG printed by a script or an estimator, as JSON or as a Python dict "
        '("TF_CONFIG: {...}", "TF_CONFIG environment variable: {\'cluster\': ...}", "TF_CONFIG is {...}").',
        W(
            r"TF_CONFIG(?:\W{1,4}|\s+(?:environment variable|is|was|set to)\W{0,3})(?P<tf_config>\{.*\})",
            SCRIPT,
            sig="TF_CONFIG",
        ),
        # Its two parts as fields of a log line: "TF_CONFIG cluster={...} task={...}".
        W(r"TF_CONFIG\W{0,3}\s*cluster\s*[=:]\s*\{", SCRIPT, sig="TF_CONFIG"),
        extra=_tf_config_parts,
    ),
    *_kind(
        "py.thread_dump",
        "A dump of every thread's stack, taken because the process seemed stuck (Python's faulthandler on a "
        "timeout or a signal, or a person's py-spy dump): its lines are no words of the script's, and "
        "analyzer/stacks.py reads where each main thread was.",
        W(
            r"^(?:Timeout \(\d+:\d\d:\d\d\)!|(?:Current thread|Thread) 0x[0-9a-fA-F]+ \(most recent call first\):"
            r"|\s+File \"[^\"]+\", line \d+ in \S+)\s*$",
            Origin(
                "CPython (faulthandler)",
                "Modules/faulthandler.c",
                "dump_traceback",
                "Python 3.3-3.13",
                "python/cpython",
            ),
            sig='Timeout \\([0-9]+:[0-9][0-9]:[0-9][0-9]\\)!|most recent call first\\):|File "[^"]+", line [0-9]+ in ',
        ),
        W(
            r"^(?:(?:\$ )?py-spy dump\b.*|Process \d+: .+|Python v\d+\.\d+\.\d+ \(.+\)|Thread (?:0x[0-9a-fA-F]+|\d+) "
            r"\((?:idle|active|gil)[^)]*\): \"[^\"]*\"|\s+\S+ \((?:[^()\s]+\.py|<\w+>):\d+\))\s*$",
            Origin("py-spy (dump)", "src/dump.rs", "print_traces", "py-spy 0.3-0.4", "benfred/py-spy"),
            sig='py-spy dump|Process [0-9]+: |Python v[0-9]+\\.[0-9]+\\.[0-9]+ \\(|\\((idle|active|gil)[^)]*\\): "|\\.py:[0-9]+\\)',
        ),
    ),
    *_kind(
        "blackbox.stall",
        "A worker's black box (mwms_doctor.capture) saw no step end for far longer than usual while its "
        "process lived, and says where the main thread was: in TensorFlow (a step's ops, a collective "
        "waiting for a peer) or in the script's own code (a queue, a lock, a file).",
        W(
            r"^\[black box\] no step ended for (?P<quiet_s>\d+(?:\.\d+)?) s after step (?P<after_step>\d+)[^:\n]*: "
            r"main thread (?P<where>in TensorFlow|in the script's own code|in Python's library|not in the dump)"
            r"(?: \((?P<frame>[^)\n]*)\))?",
            BLACKBOX,
            sig=r"\[black box\] no step ended for",
        ),
        standalone=True,
    ),
    *_kind(
        "blackbox.input_ran_out",
        "A worker's black box (mwms_doctor.capture) saw it train on an empty batch (0 rows): its input "
        "ran out while the others' had data, and MWMS kept it in step with empty batches. With the "
        "count its end record gives.",
        W(
            r"^\[black box\] (?P<task>\S+) input ran out: batch (?P<n>\d+) was empty",
            BLACKBOX,
            sig=r"\[black box\] \S+ input ran out",
        ),
        standalone=True,
    ),
    *_kind(
        "blackbox.ended",
        "A worker's black box's last record: how its process ended, after how many steps and batches "
        "(and how many of them were empty).",
        W(
            r"^\[black box\] ended \((?P<reason>[^)]*)\) after (?P<steps>\d+) steps, (?P<batches>\d+) batches"
            r"(?:, (?P<empty>\d+) of them empty)?",
            BLACKBOX,
            sig=r"\[black box\] ended \(",
        ),
        standalone=True,
    ),
    *_kind(
        "script.whoami",
        'What a script says of itself: "worker 1 of 3", "rank 2/4", "task_index=1".',
        W(
            r"\b(?P<role>[Ww]orker|[Rr]ank|[Tt]ask|[Cc]hief)[ _:=#]*(?:[Ii]ndex|[Ii][Dd])?[ :=#]*(?P<index>\d+)\s*(?:of|/)\s*(?P<total>\d+)\b",
            SCRIPT,
            sig="([Ww]orker|[Rr]ank|[Tt]ask|[Cc]hief)[ _:=#]*([Ii]ndex|[Ii][Dd])?[ :=#]*[0-9]+ *(of|/) *[0-9]+",
        ),
        W(r"\btask_(?:index|id)\s*[:=]\s*(?P<index2>\d+)", SCRIPT, sig="task_(index|id) *[:=]"),
        # A structured logger's field (logfmt, key: value): "task=worker:0", "task: chief:0".
        W(
            r"\btask\s*[:=]\s*[\"']?(?P<role>[Cc]hief|[Ww]orker)[:/_-](?P<index>\d+)\b",
            SCRIPT,
            sig="task *[:=] *[\"']?([Cc]hief|[Ww]orker)[:/_-][0-9]",
        ),
        # A script naming itself in words: "(this is worker 2)", "I am worker 1", "running as chief 0".
        W(
            # anywhere in a line of its own (matched from the line's start to begin a record)
            r"^[^\n]*?\b(?:[Tt]his is|I am|I'm|[Rr]unning as|[Ss]tarted as|[Ss]tarting as)\s+"
            r"(?P<role>[Ww]orker|[Rr]ank|[Tt]ask|[Cc]hief)[ _:=#]*(?P<index>\d+)\b",
            SCRIPT,
            sig="([Tt]his is|I am|I'm|[Rr]unning as|[Ss]tart(ed|ing) as) +([Ww]orker|[Rr]ank|[Tt]ask|[Cc]hief)",
        ),
        tier="general",
        # A script's print: its own record, never the tail of the TF record before it.
        standalone=True,
    ),
    *_kind(
        "env.tf_version",
        'What training scripts commonly print (`print("TensorFlow version:", tf.__version__)`) and `pip freeze` '
        "lines; TF itself prints no version banner.",
        W(
            r"^(?:TensorFlow(?: version)?[:=]?\s+v?|tensorflow(?:-cpu|-gpu)?==)(?P<version>\d+\.\d+\.\d+\S*)\s*$",
            SCRIPT,
            flags=re.I,
            sig="[Tt][Ee][Nn][Ss][Oo][Rr][Ff][Ll][Oo][Ww]( [Vv]ersion)?[:=]? *[Vv]?[0-9]+[.][0-9]+[.][0-9]"
            "|[Tt][Ee][Nn][Ss][Oo][Rr][Ff][Ll][Oo][Ww](-cpu|-gpu)?==",
        ),
        # Inside a line: a structured logger's field (tf_version=2.17.1, "tensorflow_version": "2.21.0")
        # or a banner of versions ("tensorflow 2.21.0, keras 3.9, python 3.11").
        W(
            r"\b(?:(?:tf_version|tensorflow_version|tf\.__version__)[\"']? *[=:] *[\"']?v?|[Tt]ensor[Ff]low[ ,:=]+v?)"
            r"(?P<version>\d+\.\d+\.\d+[\w.+-]*)",
            SCRIPT,
            sig="(tf_version|tensorflow_version|tf[.]__version__)[\"']? *[=:] *[\"']?v?[0-9]+[.][0-9]+[.][0-9]"
            "|[Tt]ensor[Ff]low[ ,:=]+v?[0-9]+[.][0-9]+[.][0-9]",
        ),
        standalone=True,
    ),
    # --- training ---------------------------------------------------------------
    *_kind(
        "keras.epoch",
        "Keras starts an epoch (fit with verbose 1 or 2).",
        W(
            r"^Epoch (?P<epoch>\d+)/(?P<epochs>\d+)\s*$",
            _keras_everywhere("callbacks.py", "ProgbarLogger.on_epoch_begin")[0],
            also=(
                *_keras_everywhere("callbacks.py", "ProgbarLogger.on_epoch_begin")[1:],
                Origin(
                    "Keras 3",
                    "keras/src/callbacks/progbar_logger.py",
                    "ProgbarLogger.on_epoch_begin",
                    "Keras 3 (tf.keras in TF 2.16-2.21)",
                    "keras-team/keras",
                ),
            ),
            sig="Epoch [0-9]+/[0-9]+",
        ),
        tags=("progress",),
        standalone=True,
        frequent=True,
    ),
    *_kind(
        "keras.epoch_end",
        'Keras ends an epoch: verbose=2 "8/8 - 2s - loss: 0.72 - ..."; verbose=1 "8/8 [=====] - 1s 9ms/step - loss: ...".',
        W(
            r"^(?P<step>\d+)/(?P<steps>\d+) (?:\[=+\] )?- [\d.]+m?s (?:[\d.]+m?s/step )?- (?P<metrics>loss: .*)$",
            _keras_everywhere("utils/generic_utils.py", "Progbar.update")[0],
            also=_keras_everywhere("utils/generic_utils.py", "Progbar.update")[1:],
            sig=r"[0-9]+/[0-9]+ (\[=+\] )?- [0-9.]+m?s (- |[0-9.]+m?s/step - )",
        ),
        W(
            r"^(?P<step>\d+)/(?P<steps>\d+) (?:\[=+\] )?- [\d.]+s [\d.]+(?:us|\u00b5s)/(?:step|sample) - (?P<metrics>loss: .*)$",
            _keras_everywhere("utils/generic_utils.py", "Progbar.update")[0],
            also=_keras_everywhere("utils/generic_utils.py", "Progbar.update")[1:],
        ),
        W(
            r"^(?P<step>\d+)/(?P<steps>\d+) (?:\u2501+ |- )[\d.]+m?s (?:- )?(?:[\d.]+(?:m|u|\u00b5)?s/step )?"
            r"- (?P<metrics>(?:\w+: \S+ - )*loss: .*)$",
            Origin(
                "Keras 3",
                "keras/src/utils/progbar.py",
                "Progbar.update",
                "Keras 3 (tf.keras in TF 2.16-2.21)",
                "keras-team/keras",
            ),
        ),
        tags=("progress",),
        standalone=True,
        frequent=True,
    ),
    # --- failures ---------------------------------------------------------------
    *_kind(
        "tf.empty_input",
        "An op indexed the first element of a tensor whose first dimension is empty: under MWMS, a batch with no"
        " examples, which a worker gets once its own input has ended while the others still have data.",
        W(
            r"slice index 0 of dimension 0 out of bounds",
            _tf("tensorflow/core/util/strided_slice_op.cc", "ValidateStridedSliceOp", "TF 1.x-2.21"),
            sig="slice index 0 of dimension 0 out of bounds",
        ),
        W(
            r"indices\[0(?:,0)*\] = -?\d+ is not in \[0, 0\)",
            _tf("tensorflow/core/kernels/gather_functor.h", "HandleCopies (GatherV2)", "TF 1.x-2.21"),
            sig="is not in \\[0, 0\\)",
        ),
        W(
            r"Input to reshape is a tensor with 0 values, but the requested shape has [1-9]",
            _tf("tensorflow/core/kernels/reshape_op.h", "ReshapeOp::Compute", "TF 1.x-2.21"),
            sig="Input to reshape is a tensor with 0 values",
        ),
        tags=("in_traceback",),
        severity="error",
    ),
    *_kind(
        "oom.tensor_allocation",
        "An op could not get memory for its output tensor: the failed allocation, with shape, type and device.",
        W(
            r"OOM when allocating tensor(?: with shape ?\[(?P<shape>[^\]]*)\])?(?: and type (?P<dtype>\w+))?"
            r"(?: on (?P<device>\S+))?(?: by allocator (?P<allocator>\w+))?",
            _tf("tensorflow/core/framework/op_kernel.cc", "OpKernelContext::allocate_tensor", "TF 1.x-2.21"),
            sig="OOM when allocating tensor",
        ),
        tags=("in_traceback",),
    ),
    *_kind(
        "oom.allocator_exhausted",
        "TensorFlow's allocator could not grant a request: it is out of memory (its limit and what is in use "
        'follow). "freed_by_count=0 ... not a failure" is a retry hint, deliberately another kind.',
        W(
            r"Allocator \((?P<allocator>[^)]+)\) ran out of memory trying to allocate (?P<requested>[\d.]+\s?\w+)"
            r"(?: \(rounded to (?P<requested_bytes>\d+)\))?(?!.*freed_by_count)",
            _tf(_BFC, "BFCAllocator::AllocateRawInternal", "TF 1.x-2.21"),
            sig="ran out of memory trying to allocate",
        ),
        tags=("in_traceback",),
        extra=_oom_alloc,
    ),
    *_kind(
        "oom.allocator_retry",
        "The allocator ran short but will retry after freeing memory: a hint of pressure, not a failure.",
        W(
            r"ran out of memory trying to allocate .*freed_by_count",
            _tf(_BFC, "BFCAllocator::AllocateRaw (the retry path)", "TF 1.x-2.21"),
            sig="ran out of memory trying to allocate",
        ),
        tags=("in_traceback",),
    ),
    *_kind(
        "oom.cuda_alloc_failed",
        "The CUDA driver refusing memory. TF prints it while it backs off to smaller reservations too, so alone "
        'it is not a failure; "Dst tensor is not initialized" is how a failed copy to a full GPU surfaces.',
        W(
            r"failed to allocate (?P<requested>[\d.]+\s?\w+) \((?P<requested_bytes>\d+) bytes\) from device: CUDA_ERROR_OUT_OF_MEMORY",
            _tf(
                "third_party/xla/xla/stream_executor/cuda/cuda_driver.cc",
                "GpuDriver::DeviceAllocate",
                "TF 1.x-2.21, GPU builds (tensorflow/stream_executor/cuda/ up to 2.10)",
            ),
            sig="CUDA_ERROR_OUT_OF_MEMORY",
        ),
        W(
            r"Dst tensor is not initialized",
            _tf("tensorflow/core/common_runtime/gpu/gpu_util.cc", "PrepareCopy", "TF 1.x-2.21"),
        ),
        tags=("in_traceback",),
    ),
    *_kind(
        "oom.bfc_dump",
        "A BFC allocator dump (TF prints it when an allocation fails), seen in part.",
        W(
            r"Sum Total of in-use chunks: (?P<in_use>\S+)",
            _tf(_BFC, "BFCAllocator::DumpMemoryLog", "TF 1.x-2.21"),
            sig="Sum Total of in-use chunks",
        ),
        W(
            r"Chunks of size \d+ totalling",
            _tf(_BFC, "BFCAllocator::DumpMemoryLog", "TF 1.x-2.21"),
            sig="Chunks of size [0-9]+ totalling",
        ),
        W(
            r"Bin \(\d+\): Total Chunks",
            _tf(_BFC, "BFCAllocator::DumpMemoryLog", "TF 1.x-2.21"),
            sig="Bin [(][0-9]+[)]: Total Chunks",
        ),
        W(r"BFCAllocator dump", _tf(_BFC, "BFCAllocator::DumpMemoryLog", "TF 2.1-2.21")),
        tags=("in_traceback",),
        tier="general",
    ),
    *_kind(
        "oom.xla",
        "XLA and TPU compilers running out of device memory.",
        W(
            r"Ran out of memory in memory space (?P<space>\w+)",
            Origin("XLA TPU compiler (libtpu, not in TF's wheels)", eras="TPU"),
            sig="Ran out of memory in memory space",
        ),
        W(
            r"Out of memory while trying to allocate (?P<requested>[\d.]+\s?\w+)",
            _tf(
                "third_party/xla/xla/stream_executor/integrations/tf_allocator_adapter.cc",
                "TfAllocatorAdapter::Allocate",
                "TF 1.15-2.18 (tensorflow/stream_executor/tf_allocator_adapter.cc up to 2.14)",
            ),
            sig="Out of memory while trying to allocate",
        ),
        W(
            r"RESOURCE_EXHAUSTED: Out of memory",
            _tf("tensorflow/core/platform/status.cc", "Status::ToString", "TF 2.7-2.21"),
        ),
        W(
            r"[Rr]esource exhausted: Out of memory",
            _tf("tensorflow/core/platform/status.cc", "Status::ToString", "TF 1.x-2.6"),
        ),
        tags=("in_traceback",),
    ),
    *_kind(
        "oom.cudnn_alloc",
        "cuDNN/cuBLAS cannot get their workspace: usually because TF already took the GPU's memory (the fix is "
        "memory growth or a smaller batch).",
        W(
            r"(?P<status>CUDNN_STATUS_ALLOC_FAILED)",
            _tf(
                "third_party/xla/xla/stream_executor/cuda/cuda_dnn.cc",
                "ToString(cudnnStatus_t)",
                "TF 1.x-2.21, GPU",
            ),
            sig="CUDNN_STATUS_ALLOC_FAILED",
        ),
        W(
            r"(?P<status>CUBLAS_STATUS_ALLOC_FAILED)",
            _tf(
                "tensorflow/stream_executor/cuda/cuda_blas.cc", "ToString(cublasStatus_t)", "TF 1.15-2.6, GPU"
            ),
            sig="CUBLAS_STATUS_ALLOC_FAILED",
        ),
        W(
            r"Failed to get convolution algorithm",
            _tf(
                "tensorflow/core/kernels/conv_ops.cc",
                "LaunchConv2DOp<GPUDevice, T>::operator()",
                "TF 1.x-2.6, GPU",
            ),
        ),
        W(
            r"cuDNN failed to initialize",
            _tf(
                "tensorflow/core/kernels/conv_ops.cc",
                "LaunchConv2DOp<GPUDevice, T>::operator()",
                "TF 1.x-2.6, GPU",
            ),
        ),
        W(
            r"Could not create cudnn handle",
            _tf(
                "third_party/xla/xla/stream_executor/cuda/cuda_dnn.cc",
                "CudnnSupport::Init",
                "TF 1.x-2.21, GPU",
            ),
        ),
        tags=("in_traceback",),
    ),
    *_kind(
        "collective.aborted",
        "A collective was aborted: the reason says by whom (a peer's error, relayed) or why (members that disagree).",
        W(
            r"Collective ops is aborted by: (?P<reason>[^\n]*)",
            _tf(
                "tensorflow/core/common_runtime/base_collective_executor.cc",
                "BaseCollectiveExecutor::StartAbort",
                "TF 2.4-2.21",
            ),
            sig="Collective ops is aborted by",
        ),
        tags=("peer_report", "in_traceback"),
        tier="relay",
        extra=_remote_errors,
    ),
    *_kind(
        "collective.shape_mismatch",
        "Collective members that disagree on a tensor's shape; the member named is the one that differs.",
        W(
            r"Shape mismatch in the collective instance (?P<instance>\d+)(?:\. Op at device (?P<device>\S+) expected "
            r"shape \[(?P<shape>[^\]]*)\] but another member in the group expected shape \[(?P<other_shape>[^\]]*)\])?",
            _tf(_RESOLVER, "CollectiveParamResolverLocal::CompleteInstanceFromInitialize", "TF 1.15-2.21"),
            sig="Shape mismatch in the collective instance",
        ),
        W(
            r"Inconsistent output shapes, got \[(?P<got_shape>[^\]]*)\], but expected is \[(?P<expected_shape>[^\]]*)\]",
            _tf(
                "tensorflow/core/kernels/collective_ops.cc",
                "CollectiveGatherOpKernel::ComputeAsync",
                "TF 1.15-2.1",
            ),
            sig="Inconsistent output shapes",
        ),
        tags=("abort_reason", "in_traceback"),
        extra=_task,
    ),
    *_kind(
        "collective.group_mismatch",
        "Members that disagree on the group itself: its size, or the device type a key was registered with.",
        W(
            r"has group_size (?P<size>\d+) and group_key ?\d+ but that group has size (?P<group_size>\d+)",
            _tf(_RESOLVER, "CollectiveParamResolverLocal::CompleteGroupLocal", "TF 1.15-2.6"),
            sig="but that group has size",
        ),
        W(
            r"is joining a group with size ?(?P<joining>\d+), but that group has size (?P<existing>\d+)",
            _tf(_RESOLVER, "CollectiveParamResolverLocal::CompleteGroupLocal", "TF 2.7-2.21"),
            sig="but that group has size",
        ),
        W(
            r"is assigned to device \S+ with type \w+ and group_key \d+ but th",
            _tf(_RESOLVER, "CollectiveParamResolverLocal::CompleteGroupLocal", "TF 1.15-2.6"),
            sig="and group_key ?[0-9]+ but th",
        ),
        tags=("abort_reason", "in_traceback"),
    ),
    *_kind(
        "collective.rank_mismatch",
        "Horovod's coordinator: ranks that submitted different tensors, or one rank never did.",
        W(
            r"Mismatched (?:ALLREDUCE|ALLGATHER|BROADCAST|allreduce|allgather|broadcast)[^\n]*",
            Origin(
                "Horovod",
                "horovod/common/controller.cc",
                "Controller::ConstructResponse",
                "Horovod 0.9-0.28",
                "horovod/horovod",
            ),
            sig="Mismatched (ALLREDUCE|ALLGATHER|BROADCAST|allreduce|allgather|broadcast)",
        ),
        W(
            r"different ranks are trying to submit different tensors",
            Origin(
                "Horovod",
                "horovod/common/stall_inspector.cc",
                "StallInspector::CheckForStalledTensors",
                "Horovod 0.12-0.28",
                "horovod/horovod",
            ),
            sig="different ranks are trying to submit",
        ),
        W(
            r"only subset of ranks is submitting tensors",
            Origin(
                "Horovod",
                "horovod/common/stall_inspector.cc",
                "StallInspector::CheckForStalledTensors",
                "Horovod 0.12-0.28",
                "horovod/horovod",
            ),
            sig="only subset of ranks",
        ),
        tags=("in_traceback",),
    ),
    *_kind(
        "collective.type_mismatch",
        "Members of one collective brought tensors of different data types.",
        W(
            r"Collective instance (?P<instance>\d+) expected type (?P<expected_type>\d+) and data_type "
            r"(?P<expected_dtype>\d+) but got type (?P<type>\d+) and data_type (?P<dtype>\d+)",
            _tf(_RESOLVER, "CollectiveParamResolverLocal::CompleteInstanceLocal", "TF 2.5-2.21"),
            sig="Collective instance [0-9]+ expected type",
        ),
        tags=("abort_reason", "in_traceback"),
    ),
    *_kind(
        "collective.timed_out",
        "A collective gave up waiting for its members after the timeout the job set "
        "(CommunicationOptions(timeout_seconds=...)): some member never joined it.",
        W(
            r"Collective has timed out (?P<waiting>during execution|waiting for other workers)",
            _tf(
                "tensorflow/core/common_runtime/base_collective_executor.cc",
                "BaseCollectiveExecutor::ExecuteAsync, CompleteParamsAsync (logged by StartAbort)",
                "TF 2.3-2.21",
            ),
        ),
        tags=("stall", "abort_reason", "in_traceback"),
        severity="error",
    ),
    *_kind(
        "mwms.peer_down",
        "TF 2.4-2.6 MWMS health checks: a peer is gone.",
        W(
            r"(?P<task_name>" + TASK + r") seems down, retrying",
            _tf(_MWMS, "CollectiveAllReduceExtended._check_health", "TF 2.4-2.21"),
            sig="seems down, retrying",
        ),
        W(
            r"[Cc]luster check alive failed, (?P<down>" + TASK + r") is down",
            _tf(_MWMS, "CollectiveAllReduceExtended._check_health", "TF 2.4-2.21"),
            sig="[Cc]luster check alive failed",
        ),
        tags=("peer_report",),
        extra=_task,
    ),
    *_kind(
        "nccl.error",
        "NCCL's own warnings and the errors TF and Horovod wrap them in.",
        W(
            r"NCCL WARN (?P<nccl_message>.*)",
            Origin(
                "NCCL",
                "src/debug.cc",
                "ncclDebugLog",
                "NCCL 2.x (with NCCL_DEBUG=WARN or INFO)",
                "NVIDIA/nccl",
            ),
            sig="NCCL WARN",
        ),
        W(
            r"NCCL: (?P<nccl_status>unhandled system error|unhandled cuda error|internal error|invalid usage"
            r"|invalid argument|remote process exited[^.]*)",
            _tf(
                _NCCL_MANAGER, "NCCL_RETURN_IF_ERROR", "TF 2.4-2.21 (the reason is NCCL's ncclGetErrorString)"
            ),
            sig="NCCL: ",
        ),
        W(
            r"(?P<nccl_code>nccl[A-Z]\w*Error)",
            Origin(
                "NCCL",
                "src/nccl.h.in",
                "ncclResult_t (its names, as wrappers print them)",
                "NCCL 2.x",
                "NVIDIA/nccl",
            ),
            sig="nccl[A-Z][A-Za-z]*Error",
        ),
        W(
            r"NCCL (?:error|failure)[: ]",
            Origin("XLA and other wrappers", eras="TF 2.10-2.21 GPU builds"),
            sig="NCCL error|NCCL failure",
        ),
        W(
            r"(?:Internal|INTERNAL|InternalError|Unknown|UNKNOWN):\s+unhandled (?:system|cuda) error",
            _tf(_NCCL_MANAGER, "NCCL_RETURN_IF_ERROR", "TF 1.15-2.3 (no 'NCCL: ' prefix yet)"),
            sig="unhandled system error|unhandled cuda error",
        ),
        W(
            r"(?P<nccl_call>ncclCommInitRank failed)[^\n]*",
            Origin(
                "Horovod",
                "horovod/common/ops/nccl_operations.cc",
                "NCCLContext::ErrorCheck",
                "Horovod",
                "horovod/horovod",
            ),
            sig="ncclCommInitRank failed",
        ),
        W(
            r"(?P<nccl_call>Error invoking NCCL)[^\n]*",
            _tf(_NCCL_MANAGER, "NcclManager::LoopKernelLaunches", "TF 1.x-2.21, GPU"),
            sig="Error invoking NCCL",
        ),
        tags=("in_traceback",),
        severity="error",
    ),
    *_kind(
        "tf.op_not_registered",
        "A worker's TensorFlow does not know an op or function another worker's program uses: TF's own text "
        "adds that the client and server binaries may not be built with the same version.",
        W(
            r"Op type not registered '(?P<op>[^']+)' in binary running on (?P<host>\S+)",
            _tf("tensorflow/core/framework/op.cc", "OpRegistry::LookUp", "TF 1.x-2.21"),
            sig="Op type not registered",
        ),
        W(
            r"'(?P<function>[^']+)' is neither a type of a primitive operation nor a name of a function"
            r" registered in binary running on (?P<function_host>\S+?)\.?(?:\s|$)",
            _tf(
                "tensorflow/core/common_runtime/eager/eager_operation.cc",
                "EagerOperation::Reset",
                "TF 1.15-2.21",
            ),
            sig="is neither a type of a primitive operation nor a name of a function",
        ),
        tags=("in_traceback",),
    ),
    *_kind(
        "grpc.protobuf_too_large",
        "A message or tensor proto was larger than protobuf's 2 GB limit.",
        W(
            r"(?P<message_type>[\w.]+) exceeded maximum protobuf size of 2GB: (?P<size>\d+)",
            Origin(
                "protobuf (linked into TF)",
                "src/google/protobuf/message_lite.cc",
                "MessageLite::SerializePartialToCodedStream",
                "TF 1.14-2.21",
                "protocolbuffers/protobuf",
            ),
            sig="exceeded maximum protobuf size",
        ),
        W(
            r"A protocol message was rejected because it was too big \(more than (?P<max>\d+) bytes\)",
            Origin(
                "protobuf (linked into TF)",
                "src/google/protobuf/io/coded_stream.cc",
                "CodedInputStream::PrintTotalBytesLimitError",
                "all",
                "protocolbuffers/protobuf",
            ),
            sig="protocol message was rejected because it was too big",
        ),
        W(
            r"[Mm]essage exceeds (?P<limit>\d+) bytes",
            Origin("wrappers (not found in TF's source)"),
            sig="[Mm]essage exceeds [0-9]+ bytes",
        ),
        W(
            r"(?:larger than|exceeds?) (?:the )?2GB(?: limit)?",
            _tf("tensorflow/python/framework/ops.py", "Graph._as_graph_def", "TF 1.x-2.21"),
            sig="larger than 2GB|2GB limit",
        ),
        W(
            r"Cannot (?:create|serialize) a tensor proto whose content is larger than 2GB",
            _tf("tensorflow/python/framework/tensor_util.py", "make_tensor_proto", "TF 1.x-2.21"),
            sig="larger than 2GB",
        ),
        W(
            r"Cannot serialize protocol buffer of type (?P<proto>[\w.]+) as the serialized size \((?P<serialized>\d+) ?bytes\)"
            r" would be larger than the limit",
            _tf("tensorflow/c/c_api.cc", "MessageToBuffer", "TF 1.10-1.14"),
            sig="Cannot serialize protocol buffer of type",
        ),
        tags=("in_traceback",),
    ),
    *_kind(
        "tf.graph_incompatible",
        "A graph or binary from another TensorFlow version (TF1 and TF2 texts).",
        W(
            r"NodeDef mentions attr '(?P<attr>[^']+)' not in Op",
            _tf("tensorflow/core/framework/node_def_util.cc", "ValidateNodeDef", "TF 1.x-2.4"),
            sig="NodeDef mentions attr",
        ),
        W(
            r"NodeDef mentions attribute (?P<attr>\S+) which is not in the op definition",
            _tf("tensorflow/core/framework/node_def_util.cc", "ValidateNodeDef", "TF 2.5-2.21"),
        ),
        W(
            r"NodeDef missing attr '(?P<missing>[^']+)'",
            _tf("tensorflow/core/framework/node_def_util.cc", "ValidateNodeDef", "TF 1.x-2.21"),
            sig="NodeDef missing attr",
        ),
        W(
            r"GraphDef (?:min consumer|producer) version",
            _tf("tensorflow/core/framework/versions.cc", "CheckVersions", "TF 1.x-2.21"),
            sig="GraphDef (min consumer|producer)",
        ),
        W(
            r"not built with the same version",
            _tf(
                "tensorflow/core/distributed_runtime/eager/eager_service_impl.cc",
                "(remote op creation)",
                "TF 2.1",
            ),
        ),
        W(
            r"Loaded runtime Cu[Dd][Nn][Nn] library: (?P<runtime>\S+) but source was compiled with: (?P<built>\S+)",
            _tf(
                "third_party/xla/xla/stream_executor/cuda/cuda_dnn.cc",
                "CudnnSupport::Init",
                "TF 1.x-2.21, GPU",
            ),
            sig="Loaded runtime Cu[Dd][Nn][Nn] library",
        ),
        tags=("in_traceback",),
        tier="general",
    ),
    *_kind(
        "checkpoint.write_failed",
        "A checkpoint whose files another writer moved or removed (MergeV2Checkpoints merges each writer's "
        "`<prefix>_temp/part-*` files into the checkpoint), or a file another process holds.",
        W(
            r"(?:MergeV2Checkpoints.*?|Failed to rename: )(?:(?P<path>\S+_temp(?:_[0-9a-f]+)?/part-\S+)|\S+_temp\S*)",
            _tf(
                "tensorflow/core/kernels/save_restore_v2_ops.cc", "MergeV2Checkpoints::Compute", "TF 1.x-2.21"
            ),
            also=(
                _tf(
                    "tensorflow/core/platform/windows/windows_file_system.cc",
                    "WindowsFileSystem::RenameFile",
                    "TF 1.x-2.x on Windows",
                ),
            ),
            flags=re.S,
            sig="MergeV2Checkpoints|_temp/part-|_temp_[0-9a-f]+|Failed to rename: ",
        ),
        W(
            r"(?P<temp_path>\S+_temp(?:_[0-9a-f]+)?/part-\d+-of-\d+\S*)[;:] No such file or directory",
            _tf("tensorflow/core/util/tensor_bundle/tensor_bundle.cc", "MergeBundles", "TF 1.x-2.21"),
            flags=re.S,
            sig="_temp/part-|_temp_[0-9a-f]+",
        ),
        W(
            r"[Uu]nable to (?:lock|create|open|truncate) file(?:[^\n]*name = '(?P<h5_path>[^']+)')?"
            r"[^\n]*(?:errno = 11|Resource temporarily unavailable|file locking|lock)",
            Origin(
                "h5py (HDF5's error)",
                "h5py/_errors.templ.pyx",
                "set_exception",
                "h5py 2.x-3.x with HDF5 1.10+",
                "h5py/h5py",
            ),
            flags=re.S,
            sig="[Uu]nable to (lock|create|open|truncate) file",
        ),
        W(
            r"(?:NotFound|AlreadyExists|Unknown|DataLoss|Not found|already exists)[^\n]{0,40}?"
            r"(?P<io_path>\S*(?:_temp_[0-9a-f]{6,}|variables_temp|\.ckpt|tempstate|checkpoint)\S*)",
            _tf(
                "tensorflow/core/platform/status.cc",
                "a file-system status naming a checkpoint path",
                "TF 1.x-2.21",
            ),
            flags=re.S,
            sig="_temp_[0-9a-f]+|variables_temp|[.]ckpt|tempstate|checkpoint",
        ),
        W(
            r"Unsuccessful TensorSliceReader constructor",
            _tf(
                "tensorflow/core/util/tensor_slice_reader.cc",
                "TensorSliceReader::TensorSliceReader",
                "TF 1.x-2.21",
            ),
            flags=re.S,
            sig="TensorSliceReader",
        ),
        W(
            r"AlreadyExistsError: file already exists",
            _tf("tensorflow/python/framework/errors_impl.py", "AlreadyExistsError", "TF 1.x-2.21"),
            flags=re.S,
            sig="AlreadyExistsError",
        ),
        W(
            r"MergeV2Checkpoints[^\n]*(?:Not found|No such file)",
            _tf(
                "tensorflow/core/kernels/save_restore_v2_ops.cc", "MergeV2Checkpoints::Compute", "TF 1.x-2.21"
            ),
            flags=re.S,
            sig="MergeV2Checkpoints",
        ),
        tags=("in_traceback",),
    ),
    *_kind(
        "coord.unhealthy_tasks",
        "The coordination service stopped hearing heartbeats from these tasks: they are gone.",
        W(
            r"The following tasks are unhealthy",
            _tf(_COORD, "CoordinationServiceStandaloneImpl::CheckHeartbeatTimeout", "TF 2.18-2.21"),
            sig="tasks are unhealthy",
        ),
        W(
            r"Stopping coordination service as the following tasks are unhealthy",
            _tf(_COORD, "CoordinationServiceStandaloneImpl::StartCheckStaleness", "TF 2.14-2.17"),
            sig="tasks are unhealthy",
        ),
        tags=("peer_report",),
        extra=_unhealthy,
    ),
    *_kind(
        "net.connect_failed",
        "A connection to another node that failed outside gRPC: Open MPI's TCP transport and daemons, launchers "
        "(their own words name the firewall).",
        W(
            r"connect\(\) to (?P<address>\S+) failed: (?P<why>No route to host|Connection refused|Connection timed out)",
            _ompi(
                "opal/mca/btl/tcp/btl_tcp_endpoint.c",
                "mca_btl_tcp_endpoint_complete_connect",
                "Open MPI 1.6-3.0",
            ),
            sig="connect[(][)] to [^ ]+ failed",
        ),
        W(
            r"Open MPI failed to TCP connect to a peer MPI process",
            _ompi(
                "opal/mca/btl/tcp/help-mpi-btl-tcp.txt",
                "mca_btl_tcp_endpoint_complete_connect",
                "Open MPI 3.1-5.x",
            ),
        ),
        W(
            r"unable to complete a TCP connection",
            _ompi(
                "orte/mca/oob/tcp/oob_tcp_connection.c", "mca_oob_tcp_peer_try_connect", "Open MPI 1.x-5.x"
            ),
        ),
        W(
            r"usually caused by a firewall",
            _ompi("orte/mca/oob/tcp/help-oob-tcp.txt", "mca_oob_tcp_peer_try_connect", "Open MPI 1.x-5.x"),
        ),
        W(
            r"could not (?:establish|open) a TCP connection",
            Origin("launchers (not found in Open MPI's source)"),
            sig="could not (establish|open) a TCP connection",
        ),
        severity="error",
    ),
    *_kind(
        "peer.lost",
        "A peer lost, as every TF era and launcher words it; which peer, when the text says, is in `task`. "
        "More specific records (collective.aborted, coord.unhealthy_tasks) are matched before these.",
        W(
            r"(?P<how>Aborting Ring\w+ with (?:Unavailable|UNAVAILABLE)\b)",
            _tf("tensorflow/core/common_runtime/ring_alg.cc", "RingAlg::StartAbort", "TF 1.x-2.21"),
            sig="Aborting Ring[A-Za-z]+ with",
        ),
        W(
            r"(?P<how>StartAbort (?:Unavailable|UNAVAILABLE)\b)",
            _tf(
                "tensorflow/core/common_runtime/base_collective_executor.cc",
                "BaseCollectiveExecutor::StartAbort",
                "TF 1.x-2.1 (WARNING), 2.5-2.21 (ERROR)",
            ),
            sig="StartAbort",
        ),
        W(
            r"(?P<how>peer process has unexpectedly disconnected)",
            _ompi("opal/mca/btl/tcp/help-mpi-btl-tcp.txt", "mca_btl_tcp_frag_recv", "Open MPI 2.0.4+"),
        ),
        W(
            r"(?P<how>mpirun noticed that process rank \d+)",
            _ompi("orte/tools/orterun/help-orterun.txt", "orte_print_aborted_job", "Open MPI 1.x-5.x"),
            sig="mpirun noticed that process rank",
        ),
        W(
            r"(?P<how>has been detected as unhealthy)",
            Origin("launchers (not found in TF's source)"),
            sig="has been detected as unhealthy",
        ),
        W(
            r"(?P<how>heartbeat timeout)",
            _tf(_COORD, "CoordinationServiceStandaloneImpl::StartCheckStaleness", "TF 2.8-2.21"),
        ),
        W(
            r"(?P<how>Primary job +terminated normally, but \d+ process(?:es)? returned)",
            _ompi("orte/mca/errmgr/base/help-errmgr-base.txt", "default_hnp_abort", "Open MPI 1.10-4.1"),
            sig="Primary job +terminated normally, but",
        ),
        W(
            r"(?P<how>mpirun detected that one or more processes exited with non-zero status)",
            _ompi("orte/tools/orterun/help-orterun.txt", "orte_print_aborted_job", "Open MPI 1.x-5.x"),
            sig="one or more processes exited with non-zero status",
        ),
        W(
            r"(?P<how>incarnation doesn.t match)",
            _tf(_RESOLVER, "CollectiveParamResolverLocal::CompleteGroupLocal", "TF 2.4-2.21"),
            sig="incarnation doesn.t match",
        ),
        W(
            r"(?P<how>lame workers)",
            _tf("tensorflow/python/tpu/session_support.py", "GracefulShutdownHook.after_run", "TF 1.x-2.15"),
        ),
        W(r"(?P<how>Connection closed by peer)", Origin("launchers (not found in TF's or gRPC's strings)")),
        W(
            r"(?P<how>Connection reset by peer)",
            _grpc("src/core/lib/iomgr/tcp_posix.cc", "tcp_do_read (the OS error ECONNRESET)"),
        ),
        W(r"(?P<how>Socket closed)", _grpc("src/core/lib/iomgr/tcp_posix.cc", "tcp_do_read")),
        W(
            r"(?P<how>\"description\":\"EOF\")",
            _grpc(
                "src/core/lib/iomgr/error.cc",
                "grpc_error_string (JSON errors)",
                "gRPC before about 1.50 (TF up to about 2.11)",
            ),
            sig="description.:.EOF",
        ),
        W(
            r"(?P<how>Horovod has been shut down)",
            Origin(
                "Horovod",
                "horovod/common/common.h",
                "SHUT_DOWN_ERROR",
                "Horovod 0.13-0.28",
                "horovod/horovod",
            ),
        ),
        W(
            r"(?P<how>Error reported to Coordinator: <class '[\w.]*UnavailableError'>)",
            _tf("tensorflow/python/training/coordinator.py", "Coordinator.request_stop", "TF 1.x-2.21"),
            sig="Error reported to Coordinator",
        ),
        tags=("peer_report",),
        tier="general",
        extra=_task_and_remote,
        severity="error",
    ),
    *_kind(
        "tf.sigterm_caught",
        "The process received SIGTERM (TF's preemption notifier logs it): someone asked it to stop.",
        W(
            r"SIGTERM caught",
            _tf(
                "third_party/xla/xla/tsl/distributed_runtime/preemption/preemption_notifier.cc",
                "SigtermNotifier::StartListenerThread",
                "TF 2.11-2.21",
            ),
        ),
        # "received SIGTERM", "received signal 15 (SIGTERM)", "caught signal SIGTERM", "got signal 15".
        W(
            r"(?i)\b(?:received|got|caught)\s+(?:signal\s+15\b|(?:signal\s+)?SIGTERM\b)",
            Origin("launchers and scripts (not found in TF's source)"),
            sig="(?:[Rr]eceived|[Gg]ot|[Cc]aught) (?:signal 15|(?:signal )?SIGTERM)",
        ),
        # PreemptionCheckpointHandler's own watcher, on the member whose own
        # termination signal it caught (it installs its own SIGTERM handler).
        W(
            r"Member \d+ has received termination notice\.|Termination caught in main thread on preempted worker",
            _tf(
                "tensorflow/python/distribute/failure_handling/failure_handling.py",
                "PreemptionCheckpointHandler._maybe_set_received_own_sigterm",
                "TF 2.12-2.21",
            ),
            sig="has received termination notice|Termination caught in main thread on preempted worker",
        ),
    ),
    *_kind(
        "train.loop_ended",
        "An Estimator's train() returned on this worker (its input ended, or it reached max_steps): its training "
        "loop is over, whatever the others do.",
        W(
            r"Loss for final step: (?P<loss>[-+\w.]*\w)",
            Origin(
                "TensorFlow Estimator",
                "tensorflow_estimator/python/estimator/estimator.py",
                "Estimator._train_model",
                "TF 1.x-2.15",
                "tensorflow/estimator",
            ),
            sig="Loss for final step",
        ),
    ),
    *_kind(
        "tf.server_start_failed",
        "The task could not start its gRPC server (its port is taken or cannot be bound).",
        W(
            r"Could not start gRPC server",
            _tf(
                "tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc",
                "GrpcServer::Init",
                "TF 1.x-2.21",
            ),
        ),
        W(
            r"Failed to add port to server(?:: .*? for '(?P<address>[^']+)')?",
            _grpc("src/core/lib/iomgr/tcp_server_posix.cc", "tcp_server_add_port"),
            sig="Failed to add port to server",
        ),
        W(
            r"bind addr=(?P<bind>\S+): Address already in use",
            _grpc("src/core/lib/iomgr/udp_server.cc", "prepare_socket", "TF 1.15's gRPC"),
            sig="Address already in use",
        ),
        W(
            r"No address added out of total \d+ resolved",
            _grpc("src/core/ext/transport/chttp2/server/chttp2_server.cc", "Chttp2ServerAddPort"),
            sig="No address added out of total",
        ),
        W(r"Address already in use", Origin("the OS (strerror EADDRINUSE), relayed by gRPC", eras="all")),
        W(
            r"UNKNOWN: Could not start gRPC server",
            _tf(
                "tensorflow/core/distributed_runtime/rpc/grpc_server_lib.cc",
                "GrpcServer::Init",
                "TF 2.7-2.21",
            ),
            sig="Could not start gRPC server",
        ),
        tags=("in_traceback",),
        severity="error",
    ),
    *_kind(
        "host.bad_alloc",
        "libstdc++'s last words when C++ code cannot get memory (\"terminate called after throwing an instance of "
        "'std::bad_alloc'  what():  std::bad_alloc\").",
        W(
            r"std::bad_alloc",
            Origin("libstdc++", "libstdc++-v3/libsupc++/bad_alloc.cc", "std::bad_alloc::what", "all"),
        ),
        tags=("in_traceback",),
    ),
    *_kind(
        "keras.input_exhausted",
        "Keras when a dataset ends before steps_per_epoch x epochs: it stops training on this worker.",
        W(
            r"Your (?:input|dataset iterator|dataset|generator) ran out of data; interrupting training",
            _keras_everywhere("engine/data_adapter.py", "DataHandler.catch_stop_iteration")[0],
            also=(
                _tf(
                    "tensorflow/python/keras/engine/training_arrays_v1.py",
                    "model_iteration",
                    "TF 1.x-2.5 (graph-mode fit)",
                ),
                *_keras_everywhere("engine/data_adapter.py", "DataHandler.catch_stop_iteration")[1:],
                Origin(
                    "Keras 3",
                    "keras/src/trainers/epoch_iterator.py",
                    "EpochIterator._interrupted_warning",
                    "Keras 3",
                    "keras-team/keras",
                ),
            ),
            sig="Your (input|dataset iterator|dataset|generator) ran out of data",
        ),
        standalone=True,
    ),
    *_kind(
        "script.input_ended",
        "A training script saying in its own words that its input ran out (it caught the end of its "
        'iterator: "input exhausted", "ran out of batches", "no more data"); weaker than the '
        "frameworks' words, read only where the worker then stopped training.",
        W(
            r"\b(?:input|data(?:set|loader)?|iterator|batch(?:es)?|examples|records|shard|generator)\b[^\n]{0,30}?"
            r"\b(?:exhausted|depleted|ran out)\b",
            SCRIPT,
            sig="exhausted|depleted|ran out",
        ),
        W(
            r"\b(?:ran out of|out of|no more)\s+(?:input|data|batches|examples|records)\b",
            SCRIPT,
            sig="(ran out of|out of|no more) +(input|data|batches|examples|records)",
        ),
        tier="general",
    ),
    *_kind(
        "tf.end_of_sequence",
        "An input iterator reached its end (OUT_OF_RANGE).",
        W(
            r"\bEnd of sequence\b",
            _tf(
                "tensorflow/core/kernels/data/iterator_ops.cc", "IteratorGetNextOp::DoCompute", "TF 1.x-2.21"
            ),
            sig="End of sequence",
        ),
        # tf.data's assert_cardinality: the input held fewer elements than declared
        # (declared endless, it ran out).
        W(
            r"Input dataset was expected to contain (?:an infinite number of|\d+) elements? but contained only \d+ elements?",
            _tf(
                "tensorflow/core/kernels/data/experimental/assert_cardinality_dataset_op.cc",
                "AssertCardinalityDatasetOp::Dataset::Iterator::GetNextInternal",
                "TF 2.2-2.21",
            ),
            sig="Input dataset was expected to contain",
        ),
        # A script's own next() on a Python iterator (a batch generator) that ran out,
        # uncaught: the bare exception ends its traceback.
        W(
            r"(?m)^StopIteration\s*$",
            Origin(
                "CPython (builtin next() on an exhausted iterator)",
                "Python/bltinmodule.c",
                "builtin_next",
                "Python 3",
                "python/cpython",
            ),
            sig="StopIteration",
        ),
        tags=("in_traceback",),
    ),
    *_kind(
        "numerics.check_failed",
        "tf.debugging.check_numerics / enable_check_numerics found a NaN or Inf, on the worker that computed it.",
        W(
            r"(?P<message>[^\n:]*?) : Tensor had (?P<values>NaN and Inf|NaN|Inf) values",
            _tf("tensorflow/core/kernels/check_numerics_op.cc", "CheckNumericsOp::Compute", "TF 1.x-2.21"),
            sig="Tensor had (NaN|Inf|NaN and Inf) values",
        ),
        tags=("in_traceback",),
    ),
    *_kind(
        "keras.invalid_loss",
        "Keras' TerminateOnNaN callback stopped training: the loss was NaN or Inf.",
        W(
            r"Batch (?P<batch>\d+): Invalid loss, terminating training",
            _keras_everywhere("callbacks.py", "TerminateOnNaN.on_batch_end")[0],
            also=(
                *_keras_everywhere("callbacks.py", "TerminateOnNaN.on_batch_end")[1:],
                Origin(
                    "Keras 3",
                    "keras/src/callbacks/terminate_on_nan.py",
                    "TerminateOnNaN.on_batch_end",
                    "Keras 3",
                    "keras-team/keras",
                ),
            ),
            sig="Invalid loss, terminating training",
        ),
        standalone=True,
    ),
    *_kind(
        "grpc.message_too_large",
        "gRPC refused a message larger than its limit.",
        W(
            r"(?P<direction>Received|Sent) message larger than max \((?P<size>\d+) vs\. (?P<max>\d+)\)",
            _grpc("src/core/ext/filters/message_size/message_size_filter.cc", "recv_message_ready"),
            sig="(Received|Sent) message larger than max",
        ),
        tags=("in_traceback",),
    ),
    *_kind(
        "tf1.create_session_waiting",
        "A TF1 master waits for a worker it needs to create a session: that worker is not there.",
        W(
            r"CreateSession still waiting for response from worker: (?P<task_name>" + TASK + ")",
            _tf("tensorflow/core/distributed_runtime/master.cc", "DeviceFinder::Wait", "TF 1.x-2.21"),
            sig="CreateSession still waiting for response from worker",
        ),
        extra=_task,
    ),
    *_kind(
        "launcher.exited",
        "docker-compose's own line when a service's container ends.",
        W(
            r"^(?P<service>[\w.-]+) exited with code (?P<code>\d+)\s*$",
            Origin(
                "docker-compose v1",
                "compose/cli/log_printer.py",
                "wait_on_exit",
                "compose 1.x",
                "docker/compose",
            ),
            also=(
                Origin(
                    "docker compose v2",
                    "pkg/compose/printer.go",
                    "printer.HandleEvent",
                    "compose 2.x",
                    "docker/compose",
                ),
            ),
            sig="exited with code [0-9]+",
        ),
        standalone=True,
    ),
    # --- what the platform says when a process dies (shells, kernels, schedulers) ----
    *_kind(
        "kernel.oom_kill",
        "The kernel's OOM killer (dmesg, journalctl -k), pasted into a log or a ticket.",
        W(
            r"Out of memory: Kill(?:ed)? process (?P<pid>\d+)",
            _kernel("__oom_kill_process", "all"),
            sig="Out of memory: Kill",
        ),
        W(r"invoked oom-killer", _kernel("dump_header", "Linux 2.6+")),
        W(r"oom-kill:", _kernel("dump_oom_summary", "Linux 4.19+")),
        W(
            r"Memory cgroup out of memory",
            Origin("Linux kernel", "mm/memcontrol.c", "mem_cgroup_out_of_memory", "all", "torvalds/linux"),
        ),
        W(
            r"oom_reaper: reaped process (?P<reaped>\d+)",
            _kernel("oom_reap_task_mm", "Linux 4.6+"),
            sig="oom_reaper",
        ),
        severity="error",
    ),
    *_kind(
        "k8s.evicted",
        "Kubernetes evicting a pod (kubectl get pods / describe / events).",
        W(
            r"\bEvicted\b",
            Origin(
                "Kubernetes (kubelet)",
                "pkg/kubelet/eviction/helpers.go",
                "evictionMessage",
                "Kubernetes 1.x",
                "kubernetes/kubernetes",
            ),
            sig="Evicted",
        ),
        W(
            r"[Tt]he node was low on resource: (?P<resource>\w+)",
            Origin(
                "Kubernetes (kubelet)",
                "pkg/kubelet/eviction/helpers.go",
                "evictionMessage",
                "Kubernetes 1.x",
                "kubernetes/kubernetes",
            ),
            sig="low on resource",
        ),
        severity="error",
    ),
    *_kind(
        "k8s.oom_killed",
        "Kubernetes' reason for a container the kernel killed for its memory limit.",
        W(
            # (not docker/podman inspect's "OOMKilled": false)
            r"\bOOMKilled\b(?![\"']?\s*[:=]\s*false)",
            Origin(
                "containerd (CRI), reported by Kubernetes",
                "internal/cri/server/helpers.go",
                "oomExitReason",
                "all",
                "containerd/containerd",
            ),
            sig="OOMKilled",
        ),
        severity="error",
    ),
    *_kind(
        "platform.memory_limit",
        "A scheduler, CI or container platform saying it killed the process's container for its memory limit.",
        W(
            r"(?:Container|Service) '(?P<container>[^']+)' exceeded memory limit",
            Origin("Bitbucket Pipelines (step log)", eras="all"),
            sig="exceeded memory limit",
        ),
        W(
            r"Detected \d+ oom[-_]kill events?(?:\(s\))? in",
            Origin(
                "Slurm (slurmstepd)",
                "src/plugins/task/cgroup/task_cgroup_memory.c",
                "task_cgroup_memory_check_oom",
                "Slurm 17-24",
                "SchedMD/slurm",
            ),
            sig="oom.kill event",
        ),
        W(
            r"task \d+: Out Of Memory",
            Origin("Slurm (srun)", "src/srun/launch.c", "_task_finish (oom)", "Slurm 17-24", "SchedMD/slurm"),
            sig="Out Of Memory",
        ),
        W(
            r"Exceeded (?:job|step) memory limit",
            Origin(
                "Slurm (slurmstepd, jobacct_gather)",
                "src/slurmd/slurmstepd/slurmstepd_job.c",
                eras="Slurm 2-17",
                repository="SchedMD/slurm",
            ),
            sig="Exceeded (job|step) memory limit",
        ),
        W(
            r"PBS: job killed: (?:v|p|pv)?mem \d+\w* exceeded limit \d+",
            _PBS_MOM,
            sig="PBS: job killed: (v|p|pv)?mem",
        ),
        W(
            r"is running beyond (?:physical|virtual) memory limits|Container killed by YARN for exceeding memory limits",
            Origin(
                "Apache Hadoop YARN (NodeManager)",
                "hadoop-yarn-project/hadoop-yarn/hadoop-yarn-server/hadoop-yarn-server-nodemanager/src/main/java/"
                "org/apache/hadoop/yarn/server/nodemanager/containermanager/monitor/ContainersMonitorImpl.java",
                "MonitoringThread (formatUsageString)",
                "Hadoop 2-3",
                "apache/hadoop",
            ),
            sig="beyond (physical|virtual) memory limits|killed by YARN for exceeding memory",
        ),
        W(
            r"Failed with result '(?:oom-kill|memory)'",
            Origin(
                "systemd (a unit's result: the kernel's OOM killer or systemd-oomd in its cgroup)",
                "src/core/service.c",
                "service_enter_dead (service_result_to_string: SERVICE_FAILURE_OOM_KILL)",
                "systemd 243+",
                "systemd/systemd",
            ),
            sig="Failed with result '(oom-kill|memory)'",
        ),
        W(
            r"OutOfMemoryError: Container killed due to memory usage",
            Origin("Amazon ECS / AWS Batch (task stopped reason)", eras="all"),
            sig="Container killed due to memory usage",
        ),
        W(
            r"Memory limit of [\d.]+ ?\w+ exceeded with [\d.]+ ?\w+ used",
            Origin("Google Cloud Run / Cloud Functions", eras="all"),
            sig="Memory limit of [0-9.]+ ?[A-Za-z]+ exceeded",
        ),
        W(
            r"Error R15 \(Memory quota vastly exceeded\)",
            Origin("Heroku (router / dyno manager)", eras="all"),
            sig="Memory quota vastly exceeded",
        ),
        severity="error",
    ),
    *_kind(
        "lsf.memlimit",
        "IBM Spectrum LSF's termination reason for a job it killed at its memory (or swap) limit.",
        W(
            r"\bTERM_(?:MEMLIMIT|SWAP)\b",
            Origin(
                "IBM Spectrum LSF (job report, bacct, bhist)",
                "lsbatch.h",
                "termination reasons (TERM_MEMLIMIT 16, TERM_SWAP 20)",
                "LSF 7-10",
            ),
            sig="TERM_",
        ),
        severity="error",
    ),
    *_kind(
        "shell.killed",
        'A shell\'s word for a child killed by SIGKILL ("Killed", "line 1: 1234 Killed  python ...").',
        W(
            r"^(?:[^\n]*: line \d+: +\d+ )?Killed(?:\s+\S[^\n]*)?\s*$",
            Origin("bash", "jobs.c", "notify_of_job_status", "all", "bminor/bash"),
            sig="Killed",
        ),
        standalone=True,
        severity="error",
    ),
    *_kind(
        "proc.script_missing",
        "The worker's script could not even start (a file missing from the image).",
        W(
            r"can't open file '(?P<script>[^']+)': \[Errno 2\] No such file or directory",
            Origin("CPython", "Modules/main.c", "pymain_run_file_obj", "Python 3.x", "python/cpython"),
            sig="can't open file '",
        ),
        severity="error",
    ),
    *_kind(
        "proc.crashed",
        "Native crashes: the process ends without a Python traceback.",
        W(
            r"(?P<crash>Segmentation fault)",
            Origin("bash", "jobs.c", "notify_of_job_status (strsignal)", "all", "bminor/bash"),
        ),
        W(
            r"(?P<crash>Fatal Python error: \w+)",
            Origin(
                "CPython",
                "Modules/faulthandler.c",
                "faulthandler_fatal_error",
                "Python 3.3+",
                "python/cpython",
            ),
            sig="Fatal Python error",
        ),
        W(
            r"(?P<crash>\*\*\* SIG[A-Z]+)",
            Origin(
                "absl's failure signal handler (linked into TF)",
                "absl/debugging/failure_signal_handler.cc",
                "WriteFailureInfo",
                "TF 2.x",
                "abseil/abseil-cpp",
            ),
            sig="[*][*][*] SIG[A-Z]",
        ),
        W(
            r"(?P<crash>Aborted \(core dumped\))",
            Origin("bash", "jobs.c", "notify_of_job_status (strsignal)", "all", "bminor/bash"),
            sig="core dumped",
        ),
        W(
            r"(?P<crash>\*\*\* Error in `[^`]+': [^*]+)",
            Origin("glibc", "malloc/malloc.c", "malloc_printerr", "glibc 2.26 and before", "bminor/glibc"),
            sig="[*][*][*] Error in",
        ),
        W(
            r"(?P<crash>double free or corruption)",
            Origin("glibc", "malloc/malloc.c", "malloc_printerr", "all", "bminor/glibc"),
        ),
        W(
            r"(?P<crash>stack smashing detected)",
            Origin("glibc", "debug/stack_chk_fail.c", "__stack_chk_fail", "all", "bminor/glibc"),
        ),
        W(r"(?P<crash>core dumped)", Origin("bash", "jobs.c", "notify_of_job_status", "all", "bminor/bash")),
        W(
            r"(?P<crash>[Ss]ignal: (?:killed|terminated|aborted|segmentation fault))",
            Origin(
                "Go's os/exec (container tools)",
                "src/os/exec_posix.go",
                "ProcessState.String",
                "all",
                "golang/go",
            ),
            sig="[Ss]ignal: (killed|terminated|aborted|segmentation)",
        ),
        W(
            r"(?P<crash>(?:[Kk]illed|[Tt]erminated) by signal (?:SIG)?\w+)",
            Origin(
                "Slurm and other launchers",
                "src/slurmd/slurmstepd/mgr.c",
                "_wait_for_any_task",
                "Slurm",
                "SchedMD/slurm",
            ),
            sig="[Kk]illed by signal|[Tt]erminated by signal",
        ),
        tier="general",
        severity="error",
    ),
    *_kind(
        "proc.exit_code",
        "An exit status a launcher, scheduler or shell printed (not 0).",
        W(
            r"(?i)\b(?:exit(?:ed)?(?: with)?(?: exit)? (?:code|status)|exit_?code|returned non-zero exit status"
            r"|terminated with exit code)\b[\s:=]*(?P<code>-?[1-9]\d*)\b",
            Origin("Slurm (srun), CPython (subprocess), docker-compose, Kubernetes operators", eras="all"),
            sig="[Ee][Xx][Ii][Tt](_|[Ee][Dd])?( [Ww][Ii][Tt][Hh])?( [Ee][Xx][Ii][Tt])? ?([Cc][Oo][Dd][Ee]|[Ss][Tt][Aa][Tt][Uu][Ss])"
            "|non-zero exit status",
        ),
        tier="general",
        severity="error",
    ),
    *_kind(
        "sched.cancelled",
        "A batch scheduler's record, in the task's own output, that it stopped the task from outside (its time "
        "limit, a preemption, a cancel): said as the job was stopped, never the task's own last words.",
        W(
            SLURM_CANCELLED,
            Origin(
                "Slurm (slurmstepd)",
                "src/slurmd/slurmstepd/req.c",
                "_handle_signal_container",
                "Slurm 2-24",
                "SchedMD/slurm",
            ),
            sig="CANCELLED AT",
        ),
        W(
            r"PBS: job killed: (?P<why>walltime|cput|ncpus) \d+ exceeded limit \d+",
            _PBS_MOM,
            sig="PBS: job killed: (walltime|cput|ncpus)",
        ),
        W(
            r"Job step aborted: Waiting up to \d+ seconds for job step to finish",
            Origin(
                "Slurm (srun)",
                "src/api/step_launch.c",
                "slurm_step_launch_wait_finish",
                "Slurm 2-24",
                "SchedMD/slurm",
            ),
            sig="Job step aborted: Waiting up to",
        ),
        W(
            r"^timeout: sending signal (?P<why>\w+) to command",
            Origin(
                "GNU coreutils timeout (--verbose)",
                "src/timeout.c",
                "cleanup",
                "coreutils 8.x-9.x",
                "coreutils/coreutils",
            ),
            sig="timeout: sending signal",
        ),
        tags=("stop_order",),
    ),
    # --- progress a training script prints ---------------------------------------
    *_kind(
        "train.step",
        'A step of a custom loop or a TF1 estimator: "epoch 3/10 step 120 loss=0.41", "[step 120] loss 0.41", '
        '"Step 120: loss = 0.41 (0.2 s)", "INFO:tensorflow:loss = 3.72, step = 10300 (50.581 sec)".',
        W(
            # (a named loss too: "step=0 local_loss=3.36")
            r"(?i)\b(?:global_)?step\b[\s:=#\[]*\d+(?!\d|\.\d)(?:\s*/\s*\d+)?[^\n]{0,80}?(?:\b|_)(?:loss|took|time|secs?|seconds|s/step|ms|examples)\b",
            SCRIPT,
            sig=r"[Ss][Tt][Ee][Pp]( |:|=|#|\[)*[0-9]",
        ),
        W(
            r"(?i)\bloss\b\s*[=:]\s*[-+\w.]+,?\s*(?:global_)?step\s*[=:]\s*\d+",
            Origin(
                "TensorFlow (TF1 LoggingTensorHook and Estimator)",
                "tensorflow/python/training/basic_session_run_hooks.py",
                "LoggingTensorHook._log_tensors",
                "TF 1.x-2.15",
                "tensorflow/tensorflow",
            ),
            sig="[Ll][Oo][Ss][Ss] *[=:] *[^ ,]*,? *([Gg][Ll][Oo][Bb][Aa][Ll]_)?[Ss][Tt][Ee][Pp] *[=:]",
        ),
        tags=("progress",),
        tier="general",
        extra=_progress,
        frequent=True,
    ),
    *_kind(
        "train.epoch",
        'A script\'s epoch line without a step: "epoch 3/3 done: mean loss 0.46", "Epoch 2/10 - loss ...".',
        W(
            r"(?i)\bepoch\b\s*[:#]?\s*(?P<epoch>\d+)\s*/\s*(?P<epochs>\d+)\b(?![^\n]*\bstep\b)",
            SCRIPT,
            sig="[Ee][Pp][Oo][Cc][Hh][ :#]*[0-9]+ */ *[0-9]+",
        ),
        # An epoch's own line with its loss but no total: "epoch 1 done [loss=2.2072]", "Epoch 3: loss 0.41",
        # "epoch 1 done: 20 steps, mean loss 4.57" (a count of steps is no step: "step 20" is train.step's).
        W(
            # (a finite loss: a loss that is not finite is train.loss_not_finite's)
            r"(?i)\bepoch\b[ :#=]*(?P<epoch>\d+)\b(?![^\n]*\bstep\b[\s:=#\[]*\d)(?![^\n]*(?:\b|_)loss\b *[=:]? *[-+]?(?:nan|inf))"
            # (a named loss too: "epoch 1 complete avg_loss=5.34")
            r"[^\n]*?(?:\b|_)loss\b *[=:]? *[-+]?\d",
            SCRIPT,
            sig="[Ee][Pp][Oo][Cc][Hh][ :#=]*[0-9]+.*[Ll][Oo][Ss][Ss] *[=:]? *[-+]?[0-9]",
        ),
        tags=("progress",),
        tier="general",
        extra=_epoch_fields,
        frequent=True,
    ),
    *_kind(
        "train.loss_not_finite",
        'A loss reported as not finite in any words ("loss is NaN.", Keras bars with unknown totals).',
        W(
            r"(?i)\bloss\b\s*(?:is|became|was|=|:)\s*(?P<value>nan|inf)\b",
            SCRIPT,
            sig="[Ll][Oo][Ss][Ss] *(is|became|was|=|:) *([Nn][Aa][Nn]|[Ii][Nn][Ff])",
        ),
        W(
            r"\bNaN loss\b",
            _tf(
                "tensorflow/python/training/basic_session_run_hooks.py",
                "NanTensorHook.after_run",
                "TF 1.x-2.21",
            ),
            sig="NaN loss",
        ),
        W(r"non-finite loss", SCRIPT),
        tier="general",
        severity="error",
    ),
    *_kind(
        "keras.callback_slow",
        "Keras measured this worker's callbacks at a batch hook taking longer than the batch itself"
        " (checked over the first batches of fit): work of the script's own between the steps.",
        W(
            r"Callback method `(?P<hook>\w+)` is slow compared to the batch time \(batch time: "
            r"(?P<batch_time>[\d.]+)s vs `\w+` time: (?P<hook_time>[\d.]+)s\)",
            _keras_everywhere("callbacks.py", "CallbackList._check_timing")[0],
            also=_keras_everywhere("callbacks.py", "CallbackList._check_timing")[1:],
            sig="Callback method `[A-Za-z_]+` is slow compared to the batch time",
        ),
        # TF 2.0-2.3's tf.keras and Keras 2.x before them: the hook's median time only.
        W(
            r"Method \(?(?P<hook>\w+)(?:\(\))?\)? is slow compared to the batch update \((?P<hook_time>[\d.]+)\)",
            _tf("tensorflow/python/keras/callbacks.py", "CallbackList._call_batch_hook", "TF 1.14-2.2"),
            also=(
                Origin(
                    "Keras 2",
                    "keras/callbacks.py",
                    "CallbackList._call_batch_hook",
                    "keras 2.0-2.3",
                    "keras-team/keras",
                ),
            ),
            sig="is slow compared to the batch update",
        ),
        # A warning among other words (glued to a progress bar): what else the record says comes first.
        tier="general",
        severity="warning",
    ),
    *_kind(
        "oom.resource_exhausted",
        "TF's exception for an allocation that failed, when its message (which the specific messages read) was "
        "cut off, as in a notebook's traceback.",
        W(
            r"\bResourceExhaustedError\b",
            _tf("tensorflow/python/framework/errors_impl.py", "ResourceExhaustedError", "TF 1.x-2.21"),
            sig="ResourceExhaustedError",
        ),
        tags=("in_traceback",),
        tier="general",
    ),
    *_kind(
        "oom.generic",
        'Memory run out, in words no specific message knows ("Internal: out of memory", "The replica master 0 '
        'ran out-of-memory").',
        W(
            r"(?i)\b(?:ran )?out[- ]of[- ]memory\b",
            Origin("various (any program's words)", eras="all"),
            sig="[Oo]ut[- ]of[- ][Mm]emory",
        ),
        tags=("in_traceback",),
        tier="general",
        severity="error",
    ),
    # --- known harmless, though printed at warning or error level ------------------
    *_kind(
        "benign.plugin_factory",
        "TF 2.14+ registers the CUDA plugins twice when both TF and XLA load them; E-level, harmless",
        W(
            r"Unable to register (?:cuDNN|cuFFT|cuBLAS) factory: Attempting to register factory for plugin",
            _tf(
                "third_party/xla/xla/stream_executor/cuda/cuda_dnn.cc",
                "initialize_cudnn (and cuBLAS, cuFFT)",
                "printed mainly in TF 2.14-2.17",
            ),
            sig="Unable to register cu(DNN|FFT|BLAS) factory",
            seen=("tensorflow/tensorflow#62075 (maintainers: a known, harmless log message)",),
        ),
        benign="TF 2.14+ registers the CUDA plugins twice when both TF and XLA load them; E-level, harmless",
    ),
    *_kind(
        "benign.end_of_sequence_rendezvous",
        "TF 2.10+ logs the end of a finite dataset at every epoch end while training goes on",
        W(
            r"Local rendezvous is aborting with status: OUT_OF_RANGE: End of sequence",
            _tf(
                "tensorflow/core/framework/local_rendezvous.cc", "LocalRendezvous::StartAbort", "TF 2.16-2.21"
            ),
            sig="Local rendezvous is aborting with status: OUT_OF_RANGE",
            seen=("tensorflow/tensorflow#62963 (the W/I-level line at epoch ends; training continues)",),
        ),
        W(
            r"\[_Derived_\]\s*OUT_OF_RANGE: End of sequence",
            _tf("tensorflow/core/framework/local_rendezvous.cc", "LocalRendezvous::StartAbort", "TF 2.x"),
            sig="OUT_OF_RANGE: End of sequence",
        ),
        benign="TF 2.10+ logs the end of a finite dataset at every epoch end while training goes on",
    ),
    *_kind(
        "benign.interpreter_exit",
        "A Python generator dataset's iterator destroyed as the interpreter finalizes: the process is exiting "
        "in an orderly way (no kill does this), after everything it printed.",
        W(
            r"Error occurred when finalizing GeneratorDataset iterator: FAILED_PRECONDITION: Python interpreter "
            r"state is not initialized",
            _tf(
                "tensorflow/core/kernels/data/generator_dataset_op.cc (status from tensorflow/python/lib/core/py_func.cc)",
                "GeneratorDatasetOp::Dataset::Iterator::~Iterator",
                "TF 2.2-2.21",
            ),
            sig="Error occurred when finalizing GeneratorDataset iterator",
        ),
        tier="specific",
        benign="printed at interpreter exit when a tf.data generator is still open; harmless",
    ),
    *_kind(
        "benign.cpu_instructions",
        "build notices printed at every start",
        W(
            r"This TensorFlow binary is optimized to use available CPU instructions",
            _tf(
                "tensorflow/core/platform/cpu_feature_guard.cc", "InfoAboutUnusedCPUFeatures", "TF 2.12-2.21"
            ),
            sig="binary is optimized to use available CPU",
        ),
        W(
            r"This TensorFlow binary is optimized with oneAPI Deep Neural Network Library \(oneDNN\)"
            r" to use the following CPU instructions",
            _tf("tensorflow/core/platform/cpu_feature_guard.cc", "InfoAboutUnusedCPUFeatures", "TF 2.3-2.11"),
            sig="optimized with oneAPI Deep Neural Network Library",
        ),
        W(
            r"Your CPU supports instructions that this TensorFlow binary was not compiled to use",
            _tf("tensorflow/core/platform/cpu_feature_guard.cc", "InfoAboutUnusedCPUFeatures", "TF 1.x-2.2"),
            sig="Your CPU supports instructions",
        ),
        W(
            r"oneDNN custom operations are on",
            _tf("tensorflow/core/util/port.cc", "IsMklEnabled", "TF 2.9-2.21"),
            sig="oneDNN custom operations",
        ),
        benign="build notices printed at every start",
    ),
    *_kind(
        "benign.tensorrt_missing",
        "TensorRT is optional; TF warns when it is absent",
        W(
            r"TF-TRT Warning: Could not find TensorRT",
            _tf(
                "tensorflow/compiler/tf2tensorrt/utils/py_utils.cc",
                "IsGoogleTensorRTEnabled",
                "GPU builds about 2.12-2.17",
            ),
            seen=("tensorflow/tensorflow#61468",),
        ),
        benign="TensorRT is optional; TF warns when it is absent",
    ),
    *_kind(
        "benign.cuda_library_missing",
        "on a machine without a GPU (or where none is meant to be used) TF falls back to the CPU",
        W(
            r"Could not load dynamic library '(?:libcudart|libcublas|libcudnn|libcufft|libcurand|libcusolver"
            r"|libcusparse|libnvinfer|libnvinfer_plugin)[^']*'",
            _tf(
                "third_party/xla/third_party/tsl/tsl/platform/default/dso_loader.cc",
                "GetDsoHandle",
                "TF 1.x-2.21",
            ),
            sig="Could not load dynamic library",
        ),
        W(
            r"Cannot dlopen some GPU libraries",
            _tf(
                "tensorflow/core/common_runtime/gpu/gpu_device.cc",
                "BaseGPUDeviceFactory::GetValidDeviceIds",
                "TF 1.14-2.21",
            ),
        ),
        W(
            r"Could not find cuda drivers on your machine, GPU will not be used",
            _tf(
                "third_party/xla/third_party/tsl/tsl/cuda/cudart_stub.cc",
                "(static initializer)",
                "TF 2.13-2.21",
            ),
            sig="Could not find cuda drivers",
        ),
        benign="on a machine without a GPU (or where none is meant to be used) TF falls back to the CPU",
    ),
    # A structured log entry pasted field by field (Cloud Logging, a JSON
    # logger): its level field says how the entry was filed (stderr is filed
    # as ERROR), not what happened; what happened is its message field, which
    # is read on its own line.
    *_kind(
        "benign.cloud_logging_severity",
        "a log entry's level field alone: Cloud Logging and JSON loggers file whatever a process writes to stderr "
        "as ERROR (TF logs INFO there); the entry's message says what happened",
        W(
            r'^\s*"?(?:severity|levelname|levelName|level|log_?level)"?\s*[:=]\s*"?\**'
            r'(?:ERROR|WARNING|WARN|CRITICAL|FATAL)\**"?,?\s*$',
            Origin("log routers (Cloud Logging, JSON loggers), not TensorFlow", eras="all"),
            sig='(severity|levelname|levelName|level|log_?level)"? *[:=] *"?[*]*(ERROR|WARNING|WARN|CRITICAL|FATAL)',
            seen=(
                "tensorflow/tensorflow#48010 (an ERROR entry every step whose payload is an INFO line; its severity "
                "and jsonPayload.levelname fields both say ERROR)",
            ),
        ),
        benign="a log entry's level field alone: Cloud Logging and JSON loggers file whatever a process writes to "
        "stderr as ERROR (TF logs INFO there); the entry's message says what happened",
    ),
    *_kind(
        "benign.cuinit",
        "cuInit fails on a machine without a GPU; TF then runs on the CPU",
        W(
            r"failed call to cuInit",
            _tf(
                "third_party/xla/xla/stream_executor/cuda/cuda_driver.cc",
                "GpuDriver::Init",
                "TF 1.x-2.21, GPU-enabled builds",
            ),
            seen=("recorded on this project's CPU machines (TF 2.21)",),
        ),
        benign="cuInit fails on a machine without a GPU; TF then runs on the CPU",
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
        # (Python's exception for it, and the words as a logfmt writer quotes them: "Connection_refused")
        r"Connection[ _]refused|ECONNREFUSED|ConnectionRefusedError",
        ("grpc", "echo", "clue:firewall_blocked", "scan:grpc"),
        _OS,
        grpc_reason="connection_refused",
        errno=111,
        sig="Connection[ _]refused|ConnectionRefusedError",
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
        "horovod_shut_down",
        r"Horovod has been shut down",
        ("peer_lost", "echo", "clue:peer_died"),
        Origin(
            "Horovod", "horovod/common/common.h", "SHUT_DOWN_ERROR", "Horovod 0.13-0.28", "horovod/horovod"
        ),
    ),
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
    # Words a rule reads in an exception's message.
    Phrase(
        "tf_config_validation",
        r"exceeds the maximum id of|not found in cluster_spec|Unrecognized task_type"
        r"|There must be at most one '(?:chief|evaluator)' job|Disallowed task type found in cluster spec"
        r"|There is no id for task_type",
        ("tf_config_error",),
        _tf("tensorflow/python/distribute/multi_worker_util.py", "_validate_cluster_spec", "TF 2.x"),
    ),
    Phrase(
        "tf1_cluster_validation",
        r"was not defined in job|is not a valid task_id|task type must be|is not in the cluster_spec",
        ("tf_config_error",),
        _tf("tensorflow/python/training/server_lib.py", "ClusterSpec.task_address, Server", "TF 1.x"),
    ),
    Phrase(
        "cluster_config_words",
        r"cluster_spec|TF_CONFIG|ClusterSpec|task_index|must have a chief|no chief",
        ("tf_config_error",),
        Origin("TensorFlow and Estimator (run_config.py), in their configuration errors", eras="all"),
    ),
    Phrase(
        "stack_module_missing",
        r"No module named '(?:tf_keras|keras|tensorflow|google\.protobuf|tensorboard|h5py)[.'\w]*"
        r"|module '(?:tf_keras|keras|tensorflow)[\w.]*' has no attribute"
        r"|cannot import name '[^']+' from '(?:tf_keras|keras|tensorflow)"
        r"|No module named '?tensorflow_(?:transform|estimator|hub|addons|io|text|datasets)",
        ("stack_mismatch",),
        Origin("CPython's import system, naming TensorFlow's stack", "Python/import.c", eras="all"),
    ),
    Phrase(
        "keras_lazy_loader",
        r"Keras cannot be imported\. Check that it is installed"
        r"|TF_USE_LEGACY_KERAS set to True, but you do not have the tf_keras package installed",
        ("stack_mismatch",),
        _tf("tensorflow/python/util/lazy_loader.py", "KerasLazyLoader._initialize", "TF 2.16-2.21"),
    ),
    Phrase(
        "protobuf_descriptors",
        r"Descriptors cannot (?:not )?be created directly",
        ("stack_mismatch",),
        Origin(
            "protobuf (Python)",
            "python/google/protobuf/descriptor.py",
            "_Deprecated",
            "protobuf 4.21+",
            "protocolbuffers/protobuf",
        ),
    ),
    Phrase(
        "keras3_words",
        r"Keras 3|keras 3|KerasTensor cannot be used as input to a TensorFlow function",
        ("stack_mismatch",),
        Origin("Keras 3 under TF 2.16+", eras="TF 2.16-2.21", repository="keras-team/keras"),
    ),
    Phrase(
        "keras_deserialize",
        r"Could not deserialize \w+ '[^']*' because its parent module [\w.]+ cannot be imported",
        ("stack_mismatch",),
        Origin(
            "Keras 3",
            "keras/src/saving/serialization_lib.py",
            "_retrieve_class_or_fn",
            "Keras 3",
            "keras-team/keras",
        ),
    ),
    Phrase(
        "version_requirement",
        r"incompatible with (?:tensorflow|keras|protobuf)|requires (?:tensorflow|protobuf)[<>=]",
        ("stack_mismatch",),
        Origin("pip and packages checking their requirements", eras="all"),
    ),
    # A script's own check that stops on a non-finite loss ("ValueError: loss is
    # nan at step 15", "RuntimeError: NaN loss detected").
    Phrase(
        "nonfinite_check",
        r"\b(?:loss|gradient|grad|grads)\b[^\n]{0,40}\b(?:nan|inf|not finite|non-finite)\b"
        r"|\b(?:nan|inf|non-finite)\b[^\n]{0,20}\b(?:loss|gradient)",
        ("nonfinite",),
        SCRIPT,
    ),
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
    """The kinds of the messages with this tag, each once, in catalogue order."""
    return tuple(dict.fromkeys(m.kind for m in MESSAGES if tag in m.tags))


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

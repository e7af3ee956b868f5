"""The environment a job ran in: the ``env`` table.

Two kinds of evidence feed it:

* files beside the logs, recognised by content (:func:`sniff_env`), never by
  name alone: ``pip freeze`` / ``pip list``, ``env`` / ``printenv`` dumps (only
  the variables that matter to TF; TF_CONFIG parsed into keys), a TF_CONFIG
  JSON file, ``nvidia-smi``, kernel logs with the OOM killer's lines, and
  ``kubectl describe pod`` with its container states and exit codes;
* version facts the workers print themselves (:func:`env_rows_from_events`).

Secrets never reach the table: a kept variable whose name or value looks
secret is stored as ``<redacted>`` with ``redacted=true``.
"""

from __future__ import annotations

import ast
import contextlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from ..inputs import key_hint, name_hint
from ..tables import ENV
from .exit_status import shell_code
from .messages import SLURM_CANCELLED
from .templates import TEMPLATES

REDACTED = "<redacted>"
HEAD_BYTES = 8192  # how much of a file sniff_env is meant to see

# Environment variables worth keeping: what TF, CUDA, NCCL, gRPC and the OpenMP
# runtimes read. Everything else (PATH, HOME, cloud credentials ...) is dropped.
_KEEP = re.compile(
    r"^(?:TF_\w*|CUDA\w*|NCCL_\w*|GRPC_\w*|PYTHON\w*|KMP_\w*|OMP_\w*|LD_LIBRARY_PATH|XLA_\w*|"
    r"NVIDIA_\w*|KERAS_\w*|TPU_\w*|MALLOC_\w*|CUDNN\w*)$"
)
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|PRIVATE", re.I)
_SECRET_VALUE = re.compile(
    r"^(?:gh[pousr]_\w{20,}|github_pat_\w{20,}|hf_\w{20,}|sk-[\w\-]{20,}|xox[abpr]-[\w\-]{10,}"
    r"|AKIA[0-9A-Z]{16}|eyJ[\w\-]{10,}\.[\w\-]{10,}\.[\w\-]*|ya29\.[\w\-]+)"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
    r"|://[^/\s:@]+:[^/\s@]+@"  # credentials inside a URL
)
_LONG_TOKEN = re.compile(r"^[A-Za-z0-9_\-+=]{32,}$")

# A syslog or journald line's own prefix, before the program's line: "Nov 24 19:00:39 node-2 python3[18611]: ".
_SYSLOG = r"(?:\w{3}\s+\d+ \d{2}:\d{2}:\d{2} \S+ [\w.@/-]+(?:\[\d+\])?: )?"
_ABSL_LINE = re.compile(
    r"^" + _SYSLOG + r"[DIWEF]\d{4} \d{2}:\d{2}:\d+(?:\.\d+)?\s+\d+ [\w.\-/]+:\d+\]", re.M
)
_TF_DATE_LINE = re.compile(r"^" + _SYSLOG + r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?: [DIWEF] ", re.M)
_LOG_MARKERS = re.compile(
    r"^(?:Traceback \(most recent call last\)|WARNING: All log messages before absl|INFO:tensorflow:"
    r"|Epoch \d+/\d+$)",
    re.M,
)
_ENV_LINE = re.compile(r"^(?:declare -x |export )?(?P<key>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.*)$")
# A logfmt line (``ts=... level=info event=train step=5``): a program's log, not
# one variable per line, however much it looks like ``KEY=value``.
_LOGFMT_LINE = re.compile(r"^(?:\w+=(?:\"[^\"]*\"|\S*)\s+){2,}\w+=")
_FREEZE_LINE = re.compile(
    r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._\-]*)(?:\[[^\]]*\])?\s*(?:(?:===?|~=)\s*(?P<ver>\S+)|\s+@\s+(?P<url>\S+))"
)
_EDITABLE = re.compile(r"^-e\s+(?P<url>\S+#egg=(?P<egg>[\w.\-]+))")
_PIP_LIST_HEAD = re.compile(r"^Package\s+Version(?:\s+.*)?$")
_PIP_LIST_RULE = re.compile(r"^-{3,}(?:\s+-{3,})+\s*$")
_KERNEL_LINE = re.compile(
    r"^(?:\[\s*\d+\.\d+\]|\[\w{3} \w{3}\s+\d+ [\d:]+ \d{4}\]|\w{3}\s+\d+ [\d:]+ \S+ kernel:"
    r"|\d{4}-\d{2}-\d{2}T[\d:,.]+[+\-]\d{2}:?\d{2} )"
)
_OOM_HINT = re.compile(r"Out of memory|oom-kill|invoked oom-killer|oom_reaper|NVRM: Xid", re.I)


@dataclass
class EnvRead:
    """The rows of one env file, and the task it says it belongs to (if it does)."""

    rows: list[dict[str, object]] = field(default_factory=list)
    task: str | None = None

    def for_worker(self, worker: str) -> list[dict[str, object]]:
        """The rows, attributed to ``worker`` unless a row names its own (a
        scheduler's record speaks of every task of the job)."""
        return [
            {**row, "worker": worker if row.get("worker") in (None, "?") else row["worker"]}
            for row in self.rows
        ]


# --- sniffing --------------------------------------------------------------------------


SNIFF_TOP = 16 * 1024  # bytes of a file's head that say what kind of file it is
# The worker a fact of the whole job is filed under (every task's).
JOB_WIDE = "?job"


def _lines(head: str, limit: int = 40) -> list[str]:
    return [ln.rstrip("\r") for ln in head.splitlines()[:limit] if ln.strip()]


def looks_like_worker_log(head: str) -> bool:
    """A TF worker's log: absl / TF date headers, a traceback, TF's Python logging."""
    return bool(_ABSL_LINE.search(head) or _TF_DATE_LINE.search(head) or _LOG_MARKERS.search(head))


def _share(lines: list[str], pattern: re.Pattern[str]) -> float:
    return sum(1 for ln in lines if pattern.match(ln)) / len(lines) if lines else 0.0


def sniff_env(head: str, name: str) -> str | None:
    """The kind of env file ``head`` (its first bytes) opens, or None.

    Kinds: tf_config, nvidia_smi, k8s_pod, k8s_pods, compose_ps, joblog, exit_list, k8s_pod_status, ci_steps, pssh, docker_inspect, aws_batch, run_record, condor_userlog, compose, nomad_status, sacct, k8s_events, kernel, slurm,
    pip_list, pip_freeze, env_dump.
    A worker log is never one, whatever its name."""
    lines = _lines(head)
    if not lines:
        return None
    lname = name.lower().rsplit("/", 1)[-1]
    # What names a file's kind is at its top; regex searches over the whole
    # sniffed head cost milliseconds a file, which a 1000-file job feels.
    top = head[:SNIFF_TOP]
    if "NVIDIA-SMI" in top or "==============NVSMI LOG" in top:
        return "nvidia_smi"
    if _share(lines, re.compile(r"^(?:srun|slurmstepd|salloc|sbatch)(?:-\d+)?: ")) >= 0.5:
        return "slurm"
    if _is_k8s_describe(top):
        return "k8s_pod"
    if _K8S_EVENTS_HEAD.match(lines[0]):
        return "k8s_events"
    if any(_K8S_GET_PODS_HEAD.match(ln) for ln in lines[:2]) and (
        lines[0].startswith(("NAME", "NAMESPACE")) or "kubectl" in lines[0]
    ):
        return "k8s_pods"
    if _COMPOSE_PS_HEAD.match(lines[0]) or (
        lines[0].startswith("$") and len(lines) > 1 and _COMPOSE_PS_HEAD.match(lines[1])
    ):
        return "compose_ps"  # (after the command that printed it, as a terminal shows it)
    if _JOBLOG_HEAD.match(lines[0]):
        return "joblog"
    if _exit_list(lines, lname):
        return "exit_list"
    # A host's journal holds the worker's own lines beside the kernel's: it
    # is that worker's log (its kernel lines, an OOM kill, are read in it);
    # so is a worker's log behind ISO stamps (podman logs --timestamps), which
    # dmesg's --time-format=iso shares.
    if looks_like_worker_log(top):
        return None
    kernel_share = _share(lines, _KERNEL_LINE)
    if kernel_share >= 0.5:
        return "kernel"
    if ("dmesg" in lname or "kern" in lname or "journal" in lname) and _OOM_HINT.search(head):
        return "kernel"
    if top.lstrip()[:1] in "[{" and '"OOMKilled"' in top and '"ExitCode"' in top:
        return "docker_inspect"
    if top.lstrip()[:1] == "{" and ('"jobArn"' in top or '"taskArn"' in top) and '"exitCode"' in head:
        return "aws_batch"
    if _POD_STATUS_KIND.search(top) and "containerStatuses" in head:
        return "k8s_pod_status"
    if _ci_steps(head):
        return "ci_steps"
    if sum(bool(_PSSH.match(ln)) for ln in lines) >= 1 and all(
        _PSSH.match(ln) or ln.startswith(("$", "#")) or _PSSH_DETAIL.match(ln) for ln in lines
    ):
        return "pssh"
    if _run_record(head) is not None:
        return "run_record"
    if _CONDOR_EVENT.match(lines[0]):
        return "condor_userlog"
    if _COMPOSE_SERVICES.search(top) and "TF_CONFIG" in head:
        return "compose"
    if _NOMAD_ID.match(lines[0]) and ("Client Status" in head or "Node Events" in head):
        return "nomad_status"
    if _sacct(top):
        return "sacct"
    if lines[0].lstrip().startswith("{") and _tf_config_json(head) is not None:
        return "tf_config"
    if _PIP_LIST_HEAD.match(lines[0]) and len(lines) > 1 and _PIP_LIST_RULE.match(lines[1]):
        return "pip_list"
    body = [ln for ln in lines if not ln.startswith("#")]
    if body and _share(body, _FREEZE_LINE) >= 0.8 and (len(body) >= 2 or "freeze" in lname):
        return "pip_freeze"
    if (
        _share(lines, _ENV_LINE) >= 0.8
        and (len(lines) >= 3 or "env" in lname)
        and _share(lines, _LOGFMT_LINE) < 0.5
    ):
        return "env_dump"
    return None


def _is_k8s_describe(head: str) -> bool:
    return bool(re.search(r"^Name:\s+\S+", head, re.M)) and bool(
        re.search(r"^(?:Namespace|Containers|Node):", head, re.M)
    )


# --- redaction ---------------------------------------------------------------------------


def is_secret(key: str, value: str) -> bool:
    """A name or value that looks like a credential."""
    if _SECRET_NAME.search(key.rsplit(".", 1)[-1]) or _SECRET_NAME.search(key.split(".", 1)[0]):
        return True
    v = value.strip().strip("'\"")
    if _SECRET_VALUE.search(v):
        return True
    return bool(_LONG_TOKEN.match(v) and re.search(r"\d", v) and re.search(r"[A-Za-z]", v))


def _row(
    kind: str, key: str, value: str | None, line: int | None, source: str, worker: str = "?"
) -> dict[str, object]:
    """One env fact; ``worker``: whose, where the record itself says (else the
    caller's ``EnvRead.for_worker`` settles it)."""
    redacted = value is not None and kind in ("env_var", "tf_config") and is_secret(key, value)
    return {
        "worker": worker,
        "source": source,
        "line": line,
        "kind": kind,
        "key": key,
        "value": REDACTED if redacted else value,
        "redacted": redacted,
    }


# --- TF_CONFIG ----------------------------------------------------------------------------


def _tf_config_json(text: str) -> dict[str, object] | None:
    """A TF_CONFIG as JSON, or as the Python dict a script printed (``{'cluster': ...}``)."""
    for loader in (json.loads, ast.literal_eval):
        try:
            value = loader(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, dict) and ("cluster" in value or "task" in value):
            return value
    return None


load_tf_config = _tf_config_json


def tf_config_rows(raw: str, line: int | None, source: str) -> tuple[list[dict[str, object]], str | None]:
    """``TF_CONFIG.cluster.<role>`` (a JSON list), ``TF_CONFIG.task.type`` / ``.index`` ..."""
    spec = _tf_config_json(raw.strip().strip("'"))
    if spec is None:
        return [_row("tf_config", "TF_CONFIG", raw, line, source)], None
    rows: list[dict[str, object]] = []
    for key, value in _flatten("TF_CONFIG", spec):
        rows.append(_row("tf_config", key, value, line, source))
    task = spec.get("task")
    hint = None
    if isinstance(task, dict) and "type" in task and str(task.get("index", "")).isdigit():
        role = "chief" if task["type"] == "master" else str(task["type"])
        hint = f"{role}:{int(str(task['index']))}"
    return rows, hint


def _flatten(prefix: str, value: object) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _flatten(f"{prefix}.{k}", v)
    elif isinstance(value, list):
        yield prefix, json.dumps(value)
    else:
        yield prefix, str(value) if not isinstance(value, bool) else str(value).lower()


# --- the file readers ------------------------------------------------------------------------


def _read_pip_freeze(text: str, source: str) -> EnvRead:
    out = EnvRead()
    for n, line in enumerate(text.splitlines(), start=1):
        m = _FREEZE_LINE.match(line.strip())
        if m:
            out.rows.append(_row("package", _norm_pkg(m["name"]), m["ver"] or m["url"], n, source))
        elif e := _EDITABLE.match(line.strip()):
            out.rows.append(_row("package", _norm_pkg(e["egg"]), e["url"], n, source))
    return out


def _read_pip_list(text: str, source: str) -> EnvRead:
    out = EnvRead()
    for n, line in enumerate(text.splitlines(), start=1):
        if n <= 2 or not line.strip():
            continue
        parts = line.split()
        if len(parts) >= 2:
            out.rows.append(_row("package", _norm_pkg(parts[0]), parts[1], n, source))
    return out


def _norm_pkg(name: str) -> str:
    """PEP 503: ``TF_Keras`` and ``tf.keras`` are ``tf-keras``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def env_var_rows(
    key: str, value: str, line: int | None, source: str
) -> tuple[list[dict[str, object]], str | None]:
    """The rows one environment variable gives, if it is one to keep."""
    if key == "TF_CONFIG":
        return tf_config_rows(value, line, source)
    if not _KEEP.match(key):
        return [], None
    return [_row("env_var", key, value, line, source)], None


# A runner's status file of KEY=value lines (``task=worker:1``, ``exit=143``):
# how the process ended and which task it was.
_STATUS_EXIT_KEYS = ("exit", "exit_code", "exitcode", "exit_status", "rc", "returncode", "return_code")
_STATUS_TASK = re.compile(r"^(?P<role>chief|worker|master|ps|evaluator)[:/_-](?P<index>\d{1,4})$")


def _read_env_dump(text: str, source: str) -> EnvRead:
    out = EnvRead()
    for n, line in enumerate(text.splitlines(), start=1):
        m = _ENV_LINE.match(line.rstrip("\r"))
        if not m:
            continue
        key, said = m["key"].lower(), m["value"].strip().strip("'\"")
        if key in _STATUS_EXIT_KEYS and said.lstrip("-").isdigit():
            _ended_rows(
                out, "?", int(said), n, source, "", reason=f"{source.rsplit('/', 1)[-1]}: {line.strip()}"
            )
            continue
        if key in ("task", "role") and (t := _STATUS_TASK.match(said)):
            out.task = out.task or f"{'chief' if t['role'] == 'master' else t['role']}:{int(t['index'])}"
            continue
        value = m["value"]
        if line.startswith("declare -x ") and len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        rows, hint = env_var_rows(m["key"], value, n, source)
        out.rows.extend(rows)
        out.task = out.task or hint
    return out


def _read_tf_config(text: str, source: str) -> EnvRead:
    rows, hint = tf_config_rows(text, 1, source)
    return EnvRead(rows, hint)


_SMI_VERSIONS = re.compile(r"Driver Version\s*:\s*(?P<driver>[\d.]+)|CUDA Version\s*:\s*(?P<cuda>[\d.]+)")
_SMI_GPU = re.compile(
    r"^\|\s+(?P<idx>\d+)\s+(?P<name>.+?)\s+(?:On|Off)\s+\|\s+(?P<bus>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)"
)
_SMI_MEM = re.compile(r"(?P<used>\d+)MiB\s*/\s*(?P<total>\d+)MiB")
_SMI_PROC = re.compile(
    r"^\|\s+(?P<gpu>\d+)\s+(?:(?:N/A|\d+)\s+(?:N/A|\d+)\s+)?(?P<pid>\d+)\s+(?P<type>C\+G|C|G)\s+"
    r"(?P<name>.+?)\s+(?P<mem>\d+MiB|N/A)\s*\|"
)
_SMI_Q = re.compile(r"^\s*(?P<key>Product Name|Total|Used)\s+:\s+(?P<value>.+?)\s*$")


def _read_nvidia_smi(text: str, source: str) -> EnvRead:
    out = EnvRead()
    gpu: str | None = None
    q_section = ""
    in_processes = False
    for n, line in enumerate(text.splitlines(), start=1):
        in_processes = in_processes or "Processes:" in line
        for v in _SMI_VERSIONS.finditer(line):
            key = "driver_version" if v["driver"] else "cuda_version"
            out.rows.append(_row("gpu", key, v["driver"] or v["cuda"], n, source))
        if m := _SMI_GPU.match(line):
            gpu = f"gpu{m['idx']}"
            out.rows.append(_row("gpu", f"{gpu}.name", m["name"], n, source))
            out.rows.append(_row("gpu", f"{gpu}.bus_id", m["bus"], n, source))
        elif in_processes and (m := _SMI_PROC.match(line)):
            out.rows.append(
                _row("gpu", f"gpu{m['gpu']}.process.{m['pid']}", f"{m['name']} {m['mem']}", n, source)
            )
        elif gpu and (m := _SMI_MEM.search(line)) and line.startswith("|"):
            out.rows.append(_row("gpu", f"{gpu}.memory_used", f"{m['used']}MiB", n, source))
            out.rows.append(_row("gpu", f"{gpu}.memory_total", f"{m['total']}MiB", n, source))
            gpu = None
        _smi_q_line(line, n, source, out, q_section)
        if re.match(r"^GPU [0-9A-Fa-f]{4,8}:", line):
            out.rows.append(_row("gpu", f"gpu{_count_q_gpus(out)}.bus_id", line.split()[1], n, source))
        if re.match(r"^\s+FB Memory Usage", line):
            q_section = "fb"
        elif re.match(r"^\s+\w[\w ]*Memory Usage|^\s+BAR1", line):
            q_section = ""
    return out


def _count_q_gpus(out: EnvRead) -> int:
    return sum(1 for r in out.rows if str(r["key"]).endswith(".bus_id"))


def _smi_q_line(line: str, n: int, source: str, out: EnvRead, section: str) -> None:
    """``nvidia-smi -q``: ``Product Name : ...`` and the FB memory block."""
    m = _SMI_Q.match(line)
    if not m:
        return
    idx = max(_count_q_gpus(out) - 1, 0)
    if m["key"] == "Product Name":
        out.rows.append(_row("gpu", f"gpu{idx}.name", m["value"], n, source))
    elif section == "fb":
        key = "memory_total" if m["key"] == "Total" else "memory_used"
        out.rows.append(_row("gpu", f"gpu{idx}.{key}", m["value"].replace(" ", ""), n, source))


# "Out of memory: Killed process 1234 (python) total-vm:..kB, anon-rss:..kB" (global) and
# "Memory cgroup out of memory: Killed process ..." (a container's limit); kernels before
# 4.19 print "Memory cgroup out of memory: Kill process X ... or sacrifice child" first and
# the victim on the next line as "Killed process Y (...)".
_OOM_KILLED = re.compile(
    r"(?P<memcg>Memory cgroup out of memory: )?(?:Out of memory(?: \(oom_kill_allocating_task\))?: )?"
    r"Killed process (?P<pid>\d+) \((?P<comm>[^)]*)\)"
    r"(?:,? total-vm:(?P<vm>[\d,]+)kB, anon-rss:(?P<rss>[\d,]+)kB)?"
)
_OOM_SELECT_MEMCG = re.compile(r"Memory cgroup out of memory: Kill process \d+")
_OOM_CONSTRAINT = re.compile(
    r"oom-kill:constraint=(?P<constraint>\w+).*?(?:task_memcg=(?P<memcg>[^,\s]+))?,task=(?P<comm>[^,]+),pid=(?P<pid>\d+)"
)
_XID = re.compile(r"NVRM: Xid \((?P<dev>[^)]*)\): (?P<xid>\d+)(?:, (?P<rest>.*))?")


def _read_kernel(text: str, source: str) -> EnvRead:
    out = EnvRead()
    memcg_pending = False
    for n, line in enumerate(text.splitlines(), start=1):
        if _OOM_SELECT_MEMCG.search(line):
            memcg_pending = True
        elif m := _OOM_KILLED.search(line):
            scope = "cgroup" if m["memcg"] or memcg_pending else "global"
            memcg_pending = False
            out.rows.append(_row("kernel", "oom_kill.pid", m["pid"], n, source))
            out.rows.append(_row("kernel", "oom_kill.process", m["comm"], n, source))
            out.rows.append(_row("kernel", "oom_kill.scope", scope, n, source))
            if m["rss"]:
                out.rows.append(_row("kernel", "oom_kill.anon_rss_kb", m["rss"].replace(",", ""), n, source))
                out.rows.append(_row("kernel", "oom_kill.total_vm_kb", m["vm"].replace(",", ""), n, source))
        elif m := _OOM_CONSTRAINT.search(line):
            out.rows.append(_row("kernel", "oom_kill.constraint", m["constraint"], n, source))
            if m["memcg"]:
                out.rows.append(_row("kernel", "oom_kill.memcg", m["memcg"], n, source))
        elif m := _XID.search(line):
            value = f"{m['xid']} {m['rest'] or ''}".strip()
            out.rows.append(_row("kernel", "nvrm_xid", value, n, source))
    return out


_K8S_KV = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z][\w ]*?):\s*(?P<value>.*?)\s*$")
_K8S_STATE_KEYS = {"Reason": "reason", "Exit Code": "exit_code", "Signal": "signal", "Finished": "finished"}
_POD_TASK = re.compile(r"-(?P<role>worker|chief|master|ps|evaluator)-(?P<idx>\d+)$")


def _pod_task(name: str) -> str | None:
    """The task a pod's name ends in (``job-worker-1`` -> worker:1), else None."""
    pm = _POD_TASK.search(name)
    return f"{'chief' if pm['role'] == 'master' else pm['role']}:{pm['idx']}" if pm else None


# A row of a describe's Events table (kubectl's "  Warning  DeadlineExceeded  2m
# job-controller  Job was active longer than specified deadline", or with its age
# first, as Run:ai's describe prints it).
_DESCRIBE_EVENT = re.compile(
    r"^\s*(?:\S+\s+)?(?P<type>Normal|Warning)\s+(?P<reason>[A-Z]\w+)\s+(?P<rest>.*)$"
)
# The Job controller's event when the job ran past activeDeadlineSeconds: it deletes
# the job's pods (SIGTERM, then SIGKILL after the grace period). Of the job, every task.
_DEADLINE = "DeadlineExceeded"


def _read_k8s_pod(text: str, source: str) -> EnvRead:
    out = EnvRead()
    state = ""  # "state" | "last_state" while inside one
    state_indent = -1
    env_indent = -1
    pods: list[int] = []  # where each pod's rows begin (``kubectl describe pods`` of several)
    events = False
    for n, line in enumerate(text.splitlines(), start=1):
        if line.startswith("Events:"):
            events = True
            continue
        if (
            events
            and line
            and not line[0].isspace()
            and _K8S_KV.match(line)
            and not _DESCRIBE_EVENT.match(line)
        ):
            events = False  # the next object's description ("Name: ..."), read as such
        if events:
            if (e := _DESCRIBE_EVENT.match(line)) is not None and e["reason"] == _DEADLINE:
                out.rows.append(
                    _row("exit", "k8s.job.deadline_exceeded", e["rest"].strip(), n, source, JOB_WIDE)
                )
            continue
        m = _K8S_KV.match(line)
        if not m:
            continue
        indent, key, value = len(m["indent"]), m["key"], m["value"]
        if env_indent >= 0 and indent > env_indent:
            rows, hint = env_var_rows(key, value, n, source)
            out.rows.extend(rows)
            out.task = out.task or hint
            continue
        env_indent = indent if key == "Environment" else -1
        if key == "Name" and indent == 0:
            pods.append(len(out.rows))
            out.rows.append(_row("exit", "k8s.pod", value, n, source))
            out.task = out.task or _pod_task(value)
        elif key in ("State", "Last State"):
            state = "state" if key == "State" else "last_state"
            state_indent = indent
            out.rows.append(_row("exit", f"k8s.{state}", value, n, source))
        elif state and indent > state_indent and key in _K8S_STATE_KEYS:
            out.rows.append(_row("exit", f"k8s.{state}.{_K8S_STATE_KEYS[key]}", value, n, source))
        elif key == "Restart Count":
            out.rows.append(_row("exit", "k8s.restart_count", value, n, source))
            state = ""
        elif indent <= state_indent:
            state = ""
    if len(pods) >= 2:
        _each_pods_own(out, pods)
    return out


def _each_pods_own(out: EnvRead, starts: list[int]) -> None:
    """One file describing several pods: each pod's rows are its worker's (the
    task its name ends in, else its TF_CONFIG's, else the pod, which the job's
    logs settle), not the file's."""
    out.task = None
    for a, b in zip(starts, [*starts[1:], len(out.rows)], strict=True):
        rows = out.rows[a:b]
        said = {str(r["key"]): str(r["value"]) for r in rows if r["kind"] == "tf_config"}
        pod = str(rows[0]["value"])
        task = said.get("TF_CONFIG.task.type"), said.get("TF_CONFIG.task.index")
        worker = (
            _pod_task(pod)
            or _pod_task(_POD_SUFFIX.sub("", pod))
            or (f"{task[0]}:{task[1]}" if task[0] and task[1] and task[1].isdigit() else None)
            or f"{POD_UNIT}{pod}"
        )
        for r in rows:
            if r["worker"] == "?":
                r["worker"] = worker


# A pod's status as the API gives it (``kubectl get pod -o yaml`` / ``-o json``, an
# OpenShift must-gather's pods/<pod>/<pod>.yaml): each container's state now
# (running, terminated with its exit code and reason, waiting) and before.
_POD_STATUS_KIND = re.compile(r"^kind:\s*Pod\s*$|\"kind\":\s*\"Pod\"", re.M)
_POD_NAME = re.compile(r"^\s*name:\s*[\"']?(?P<name>[\w.-]+)|\"name\":\s*\"(?P<jname>[\w.-]+)\"", re.M)
_POD_STATE = re.compile(
    r"(?P<which>\blastState|\bstate)\"?:\s*\{?\s*\n?\s*\"?(?P<what>running|terminated|waiting)\"?:"
)
_POD_FIELD = re.compile(r"\"?(?P<key>exitCode|reason|signal)\"?:\s*[\"']?(?P<value>[\w-]+)")


def _read_k8s_pod_status(text: str, source: str) -> EnvRead:
    out = EnvRead()
    name = _POD_NAME.search(text)
    pod = (name["name"] or name["jname"]) if name else ""
    if pod:
        out.rows.append(_row("exit", "k8s.pod", pod, None, source))
        out.task = _pod_task(pod)
    statuses = text[text.find("containerStatuses") :]
    for m in _POD_STATE.finditer(statuses):
        state = "k8s.state" if m["which"] == "state" else "k8s.last_state"
        out.rows.append(_row("exit", state, m["what"].capitalize(), None, source))
        if m["what"] == "terminated":
            body = statuses[m.end() : m.end() + 400]
            for f in _POD_FIELD.finditer(body):
                key = {"exitCode": "exit_code", "reason": "reason", "signal": "signal"}[f["key"]]
                out.rows.append(_row("exit", f"{state}.{key}", f["value"], None, source))
    return out


# A row's worker that the job's logs settle: the process whose file names hold this id.
UNIT = "@unit:"

# ``kubectl get pods`` (also -o wide, -A): one pod a line, its STATUS and
# RESTARTS. A pod's worker is the task its name ends in (``-worker-1``), else
# the one whose log files lie under a folder or name of the pod's.
_K8S_GET_PODS_HEAD = re.compile(r"^(?:NAMESPACE\s+)?NAME\s+READY\s+STATUS\s+RESTARTS\s+AGE\b")
# STATUS -> (exit code, reason) of a pod whose containers ended.
_POD_ENDED = {"Completed": ("0", "Completed"), "OOMKilled": ("137", "OOMKilled"), "Error": (None, "Error")}
POD_UNIT = f"{UNIT}pod:"
# A launcher's rank (srun's task number): the cluster's task in that place, the chief first.
RANK_UNIT = f"{UNIT}rank:"
# A controller's random suffix after the task (``ctr-model-worker-0-c2b1b``).
_POD_SUFFIX = re.compile(r"-[a-z0-9]{5}$")


def _read_k8s_pods(text: str, source: str) -> EnvRead:
    out = EnvRead()
    lines = text.splitlines()
    at = next((i for i, ln in enumerate(lines[:2]) if _K8S_GET_PODS_HEAD.match(ln)), None)
    if at is None:
        return out
    name_col = 1 if lines[at].startswith("NAMESPACE") else 0
    for n, line in enumerate(lines[at + 1 :], start=at + 2):
        cols = line.split()
        if not cols or cols[0].startswith(("$", "#", "NAME")):
            break  # the next command's output
        if len(cols) < name_col + 4:
            continue
        pod, status = cols[name_col], cols[name_col + 2]
        restarts = cols[name_col + 3]
        worker = _pod_task(pod) or _pod_task(_POD_SUFFIX.sub("", pod)) or f"{POD_UNIT}{pod}"
        out.rows.append(_row("exit", "k8s.pod", pod, n, source, worker))
        if status in _POD_ENDED:
            code, reason = _POD_ENDED[status]
            out.rows.append(_row("exit", "k8s.state", "Terminated", n, source, worker))
            out.rows.append(
                _row("exit", "k8s.state.reason", f"{reason} (kubectl get pods)", n, source, worker)
            )
            if code is not None:
                out.rows.append(_row("exit", "k8s.state.exit_code", code, n, source, worker))
        if restarts.isdigit():
            out.rows.append(_row("exit", "k8s.restart_count", restarts, n, source, worker))
    return out


# ``docker compose ps -a`` (v1's ``docker-compose ps`` too): a container a line,
# its service and its STATUS, ``Exited (137) 4 seconds ago`` for one that ended.
_COMPOSE_PS_HEAD = re.compile(r"^\s*NAME\s+(?:IMAGE\s+)?(?:COMMAND\s+)?(?:SERVICE\s+)?.*\b(?:STATUS|State)\b")
_COMPOSE_EXITED = re.compile(r"\bExit(?:ed)?\s*\(?(?P<code>-?\d+)\)?")
_QUOTED = re.compile(r'"[^"]*"')
# A compose container's replica number (``mwms-worker1-1``): no task index.
_REPLICA = re.compile(r"[-_]\d+$")


def _ended_rows(
    out: EnvRead, worker: str, code: int, n: int, source: str, how: str, reason: str | None = None
) -> None:
    """A process's end as the rows of a pod's state (the workers table reads them so);
    ``reason`` as the record words it, else Completed or Error (``how``)."""
    out.rows.append(_row("exit", "k8s.state", "Terminated", n, source, worker))
    out.rows.append(_row("exit", "k8s.state.exit_code", str(code), n, source, worker))
    said = reason or f"{'Completed' if code == 0 else 'Error'} ({how})"
    out.rows.append(_row("exit", "k8s.state.reason", said, n, source, worker))


def _task_of(*names: str) -> str | None:
    """The task the first of ``names`` that names one does (a service, a container)."""
    for name in names:
        if name and (task := key_hint(name)):
            return task
    return None


def _read_compose_ps(text: str, source: str) -> EnvRead:
    out = EnvRead()
    lines = text.splitlines()
    top = next((i for i, ln in enumerate(lines[:2]) if _COMPOSE_PS_HEAD.match(ln)), 0)
    head = lines[top].split()
    at_service = head.index("SERVICE") if "SERVICE" in head else None
    ended: dict[str, list[tuple[int, int]]] = {}
    for n, line in enumerate(lines[top + 1 :], start=top + 2):
        m = _COMPOSE_EXITED.search(line)
        cols = _QUOTED.sub('""', line).split()
        if m is None or not cols:
            continue
        service = cols[at_service] if at_service is not None and at_service < len(cols) else ""
        # (a service named for its role alone, ``tf-chief``: the one chief)
        role = service.rsplit("-", 1)[-1] if service.lower().endswith(("-chief", "-master")) else ""
        worker = _task_of(service, _REPLICA.sub("", cols[0]), role) or f"{POD_UNIT}{cols[0]}"
        ended.setdefault(worker, []).append((n, int(m["code"])))
    for worker, ends in ended.items():
        if len(ends) == 1:  # (replicas of one service, each read as one task: none is known)
            _ended_rows(out, worker, ends[0][1], ends[0][0], source, "docker compose ps")
    return out


# GNU parallel's --joblog: Seq Host Starttime JobRuntime Send Receive Exitval Signal Command.
_JOBLOG_HEAD = re.compile(r"^Seq\tHost\tStarttime\tJobRuntime\tSend\tReceive\tExitval\tSignal\tCommand")
_TASK_WORDS = re.compile(r"(?i)\b(?P<role>chief|master|worker|ps|evaluator)[\s:_=/-]{0,3}(?P<i>\d{1,4})\b")


def _read_joblog(text: str, source: str) -> EnvRead:
    """Each job's exit value and signal, the worker its command names
    (``TF_CONFIG="$(./mkcfg.sh worker 1)" python train.py``)."""
    out = EnvRead()
    for n, line in enumerate(text.splitlines()[1:], start=2):
        cols = line.split("\t")
        if len(cols) < 9 or not cols[6].strip().lstrip("-").isdigit():
            continue
        named = {
            f"{'chief' if m['role'].lower() in ('chief', 'master') else m['role'].lower()}:{int(m['i'])}"
            for m in _TASK_WORDS.finditer("\t".join(cols[8:]))
        }
        if len(named) != 1:
            continue
        signo = int(cols[7]) if cols[7].strip().isdigit() else 0
        code = 128 + signo if signo else int(cols[6])
        _ended_rows(out, named.pop(), code, n, source, "GNU parallel's joblog")
    return out


# A runner's list of exit codes, one process a line (``worker1 0``, ``chief-0: 1``).
_EXIT_LINE = re.compile(
    r"^\s*(?P<name>[\w.:-]+?)\s*[:=\s]\s*(?:rc|exit(?:ed)?(?: code)?)?\s*[:=]?\s*(?P<code>-?\d{1,3})\s*$"
)


def _exit_list(lines: list[str], lname: str) -> bool:
    if not re.search(r"exit|status|\brc\b|codes?\b", lname):
        return False
    body = [ln for ln in lines if ln.strip() and not ln.lstrip().startswith("#")]
    if not 2 <= len(body) <= 256 or not all(_EXIT_LINE.match(ln) for ln in body):
        return False
    return len({_task_of(m["name"]) for ln in body if (m := _EXIT_LINE.match(ln))} - {None}) >= 2


def _read_exit_list(text: str, source: str) -> EnvRead:
    out = EnvRead()
    for n, line in enumerate(text.splitlines(), start=1):
        if (m := _EXIT_LINE.match(line)) and (worker := _task_of(m["name"])):
            _ended_rows(out, worker, int(m["code"]), n, source, source.rsplit("/", 1)[-1])
    return out


# HTCondor's job event log (the submit file's ``log =``): numbered events per
# job, "005 (48121.002.000) 2026-11-24 21:45:03 Job terminated." and below it
# "(1) Normal termination (return value 0)" or "(0) Abnormal termination (signal 9)".
_CONDOR_EVENT = re.compile(
    r"^(?P<code>0\d\d) \((?P<cluster>\d+)\.(?P<proc>\d+)\.\d+\) (?P<when>\S+ \S+) (?P<what>.*)$"
)
_CONDOR_END = re.compile(
    r"\((?:1|0)\) (?:Normal termination \(return value (?P<code>-?\d+)\)|Abnormal termination \(signal (?P<signo>\d+)\))"
)


def _read_condor_userlog(text: str, source: str) -> EnvRead:
    """HTCondor's job event log: how each process of the cluster ended (its
    return value or signal, or an eviction), as the rows of a pod's state.
    Each process is the worker whose output files carry its ``cluster.proc``
    (``job.48121.2.err``), settled once the logs are read."""
    out = EnvRead()
    lines = text.splitlines()
    last: dict[str, list[dict[str, object]]] = {}  # a process re-run ends more than once: its last end counts
    for i, line in enumerate(lines):
        m = _CONDOR_EVENT.match(line)
        if m is None or m["code"] not in ("004", "005", "009"):
            continue
        unit = f"{UNIT}{m['cluster']}.{int(m['proc'])}"
        state: list[tuple[str, str]] = [("k8s.state", "Terminated")]
        if m["code"] == "005":
            end = next((e for ln in lines[i + 1 : i + 4] if (e := _CONDOR_END.search(ln))), None)
            if end is None:
                continue
            code = int(end["code"]) if end["code"] is not None else 128 + int(end["signo"])
            reason = (
                "Completed"
                if code == 0
                else ("Error" if end["code"] is not None else f"signal {end['signo']}")
            )
            state += [("k8s.state.exit_code", str(code)), ("k8s.state.reason", reason)]
        else:
            what = (
                "Evicted by the scheduler (HTCondor)"
                if m["code"] == "004"
                else "Aborted by the user (HTCondor)"
            )
            state += [("k8s.state.reason", what)]
        last[unit] = [_row("exit", key, value, i + 1, source, unit) for key, value in state]
    out.rows = [row for rows in last.values() for row in rows]
    return out


def _read_aws_batch(text: str, source: str) -> EnvRead:
    """``aws batch describe-jobs`` (or ``aws ecs describe-tasks``): how each
    job or multi-node job's node ended, its container's exit code and reason
    ("OutOfMemoryError: Container killed due to memory usage"), as a pod's
    state. A multi-node job's node N is the worker whose file names node N
    (``node-1.json``); a plain job's is the file beside it."""
    out = EnvRead()
    try:
        data = json.loads(text)
    except ValueError:
        return out
    for job in (data.get("jobs") or data.get("tasks") or []) if isinstance(data, dict) else []:
        if not isinstance(job, dict):
            continue
        node = (job.get("nodeDetails") or {}).get("nodeIndex")
        unit = f"{UNIT}node:{node}" if isinstance(node, int) else "?"
        containers = job.get("containers") or [job.get("container") or {}]
        for c in containers if isinstance(containers, list) else []:
            if not isinstance(c, dict) or c.get("exitCode") is None:
                continue
            reason = str(c.get("reason") or job.get("stoppedReason") or "")
            code = int(c["exitCode"])
            # ECS' and Batch's words for a container killed at its memory limit.
            if "OutOfMemory" in reason:
                reason = f"OOMKilled ({reason})"
            out.rows.append(_row("exit", "k8s.state", "Terminated", None, source, unit))
            out.rows.append(
                _row(
                    "exit",
                    "k8s.state.reason",
                    reason or ("Completed" if code == 0 else "Error"),
                    None,
                    source,
                    unit,
                )
            )
            out.rows.append(_row("exit", "k8s.state.exit_code", str(code), None, source, unit))
    return out


# ``nomad alloc status`` (and ``nomad node status``, read for nothing but kept
# apart from the logs): the allocation's name, ``<job>.<group>[<index>]``, is the
# task when its group is a TF task type; its task's last "Terminated" event
# (newest first) is how it ended (hashicorp/nomad command/alloc_status.go).
_NOMAD_ID = re.compile(r"^ID\s+= [0-9a-f][0-9a-f-]{7,}$")
_NOMAD_NAME = re.compile(r"^Name\s+= \S+?\.(?P<group>[A-Za-z]+)\[(?P<index>\d+)\]\s*$", re.M)
_NOMAD_TERMINATED = re.compile(r"\bTerminated\s+Exit Code: (?P<code>-?\d+)(?:, Signal: (?P<signal>\d+))?")
_NOMAD_ROLES = {"chief": "chief", "master": "chief", "worker": "worker", "ps": "ps", "evaluator": "evaluator"}


def _read_nomad_status(text: str, source: str) -> EnvRead:
    """How a Nomad allocation's task ended, as the worker its name gives."""
    out = EnvRead()
    name = _NOMAD_NAME.search(text)
    role = _NOMAD_ROLES.get(name["group"].lower()) if name else None
    if name is None or role is None:
        return out
    worker = f"{role}:{int(name['index'])}"
    for n, line in enumerate(text.split("\n"), start=1):
        if (m := _NOMAD_TERMINATED.search(line)) is None:
            continue  # (events are listed newest first: the first is the last end)
        code, signo = int(m["code"]), int(m["signal"] or 0)
        if signo and code == 0:
            code = 128 + signo
        out.rows.append(_row("exit", "k8s.state", "Terminated", n, source, worker))
        out.rows.append(
            _row("exit", "k8s.state.reason", "Completed" if code == 0 else "Error", n, source, worker)
        )
        out.rows.append(_row("exit", "k8s.state.exit_code", str(code), n, source, worker))
        break
    return out


# A docker compose file (or ``docker compose config``): each service's TF_CONFIG
# names its own task, so each is that worker's view of the cluster.
_COMPOSE_SERVICES = re.compile(r"^services:\s*$", re.M)
_COMPOSE_TF_CONFIG = re.compile(r"""^\s*-?\s*["']?TF_CONFIG["']?\s*[:=]\s*(?P<value>.+?)\s*$""")


def _read_compose(text: str, source: str) -> EnvRead:
    """Each service's TF_CONFIG in a docker compose file, as the worker its
    own ``task`` names."""
    out = EnvRead()
    for n, line in enumerate(text.split("\n"), start=1):
        if (m := _COMPOSE_TF_CONFIG.match(line)) is None:
            continue
        raw = m["value"]
        if raw[:1] == '"' and raw[-1:] == '"':
            with contextlib.suppress(ValueError):
                raw = json.loads(raw)
        raw = raw.strip("'")
        rows, task = tf_config_rows(raw, n, source)
        if task is None:
            continue
        out.rows += [{**r, "worker": task} for r in rows]
    return out


def _read_docker_inspect(text: str, source: str) -> EnvRead:
    """``docker inspect`` of a container: how it ended (its State: exit code,
    OOMKilled) as the same rows as a pod's state, so a container killed for
    memory reads as one. The worker is its name's (``trainer-worker1-1``)."""
    out = EnvRead()
    try:
        data = json.loads(text)
    except ValueError:
        return out
    items = [i for i in (data if isinstance(data, list) else [data]) if isinstance(i, dict)]
    for item in items:
        if not isinstance(state := item.get("State"), dict):
            continue
        name = str(item.get("Name", "")).lstrip("/")
        # Several containers inspected at once: each is the task its TF_CONFIG
        # (or else its name) gives; one alone is the file's, as the caller settles it.
        who = _container_task(item) if len(items) > 1 else None
        who = who or "?"
        out.rows.append(_row("exit", "k8s.pod", name, None, source, who))
        # Its environment as it ran (Config.Env): its TF_CONFIG is its cluster view.
        config = item.get("Config")
        for var in config.get("Env") or [] if isinstance(config, dict) else []:
            key, eq, value = str(var).partition("=")
            if eq:
                rows, hint = env_var_rows(key, value, None, source)
                out.rows.extend({**r, "worker": who} for r in rows)
                if len(items) == 1:
                    out.task = hint or out.task
        if len(items) == 1:
            out.task = out.task or name_hint(name)
        status = str(state.get("Status", ""))
        if status == "exited":
            out.rows.append(_row("exit", "k8s.state", "Terminated", None, source, who))
            code = state.get("ExitCode")
            reason = "OOMKilled" if state.get("OOMKilled") else ("Completed" if code == 0 else "Error")
            out.rows.append(_row("exit", "k8s.state.reason", reason, None, source, who))
            if code is not None:
                out.rows.append(_row("exit", "k8s.state.exit_code", str(code), None, source, who))
            if state.get("FinishedAt"):
                out.rows.append(
                    _row("exit", "k8s.state.finished", str(state["FinishedAt"]), None, source, who)
                )
        else:
            out.rows.append(_row("exit", "k8s.state", status.capitalize(), None, source, who))
    return out


def _container_task(item: dict[str, object]) -> str | None:
    """The task an inspected container ran: its TF_CONFIG's, else its name's."""
    config = item.get("Config")
    env = config.get("Env") if isinstance(config, dict) else None
    for var in env if isinstance(env, list) else []:
        if isinstance(var, str) and var.startswith("TF_CONFIG="):
            _, task = tf_config_rows(var.split("=", 1)[1], None, "")
            if task is not None:
                return task
    return name_hint(str(item.get("Name", "")).lstrip("/"))


# An experiment tracker's record of one run and how it ended: Sacred's run.json
# ("status": "COMPLETED", "stop_time"), MLflow's meta.yaml ("status: 3" =
# FINISHED, or its name), a W&B run's metadata ("state": "finished"), each
# with when the run started. The run's process ended as its status says.
_RUN_STATUS = {
    "completed": 0, "finished": 0, "succeeded": 0, "success": 0,
    "failed": 1, "crashed": 1, "error": 1,
    "interrupted": 130, "killed": 137, "timed_out": 124, "timeout": 124,
}  # fmt: skip
_MLFLOW_STATUS = {
    "1": None,
    "2": 1,
    "3": 0,
    "4": 137,
    "5": None,
}  # RUNNING, FAILED, FINISHED, KILLED, SCHEDULED
_RUN_STATUS_LINE = re.compile(
    r'^\s*"?(?P<key>status|state)"?\s*:\s*"?(?P<value>[A-Za-z_]+|\d)"?\s*,?\s*$', re.M
)
_RUN_STARTED = re.compile(
    r'^\s*"?(?:start_time|startedAt|start_time_ms|heartbeat|lifecycle_stage)"?\s*:', re.M
)


# A batch service's record of a task with its exit code (Azure Batch's task.json
# "executionInfo": {"exitCode": 137}; a runner's {"returncode": 1}).
_EXIT_FIELD = re.compile(
    r'"(?:exitCode|exit_code|ExitCode|exitcode|returncode|return_code|exit_status)"\s*:\s*(?P<code>-?\d+)'
)


def _run_record(head: str) -> tuple[str, int | None] | None:
    """(status, exit code) of a tracker's run record, or None when ``head`` is none."""
    found = _EXIT_FIELD.findall(head) if head.lstrip()[:1] == "{" else []
    if len(found) == 1:
        # One task's record (several exit codes: a report on many, not a record)
        code = int(found[0])
        return ("exited" if code == 0 else f"exited with {code}", shell_code(code))
    if found or not _RUN_STARTED.search(head):
        return None
    m = _RUN_STATUS_LINE.search(head)
    if m is None:
        return None
    value = m["value"]
    if value.isdigit():
        return (value, _MLFLOW_STATUS.get(value)) if value in _MLFLOW_STATUS else None
    low = value.lower()
    return (
        (value, _RUN_STATUS[low])
        if low in _RUN_STATUS
        else ((value, None) if low in ("running", "queued") else None)
    )


# A CI run's record of its steps or jobs (Drone's and Woodpecker's build JSON,
# a GitLab pipeline's jobs, a GitHub Actions run's jobs): each step's name and
# how it exited. A step whose name names a task is that worker's process.
_STEP_NAME_KEYS = ("name", "title", "label", "job", "step", "stage")
_STEP_EXIT_KEYS = ("exit_code", "exitCode", "exit_status", "exitStatus", "returncode", "return_code")
_STEP_STATUS_KEYS = ("status", "state", "conclusion", "result")


def _steps(doc: object, depth: int = 0) -> Iterator[tuple[str, str, int, str]]:
    """(worker, step name, exit code, status) of each object in ``doc`` that
    names a task and says how it exited."""
    if depth > 8:
        return
    if isinstance(doc, list):
        for item in doc:
            yield from _steps(item, depth + 1)
        return
    if not isinstance(doc, dict):
        return
    name = next((v for k in _STEP_NAME_KEYS if isinstance(v := doc.get(k), str) and v), None)
    code = _exit_of(doc)
    if name is not None and code is not None and (worker := name_hint(name)) is not None:
        yield worker, name, code, _status_of(doc)
    elif code is not None and (task := _tf_task_in(doc)) is not None:
        # A platform's record of a task it ran with the TF_CONFIG it gave it
        # ({"input": {"tf_config": {"task": {"type": "worker", "index": 1}}}, "exit_code": 143}).
        yield task, str(doc.get("task_id") or doc.get("id") or task), code, _status_of(doc)
    for key, value in doc.items():
        if (
            isinstance(value, dict)
            and not any(k in value for k in _STEP_NAME_KEYS)
            and (c := _exit_of(value)) is not None
        ):
            # A map of nodes or tasks by name ({"nodes": {"trn01": {"exitCode": 1}}}): the
            # key is the name; a worker's when it names a task, else the process whose files bear it.
            yield name_hint(key) or f"{POD_UNIT}{key}", key, c, _status_of(value)
        elif isinstance(value, (dict, list)):
            yield from _steps(value, depth + 1)


def _tf_task_in(doc: dict[str, object], depth: int = 0) -> str | None:
    """The task a TF_CONFIG inside ``doc`` names (its ``task``'s type and
    index, as an object or a JSON string), a few levels down at most."""
    for key, value in doc.items():
        if isinstance(value, str) and key.lower() == "tf_config" and value.lstrip()[:1] == "{":
            try:
                value = json.loads(value)
            except ValueError:
                continue
        if isinstance(value, dict):
            task = value.get("task") if "cluster" in value else None
            if (
                isinstance(task, dict)
                and isinstance(task.get("type"), str)
                and str(task.get("index", "")).isdigit()
            ):
                return f"{task['type']}:{task['index']}"
            if depth < 3 and (found := _tf_task_in(value, depth + 1)) is not None:
                return found
    return None


def _exit_of(doc: dict[str, object]) -> int | None:
    return next(
        (v for k in _STEP_EXIT_KEYS if isinstance(v := doc.get(k), int) and not isinstance(v, bool)), None
    )


def _status_of(doc: dict[str, object]) -> str:
    status = next(
        (str(v) for k in (*_STEP_STATUS_KEYS, "executionState") if isinstance(v := doc.get(k), str)), ""
    )
    # The platform's own words for why it ended ("Runner interrupted due to worker preemption").
    said = next(
        (str(v) for k in ("message", "statusReason", "reason") if isinstance(v := doc.get(k), str)), ""
    )
    return f"{status} ({said})" if status and said else status or said


def _ci_steps(head: str) -> bool:
    """A JSON record of two or more steps, each naming its own task and exit code."""
    if head.lstrip()[:1] not in "[{" or not _EXIT_FIELD.search(head):
        return False
    try:
        doc = json.loads(head)
    except ValueError:
        return False
    return len({w for w, *_ in _steps(doc)}) >= 2


def _read_ci_steps(text: str, source: str) -> EnvRead:
    out = EnvRead()
    try:
        doc = json.loads(text)
    except ValueError:
        return out
    for worker, name, code, status in _steps(doc):
        said = f"{name!r} in the run's record" + (f": {status}" if status else "")
        out.rows += [
            _row("exit", key, value, None, source, worker)
            for key, value in (
                ("k8s.state", "Terminated"),
                ("k8s.state.exit_code", str(shell_code(code))),
                ("k8s.state.reason", said),
            )
        ]
    return out


# parallel-ssh's console (pssh, pssh -o out -e err): a line per host as it ends,
# "[1] 02:59:43 [FAILURE] 10.1.4.21 Exited with error code 1", "[2] ... [SUCCESS] host",
# "[3] ... [FAILURE] host Timed out, Killed by signal 9". A host's worker is the one
# whose files bear its name (out/10.1.4.21).
_PSSH = re.compile(
    r"^\[\d+\] \d\d:\d\d:\d\d \[(?P<what>SUCCESS|FAILURE)\] (?P<host>\S+)"
    r"(?: (?:Exited with error code (?P<code>\d+)|.*?Killed by signal (?P<signo>\d+)|.*))?\s*$"
)
_PSSH_DETAIL = re.compile(r"^\s*(?:Stderr|Stdout): ")


def _read_pssh(text: str, source: str) -> EnvRead:
    out = EnvRead()
    for n, line in enumerate(text.splitlines(), start=1):
        m = _PSSH.match(line)
        if m is None:
            continue
        if m["what"] == "SUCCESS":
            code = "0"
        elif m["code"]:
            code = m["code"]
        elif m["signo"]:
            code = str(128 + int(m["signo"]))
        else:
            code = ""
        unit = f"{POD_UNIT}{m['host']}"
        out.rows += [
            _row("exit", "k8s.state", "Terminated", n, source, unit),
            _row(
                "exit",
                "k8s.state.reason",
                f"parallel-ssh: {line.split('] ', 2)[-1].strip()}",
                n,
                source,
                unit,
            ),
        ]
        if code:
            out.rows.append(_row("exit", "k8s.state.exit_code", code, n, source, unit))
    return out


def _read_run_record(text: str, source: str) -> EnvRead:
    out = EnvRead()
    found = _run_record(text)
    if found is None:
        return out
    status, code = found
    if code is None:
        out.rows.append(_row("exit", "k8s.state", "Running", None, source))
        return out
    out.rows.append(_row("exit", "k8s.state", "Terminated", None, source))
    out.rows.append(_row("exit", "k8s.state.reason", f"run {status}", None, source))
    out.rows.append(_row("exit", "k8s.state.exit_code", str(code), None, source))
    return out


# ``kubectl get events`` (optionally -A / --all-namespaces): a table, one event a row.
_K8S_EVENTS_HEAD = re.compile(
    r"^\s*(?:NAMESPACE\s+)?LAST SEEN(?: \([^)]*\))?\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\s*$"
)
# The scheduler's placement of a pod on a node ("Successfully assigned train/job-worker-1
# to gke-pool-0ecc3a82"), and a node's own events that say it is being taken away
# (a cloud's spot reclaim, the kubelet's graceful node shutdown): the pods on it were preempted.
_ASSIGNED = re.compile(r"\bassigned (?:[\w.-]+/)?(?P<pod>[\w.-]+) to (?P<node>[\w.-]+)")
_NODE_TAKEN = frozenset(("PreemptionNotice", "Preempting", "SpotInterruption", "NodeShutdown", "Shutdown"))
_K8S_EVENT = re.compile(
    r"^\s*(?:(?P<ns>[a-z0-9][-a-z0-9.]*)\s+)??(?P<seen>\S+(?: \(x\d+ over \S+\))?)\s+(?P<type>Normal|Warning)\s+"
    r"(?P<reason>\w+)\s+(?P<object>[\w.-]+/[\w.-]+)\s+(?P<message>.*?)\s*$"
)


def _read_k8s_events(text: str, source: str) -> EnvRead:
    """``kubectl get events``: each event's reason and message, with the worker
    when its object is a worker's pod (``pod/job-worker-1``)."""
    out = EnvRead()
    on_node: dict[str, str] = {}  # node -> the task whose pod was placed on it
    taken: list[tuple[str, str, int]] = []  # (node, what its event says, line)
    for n, line in enumerate(text.splitlines(), start=1):
        m = _K8S_EVENT.match(line)
        if m is None:
            continue
        row = _row(
            "exit", f"k8s.event.{m['reason']}", f"{m['type']}: {m['object']}: {m['message']}", n, source
        )
        kind, _, name = m["object"].partition("/")
        if kind == "pod" and (task := _pod_task(name)):
            row["worker"] = task
        if (placed := _ASSIGNED.search(m["message"])) and (task := _pod_task(placed["pod"])):
            on_node[placed["node"]] = task
        if kind == "node" and m["reason"] in _NODE_TAKEN:
            taken.append((name, f"{m['reason']}: {m['message']}", n))
        out.rows.append(row)
    for node, said, n in taken:
        if node in on_node:
            out.rows.append(_row("exit", "k8s.preempted", f"node {node}: {said}", n, source, on_node[node]))
    return out


# Slurm's own messages in the job's output (``slurm-<job>.out``): how each task ended.
_SRUN_TASK = re.compile(
    r"^srun: error: (?P<host>\S+): tasks? (?P<tasks>[\d,\-]+): (?P<what>Killed|Exited with exit code (?P<code>\d+)"
    r"|Terminated|Segmentation fault|Aborted|Out Of Memory)"
)
_SLURM_CANCELLED = re.compile(SLURM_CANCELLED)
_SLURM_OOM = re.compile(r"Detected (?P<n>\d+) oom[-_ ]kill event")
_SLURM_SIGNALS = {"Killed": 9, "Terminated": 15, "Segmentation fault": 11, "Aborted": 6, "Out Of Memory": 9}


def srun_ends(line: str) -> list[tuple[int, int, str]]:
    """srun's own line on how tasks ended ("srun: error: cn042: task 1: Out Of
    Memory"): (rank, exit status, what it said) for each task it names."""
    m = _SRUN_TASK.search(line.strip())
    if m is None:
        return []
    code = int(m["code"]) if m["code"] else 128 + _SLURM_SIGNALS.get(m["what"], 9)
    return [(task, code, m["what"]) for task in _task_list(m["tasks"])]


def _task_list(spec: str) -> list[int]:
    out: list[int] = []
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        if lo.isdigit():
            out.extend(range(int(lo), int(hi) + 1) if hi.isdigit() else [int(lo)])
    return out


def _read_slurm(text: str, source: str) -> EnvRead:
    """``srun: error: host: task 2: Killed`` → exit facts of the task in rank 2's
    place (worker:2 without a chief; worker:1 with one, the chief being rank 0)."""
    out = EnvRead()
    for n, line in enumerate(text.split("\n"), start=1):
        if m := _SRUN_TASK.search(line):
            what = m["what"]
            code = int(m["code"]) if m["code"] else 128 + _SLURM_SIGNALS.get(what, 9)
            for task in _task_list(m["tasks"]):
                for key, value in (
                    ("slurm.exit_code", str(code)),
                    ("slurm.reason", what),
                    ("slurm.host", m["host"]),
                ):
                    # srun's task is a rank: the cluster's task in that place (chief first).
                    out.rows.append({**_row("exit", key, value, n, source), "worker": f"{RANK_UNIT}{task}"})
        elif m := _SLURM_CANCELLED.search(line):
            # (the job's or its step's cancel: every task of that job, whose files carry its id)
            job = re.search(r"\*\*\* (?:STEP|JOB) (\d+)", line)
            row = _row("exit", "slurm.cancelled", (m["why"] or "CANCELLED").strip(), n, source)
            out.rows.append({**row, "worker": f"{UNIT}step:{job[1]}"} if job else row)
        elif m := _SLURM_OOM.search(line):
            out.rows.append(_row("exit", "slurm.oom_kill_events", m["n"], n, source))
    return out


# ``sacct``'s table (default or ``--format``, fixed width under a rule of
# dashes, or ``-P``'s pipes): one line per job, array task and step. An array
# task (``5518204_1``) is the worker whose output file carries its id
# (``slurm-5518204_1.out``); a plain job's steps name no worker and are skipped.
_SACCT_HEAD = re.compile(r"^\s*JobID(?:Raw)?(?:\s+|\|)(?:.*(?:\s|\|))?State(?:\s|\||$)")
_SACCT_RULE = re.compile(r"^\s*-{3,}(?: +-{3,})+\s*$")
_SACCT_ARRAY = re.compile(r"^(?P<job>\d+)_(?P<task>\d+)(?P<step>\.[\w+]+)?$")
# A plain job's own step (``418872.0``, srun's; not ``.batch`` or ``.extern``): its
# state and exit code are its tasks' together (srun ends with the highest task's
# code), and each task wrote ``slurm-%j_%t.out``: the worker whose file carries
# ``418872_<t>``. Read only where the job ran one such step.
_SACCT_STEP = re.compile(r"^(?P<job>\d+)\.(?P<step>\d+)$")
_SACCT_REASON = {
    "COMPLETED": "Completed",
    "FAILED": "Error (Slurm FAILED)",
    "OUT_OF_MEMORY": "OOMKilled (Slurm OUT_OF_MEMORY)",
    "TIMEOUT": "Deadline exceeded (Slurm TIMEOUT)",
    "CANCELLED": "Cancelled (Slurm CANCELLED)",
    "PREEMPTED": "Preempted (Slurm PREEMPTED)",
    "NODE_FAIL": "Node failure (Slurm NODE_FAIL)",
    "BOOT_FAIL": "Node failure (Slurm BOOT_FAIL)",
    "DEADLINE": "Deadline exceeded (Slurm DEADLINE)",
}


def _sacct(head: str) -> bool:
    lines = _lines(head, 3)
    return (
        bool(lines)
        and _SACCT_HEAD.match(lines[0]) is not None
        and ("|" in lines[0] or (len(lines) > 1 and _SACCT_RULE.match(lines[1]) is not None))
    )


def _read_sacct(text: str, source: str) -> EnvRead:
    """How each task of a Slurm job array ended, as ``sacct`` reported it:
    its state and exit code (``1:0``, code and signal), as a pod's state."""
    out = EnvRead()
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if _SACCT_HEAD.match(ln)), None)
    if start is None:
        return out
    head = lines[start]
    piped = "|" in head
    rule = lines[start + 1] if start + 1 < len(lines) and not piped else ""
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", rule)]

    def split(ln: str) -> list[str]:
        # -P's pipes; else each cell under its rule of dashes, or, where a line
        # has a word for every column, its words (a table not quite aligned).
        if piped:
            return ln.split("|")
        words = ln.split()
        return words if len(words) == len(spans) else [ln[a:b].strip() for a, b in spans]

    names = split(head)
    first = start + 1 if piped else start + 2
    col = {n.strip().lower(): i for i, n in enumerate(names)}
    job_col, state_col, code_col = (
        col.get("jobid", col.get("jobidraw")),
        col.get("state"),
        col.get("exitcode"),
    )
    if job_col is None or state_col is None:
        return out
    last: dict[str, list[dict[str, object]]] = {}
    steps: dict[str, int] = {}  # a plain job's id -> how many steps of its own it ran
    for n, line in enumerate(lines[first:], start=first + 1):
        cols = split(line)
        if len(cols) <= max(job_col, state_col):
            continue
        if st := _SACCT_STEP.match(cols[job_col].strip()):
            steps[st["job"]] = steps.get(st["job"], 0) + 1
            unit = f"{UNIT}step:{st['job']}"
        elif m := _SACCT_ARRAY.match(cols[job_col].strip()):
            unit = f"{UNIT}array:{m['job']}_{int(m['task'])}"
            if m["step"] and unit in last:
                continue  # the task's own line says how it ended; its steps repeat it
        else:
            continue
        state = cols[state_col].split()[0].rstrip("+") if cols[state_col].split() else ""
        rows = [_row("exit", "k8s.state", "Terminated", n, source, unit)]
        if state in _SACCT_REASON:
            rows.append(_row("exit", "k8s.state.reason", _SACCT_REASON[state], n, source, unit))
        if (
            code_col is not None
            and code_col < len(cols)
            and (c := re.match(r"^(\d+):(\d+)$", cols[code_col].strip()))
        ):
            code = 128 + int(c[2]) if int(c[2]) else int(c[1])
            rows.append(_row("exit", "k8s.state.exit_code", str(code), n, source, unit))
        if state in ("RUNNING", "PENDING", "REQUEUED", "SUSPENDED"):
            continue  # not ended when sacct was run
        last[unit] = rows
    for job, count in steps.items():
        if count != 1:
            last.pop(f"{UNIT}step:{job}", None)  # several steps: which one ran the workers is not said
    out.rows = [row for rows in last.values() for row in rows]
    return out


def step_tasks(unit: str, units: dict[str, str]) -> list[str]:
    """The workers a plain Slurm job's step record speaks for: every task
    whose output file carries the job's id and its task number (``slurm-%j_%t.out``,
    ``train-%j-%t.out``)."""
    if not unit.startswith(f"{UNIT}step:"):
        return []
    job = unit.removeprefix(f"{UNIT}step:")
    return sorted(
        {w for u, w in units.items() if u.startswith((f"{UNIT}array:{job}_", f"{UNIT}jobfile:{job}:"))}
    )


_READERS = {
    "slurm": _read_slurm,
    "pip_freeze": _read_pip_freeze,
    "pip_list": _read_pip_list,
    "env_dump": _read_env_dump,
    "tf_config": _read_tf_config,
    "nvidia_smi": _read_nvidia_smi,
    "kernel": _read_kernel,
    "k8s_pod": _read_k8s_pod,
    "docker_inspect": _read_docker_inspect,
    "aws_batch": _read_aws_batch,
    "run_record": _read_run_record,
    "condor_userlog": _read_condor_userlog,
    "compose": _read_compose,
    "nomad_status": _read_nomad_status,
    "k8s_events": _read_k8s_events,
    "k8s_pods": _read_k8s_pods,
    "ci_steps": _read_ci_steps,
    "pssh": _read_pssh,
    "k8s_pod_status": _read_k8s_pod_status,
    "sacct": _read_sacct,
    "compose_ps": _read_compose_ps,
    "joblog": _read_joblog,
    "exit_list": _read_exit_list,
}
ENV_KINDS = tuple(_READERS)


def read_env_text(text: str, source: str, kind: str) -> EnvRead:
    return _READERS[kind](text, source)


# An environment dump is a few KB; a file of this kind past this size is read this far.
MAX_ENV_BYTES = 16 << 20


def read_env_file(path: Path, source: str, kind: str) -> EnvRead:
    """Rows of one env file of a kind :func:`sniff_env` gave; ``worker`` is ``?``
    until the caller knows whose it is (``EnvRead.for_worker``)."""
    from .source import detect
    from .wrappers import strip_ansi

    with detect(path).open() as fh:
        data = fh.read(MAX_ENV_BYTES)
    return read_env_text(strip_ansi(data.decode("utf-8", "replace")), source, kind)


# --- what the workers print themselves -----------------------------------------------------------

_BANNERS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # The same line the ``env.tf_version`` template recognises in a log.
    ("tensorflow", next(t.pattern for t in TEMPLATES if t.kind == "env.tf_version")),
    ("keras", re.compile(r"^(?:Keras(?: version)?[:=]?\s+v?|keras==)(\d+\.\d+\.\d+\S*)\s*$", re.I)),
    (
        "tf-keras",
        re.compile(r"^(?:tf[_-]keras(?: version)?[:=]?\s+v?|tf[_-]keras==)(\d+\.\d+\.\d+\S*)\s*$", re.I),
    ),
    ("python", re.compile(r"^Python(?: version)?[:=]?\s+(\d+\.\d+\.\d+\S*)", re.I)),
    ("protobuf", re.compile(r"^protobuf(?: version)?(?:[:=]\s*|==)(\d+\.\d+\.\d+\S*)\s*$", re.I)),
)
_TF_IN_LINE = tuple(
    t.pattern for t in TEMPLATES if t.kind == "env.tf_version" and not t.pattern.pattern.startswith("^")
)
_CUDNN = re.compile(r"Loaded cuDNN version (\d+)")
_CREATED_GPU = re.compile(
    r"Created (?:TensorFlow )?device \(?/job:\S+?/device:GPU:(?P<idx>\d+) with (?P<mb>\d+) MB memory\)?:?\s*->\s*"
    r"(?:physical GPU \()?device: \d+, name: (?P<name>[^,]+), pci bus id: (?P<bus>[^,]+), "
    r"compute capability: (?P<cc>[\d.]+)"
)
_CUDART = re.compile(r"Successfully opened dynamic library libcudart\.so\.(\d+(?:\.\d+)*)")


def cudnn_version(number: str) -> str:
    """``8902`` → ``8.9.2``; ``90300`` → ``9.3.0`` (cuDNN 9 widened the fields)."""
    n = int(number)
    if n >= 10000:
        return f"{n // 10000}.{n % 10000 // 100}.{n % 100}"
    return f"{n // 1000}.{n % 1000 // 100}.{n % 100}"


def env_rows_from_text(text: str) -> list[tuple[str, str, str]]:
    """(kind, key, value) of the version facts in one log record."""
    out: list[tuple[str, str, str]] = []
    for line in text.splitlines()[:50]:
        s = line.strip()
        for key, pattern in _BANNERS:
            if m := pattern.match(s):
                out.append(("banner", key, m[1]))
        if not any(k == "tensorflow" for _, k, _ in out):
            # TensorFlow's version inside a line of the script's own ("starting
            # worker:0, tensorflow 2.21.0, python 3.11.7"), as the template reads it.
            for pattern in _TF_IN_LINE:
                if m := pattern.search(s):
                    out.append(("banner", "tensorflow", m["version"]))
                    break
        if m := _CUDNN.search(s):
            out.append(("banner", "cudnn", cudnn_version(m[1])))
        if m := _CUDART.search(s):
            out.append(("banner", "cudart", m[1]))
        if m := _CREATED_GPU.search(s):
            gpu = f"gpu{m['idx']}"
            out.extend(
                [
                    ("gpu", f"{gpu}.name", m["name"].strip()),
                    ("gpu", f"{gpu}.compute_capability", m["cc"]),
                    ("gpu", f"{gpu}.memory_mb", m["mb"]),
                ]
            )
    return list(dict.fromkeys(out))


_EVENT_PREFILTER = (
    r"(?i)tensorflow|tf_version|tf\.__version__|keras|^python|protobuf|Loaded cuDNN|Created (?:TensorFlow )?device"
    r"|libcudart|TF_CONFIG"
)


def env_rows_from_events(events: pa.Table) -> list[dict[str, object]]:
    """Version facts printed in the workers' own logs, one row per fact per record."""
    if events.num_rows == 0:
        return []
    mask = pc.match_substring_regex(events["text"], _EVENT_PREFILTER)
    rows: list[dict[str, object]] = []
    for ev in events.filter(mask).select(["worker", "source", "line", "kind", "text", "fields"]).to_pylist():
        facts = env_rows_from_text(str(ev["text"]))
        for kind, key, value in facts:
            row = _row(kind, key, value, ev["line"], str(ev["source"]))
            rows.append({**row, "worker": ev["worker"]})
        if ev["kind"] == "tf_config.dump":
            raw = dict(ev["fields"] or []).get("tf_config", "")
            tf_rows, _ = tf_config_rows(raw, ev["line"], str(ev["source"]))
            rows.extend({**r, "worker": ev["worker"]} for r in tf_rows)
    return rows


# --- the table --------------------------------------------------------------------------------------


def env_table(rows: list[dict[str, object]]) -> pa.Table:
    """The ``env`` table, cast exactly to :data:`tables.ENV`."""
    if not rows:
        return ENV.empty_table()
    plain = pa.schema(
        [
            pa.field(f.name, f.type.value_type if pa.types.is_dictionary(f.type) else f.type, f.nullable)
            for f in ENV
        ]
    )
    arrays = [pa.array([r.get(f.name) for r in rows], plain.field(f.name).type) for f in ENV]
    return pa.Table.from_arrays(arrays, schema=plain).cast(ENV)

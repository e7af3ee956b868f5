"""Wrappers: what log collectors put in front of each line a worker printed.

Seen in users' evidence:

* ``cri``: the Kubernetes container runtime's files under ``/var/log/pods``:
  ``2026-11-21T10:11:12.345678901Z stdout F <line>`` (``P`` marks a line the
  runtime split because it was longer than its buffer; the next piece follows);
* ``docker_json``: Docker's json-file driver, ``{"log":"<line>\\n","stream":"stderr","time":"..."}``;
* ``json_lines``: log viewers' JSON exports (Cloud Logging, ELK, journald), the pod named per entry;
* ``columns``: a log viewer's table pasted as text, ``132 | 1534166953114 | <line>``;
* ``teamcity``: TeamCity's build log, ``[22:36:58]W:\t [Step 2/2] <line>``;
* ``bamboo``: Atlassian Bamboo's build log, ``build\t24-Nov-2026 22:42:43\t<line>``;
* ``tai64n``: daemontools / runit's ``@400000006b06134e2c5e7070 <line>``;
* ``buildkite``: Buildkite's job log, ``_bk;t=1795559910375<line>`` (epoch milliseconds);
* ``timestamps``: ``kubectl logs --timestamps`` / ``docker logs -t``: ``2026-11-21T10:11:12.345678901Z <line>``;
* ``colon_time``: a process manager's stamp and a colon (pm2), ``2026-11-25T00:07:12: <line>``;
* ``bracket_time``: a CI console's time stamps (Jenkins' Timestamper), ``[2026-11-24T20:14:40.464Z] <line>``;
* ``airflow``: Airflow's task log, ``[2026-11-24, 20:10:11 UTC] {subprocess.py:93} INFO - <line>``;
* ``kubectl_prefix``: ``kubectl logs --prefix`` and stern: ``[pod/tfjob-mnist-worker-1/tensorflow] <line>``;
* ``tekton``: ``tkn pipelinerun logs``, ``[train-worker-0 : train] <line>``;
* ``pod_container_ts``: stern with ``--timestamps``, ``<pod> <container> 2026-11-25T00:07:46.69Z <line>``;
* ``fluentbit``: Fluent Bit's stdout output, ``[3] mwms.worker-0: [[1795565535.2, {}], {"log"=>"<line>", ...}]``;
* ``prefect``: Prefect's flow run log, ``00:14:18.599 | INFO    | Task run 'shell_run_command-2' - <line>``;
* ``sky_rank``: SkyPilot's ``sky logs``, ``(worker1, rank=1, pid=25536, ip=10.128.0.41) <line>``;
* ``compose``: docker-compose's combined output, ``worker-1  | <line>``;
* ``bracket``: launchers that tag lines with the task, ``[worker-1] <line>``;
* ``srun_label``: Slurm's ``srun --label``, ``3: <line>``;
* ``mpi_tag``: Open MPI's ``--tag-output`` (Horovod), ``[1,3]<stderr>:<line>``;
* ``rank_prefix``: ``[rank3]: <line>``;
* ``ray_actor``: Ray's driver output, ``(RayTrainWorker pid=16990, ip=10.0.3.21) <line>``;
* ``clock_tag``: a launcher's clock and a tag naming the rank and its stream, ``21:43:45.863 w0.o| <line>``;
* ``clock_bracket``: a runner's clock and the host in brackets, ``03:00:40 [trn01] <line>``;
* ``foreman``: Foreman's and honcho's Procfile runs, ``03:01:10 worker0.1 | <line>``;
* ``tag_bracket``, ``tag_sep``: a launcher's own tag that ends in a number,
  ``[w1] <line>``, ``worker1: <line>``, ``gpu-2| <line>``.

Wrappers stack (``kubectl logs --prefix --timestamps``), so detection peels
them one at a time. A wrapper that names its source (``key``) may interleave
several workers in one file; the ingester splits them apart again. A
wrapper's time stamp is when the line *arrived*: it times lines that carry no
time of their own (prints, tracebacks) better than a neighbour's time does.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache

from .lines import from_epoch

UTC = dt.timezone.utc
_RFC3339 = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})"


@dataclass(frozen=True)
class Wrapper:
    name: str
    pattern: re.Pattern[str]
    # Names its source on every line, so one file can hold many workers.
    keyed: bool = False


WRAPPERS: tuple[Wrapper, ...] = (
    Wrapper("cri", re.compile(rf"^(?P<ts>{_RFC3339}) (?P<stream>stdout|stderr) (?P<tag>[FP]) ?(?P<msg>.*)$")),
    Wrapper("docker_json", re.compile(r'^\{"log":')),
    # Log viewers' JSON exports, one entry per line: Cloud Logging (textPayload,
    # jsonPayload.message, resource.labels.pod_name), ELK/Filebeat (message,
    # @timestamp, kubernetes.pod.name), journald (MESSAGE, __REALTIME_TIMESTAMP).
    Wrapper("json_lines", re.compile(r"^\s*\{"), True),
    # A log viewer's table pasted as text: line number, epoch milliseconds, message.
    Wrapper(
        "columns",
        re.compile(
            r"^\s*(?:(?P<no>\d{1,9})\s*[|\t]\s*)?(?P<epoch>\d{13}|\d{10}\.\d+)\s*[|\t]\s?(?P<msg>.*)$"
        ),
    ),
    # kubectl logs --timestamps, docker logs -t; gitlab-runner's timestamped job
    # trace adds the stream's number and O/E (and + for a continued line): "... 00E <line>".
    # Buildkite's job log: each line stamped with the agent's clock in epoch
    # milliseconds, "_bk;t=1795559910375" (inside an APC escape, ESC _ ... BEL, when raw).
    # TeamCity's build log: its clock, a status letter (W warning, E error) and
    # the build step: "[22:36:58]W:\t [Step 2/2] <line>"; a nested block indents the line.
    Wrapper(
        "teamcity",
        re.compile(
            r"^\[(?P<clock>\d{2}:\d{2}:\d{2})\](?:[A-Za-z]| ):[ \t]*(?:\[Step \d+/\d+\] ?)?(?P<msg>.*)$"
        ),
    ),
    # Atlassian Bamboo's build log: the line's kind, its time, the line:
    # "build\t24-Nov-2026 22:42:43\t<line>" (error: the process's stderr).
    Wrapper(
        "bamboo",
        re.compile(
            r"^(?P<stream>simple|command|build|error)\t(?P<day>\d{2})-(?P<mon>[A-Z][a-z]{2})-(?P<year>\d{4}) "
            r"(?P<hms>\d{2}:\d{2}:\d{2})\t(?P<msg>.*)$"
        ),
    ),
    # daemontools / runit svlogd's TAI64N label: "@400000006b06134e2c5e7070 <line>".
    Wrapper("tai64n", re.compile(r"^@(?P<tai>[0-9a-f]{24}) (?P<msg>.*)$")),
    Wrapper("buildkite", re.compile(r"^(?:\x1b)?_bk;t=(?P<epoch>\d{13})(?:\x07)?(?P<msg>.*)$")),
    Wrapper(
        "timestamps", re.compile(rf"^(?P<ts>{_RFC3339}) (?:[0-9a-f]{{2}}(?P<stream>[OE])\+? ?)?(?P<msg>.*)$")
    ),
    # A process manager's own stamp and a colon (pm2 with time: true, "2026-11-25T00:07:12: <line>";
    # local time, no zone, read as UTC as a line's own time is).
    Wrapper(
        "colon_time",
        re.compile(
            r"^(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?): (?P<msg>.*)$"
        ),
    ),
    # syslog and `journalctl` (short, short-precise, short-iso): the time, the
    # host, the program and its pid before each line a program printed:
    # "Nov 24 20:14:52 ml1 python3[7830]: <line>". One host's file is one
    # process's log (its kernel's lines too); a collector's file of several
    # hosts is one log per host; a short time has no year.
    Wrapper(
        "syslog",
        re.compile(
            rf"^(?P<ts>(?P<mon>[A-Z][a-z]{{2}}) +(?P<day>\d{{1,2}}) (?P<hms>\d{{2}}:\d{{2}}:\d{{2}}(?:\.\d+)?)|{_RFC3339}) "
            r"(?P<host>[\w.-]+) (?P<ident>[\w.@/()-]+?)(?:\[(?P<pid>\d+)\])?: (?P<msg>.*)$"
        ),
    ),
    # A CI console's time stamp in brackets (Jenkins' Timestamper, GitLab's
    # job log export): "[2026-11-24T20:14:40.464Z] <line>".
    Wrapper("bracket_time", re.compile(rf"^\[(?P<ts>{_RFC3339})\] (?P<msg>.*)$")),
    # Airflow's task log, each line of the command it ran: "[2026-11-24, 20:10:11 UTC]
    # {subprocess.py:93} INFO - <line>" (Airflow 2; its own lines share the form).
    Wrapper(
        "airflow",
        re.compile(
            r"^\[(?P<ts>\d{4}-\d{2}-\d{2},? \d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?: ?(?:UTC|[+-]\d{2}:?\d{2}))?)\] "
            r"\{[\w.-]+:\d+\} [A-Z]+ - (?P<msg>.*)$"
        ),
    ),
    Wrapper(
        "kubectl_prefix",
        re.compile(r"^\[pod/(?P<key>[^/\]\s]+)/(?P<container>[^\]\s]+)\] ?(?P<msg>.*)$"),
        True,
    ),
    # (docker service logs: "<service>.<slot>.<task id>@<node>    | <line>")
    Wrapper("compose", re.compile(r"^(?P<key>[A-Za-z0-9][\w.@-]*?)\s+\|(?: (?P<msg>.*))?$"), True),
    Wrapper(
        "bracket",
        re.compile(r"^\[(?P<key>(?:worker|chief|master|ps|evaluator)[-_:/]?\d+)\]:? ?(?P<msg>.*)$", re.I),
        True,
    ),
    # Slurm's srun --label ("3: <line>"); GNU parallel --tag with the task's number ("3\t<line>").
    Wrapper("srun_label", re.compile(r"^ {0,4}(?P<key>\d{1,5})(?:: |\t)(?P<msg>.*)$"), True),
    # Open MPI's --tag-output (Horovod's mpirun): "[1,3]<stderr>:<line>" (job, rank), and
    # with --timestamp-output: "Thu Nov  5 02:25:22 2020[2]<stderr>:<line>".
    Wrapper(
        "mpi_tag",
        re.compile(
            r"^(?:\w{3} \w{3} [ \d]\d \d\d:\d\d:\d\d \d{4})?\[(?:\d+,)?(?P<key>\d+)\]<(?P<stream>stdout|stderr)>: ?(?P<msg>.*)$"
        ),
        True,
    ),
    # `gcloud logging read` and the console's text export: "<severity letter> <RFC3339> <resource> <line>".
    # The letter is Cloud Logging's (stderr is ERROR), not the line's own level.
    Wrapper("gcloud_log", re.compile(rf"^[DIWEFC] (?P<ts>{_RFC3339}) (?P<key>[\w.-]+) (?P<msg>.*)$"), True),
    # Tekton's `tkn pipelinerun logs` (and `tkn taskrun logs`): "[<task> : <step>] <line>".
    Wrapper("tekton", re.compile(r"^\[(?P<key>[\w.-]+) : (?P<step>[\w.-]+)\] ?(?P<msg>.*)$"), True),
    # stern (and kubetail) with --timestamps: the pod, its container, the
    # runtime's time, the line: "mwms-worker-1-a2e19 trainer 2026-11-25T00:07:46.694367409Z <line>".
    Wrapper(
        "pod_container_ts",
        re.compile(rf"^(?P<key>[a-z0-9][a-z0-9.-]*) (?P<container>[\w.-]+) (?P<ts>{_RFC3339}) (?P<msg>.*)$"),
        True,
    ),
    # Fluent Bit's stdout output: "[3] mwms.worker-0: [[1795565535.204, {}], {"log"=>"<line>",
    # "stream"=>"stderr", ...}]" (a record's time, then its map; v1's "[1795565535.204, {...}]").
    Wrapper(
        "fluentbit",
        re.compile(
            r"^\[\d+\] (?P<key>[\w.-]+): \[\[?(?P<epoch>\d{10}(?:\.\d+)?)(?:, \{[^}]*\})?\]?, \{(?P<rest>.*)\}\]$"
        ),
        True,
    ),
    # SkyPilot's `sky logs` of a multi-node task: "(head, rank=0, pid=25532) <line>",
    # "(worker1, rank=1, pid=25536, ip=10.128.0.41) <line>": the rank is the task's.
    Wrapper(
        "sky_rank",
        re.compile(r"^\([\w.-]+, rank=(?P<key>\d+)(?:, pid=\d+)?(?:, ip=[\w.:-]+)?\) ?(?P<msg>.*)$"),
        True,
    ),
    # Ray's driver output, each worker actor's lines prefixed with the actor,
    # its process and node: "(RayTrainWorker pid=16990, ip=10.0.3.21) <line>".
    Wrapper(
        "ray_actor",
        re.compile(r"^\((?:[A-Za-z_][\w.]* )?(?P<key>pid=\d+)(?:, ip=[\w.:-]+)?\) ?(?P<msg>.*)$"),
        True,
    ),
    # torchrun-style and launcher rank prefixes: "[rank3]: <line>".
    # ... and Determined's trial logs, after the container's id: "a3f9c2e1 [rank=1] || <line>".
    Wrapper(
        "rank_prefix",
        re.compile(r"^(?:[0-9a-f]{6,12} )?\[rank[=:]?(?P<key>\d+)\](?::| \|\|)? ?(?P<msg>.*)$"),
        True,
    ),
    # Whatever a user's own launcher tags each line with, a name that ends in a
    # number: "[w1] <line>", "[node03]: <line>", "worker1: <line>", "gpu-2| <line>",
    # "1| <line>". Tried last; the worker is then read from each part's content.
    # ... and a lone chief or evaluator, which has no number (npm concurrently's "[chief] <line>").
    Wrapper(
        "tag_bracket",
        re.compile(
            r"^\[(?P<key>[A-Za-z][\w.-]{0,30}?\d{1,4}|chief|master|evaluator)\]:? ?(?P<msg>.*)$", re.I
        ),
        True,
    ),
    # Prefect's flow run log: its clock, the level, then the task run that
    # printed the line: "00:14:18.599 | INFO    | Task run 'shell_run_command-2' - <line>"
    # (the flow's own lines name the flow run or a logger: no task's).
    Wrapper(
        "prefect",
        re.compile(
            r"^(?P<clock>\d{2}:\d{2}:\d{2}(?:\.\d+)?) \| (?:DEBUG|INFO|WARNING|ERROR|CRITICAL) *\| "
            r"(?:Task run '(?P<key>[^']+)'|Flow run '[^']*'|[\w.]+) - (?P<msg>.*)$"
        ),
        True,
    ),
    # A launcher that stamps each line with its own clock, then the tag:
    # "2026-11-24 17:09:14.051 w1 <line>" (a time with no zone: the machine's).
    Wrapper(
        "stamp_tag",
        re.compile(
            r"^(?P<ts>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?) "
            r"\[?(?P<key>[A-Za-z][\w.-]{0,30}?\d{1,4})\]?:? (?P<msg>.*)$"
        ),
        True,
    ),
    # A launcher that stamps each line with its clock (no date) and a tag that
    # names the rank and its stream: "21:43:45.863 w0.o| <line>", "12:00:01 rank3.err> <line>".
    Wrapper(
        "clock_tag",
        re.compile(
            r"^(?P<clock>\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?) +(?P<key>[A-Za-z][\w-]{0,30}?\d{1,4})"
            r"(?:\.(?P<stream>o|e|out|err|stdout|stderr))? *[:|>](?: (?P<msg>.*))?$"
        ),
        True,
    ),
    # Foreman and honcho (a Procfile's processes): "03:01:10 worker0.1 | <line>", their own lines
    # under "system". The instance number is kept (honcho names three "worker" lines of one
    # Procfile worker.1, worker.2, worker.3); logfile.py drops it where the names differ without it.
    Wrapper(
        "foreman",
        re.compile(r"^(?P<clock>\d{2}:\d{2}:\d{2}) (?P<key>[A-Za-z][\w-]*?(?:\.\d+)?) *\| ?(?P<msg>.*)$"),
        True,
    ),
    # The same with the tag in brackets (a job runner's merged output, "03:00:40 [trn01] <line>").
    Wrapper(
        "clock_bracket",
        re.compile(
            r"^(?P<clock>\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?) +\[(?P<key>[A-Za-z][\w.-]{0,30}?\d{1,4}|chief|master)\]"
            r":? ?(?P<msg>.*)$",
            re.I,
        ),
        True,
    ),
    Wrapper(
        "tag_sep",
        # A space after the separator: "23:56:40" is a time, "host1:4567:89" NCCL's host:pid:tid.
        re.compile(r"^(?P<key>[A-Za-z][\w.@-]{0,40}?\d{1,4}|\d{1,4}) ?[:|>](?: (?P<msg>.*))?$"),
        True,
    ),
    # A process manager's or a shell's stamp before each line it saved (circus,
    # moreutils' ts, a redirect through a timestamping loop): a date and time, a
    # space, then the line as the process printed it. Not a logging format's own
    # time: detect() takes it only where the lines after the date name no level.
    Wrapper(
        "stamp",
        re.compile(
            r"^(?P<ts>\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?) (?P<msg>.*)$"
        ),
    ),
)
_BY_NAME = {w.name: w for w in WRAPPERS}
_FB_FIELD = re.compile(r'"([\w.-]+)"=>"((?:[^"\\]|\\.)*)"')

# Share of a file's first lines that must carry a wrapper's prefix for it to
# count: high enough that a log with a few ``0: ...`` prints is not taken for
# ``srun --label`` output, low enough to survive lines a wrapper leaves bare
# (a launcher's own banner before the workers start).
DETECT_SHARE = 0.8
DETECT_LINES = 400
PROBE_LINES = 24  # lines spread over a sample, tried first for each wrapper
MAX_DEPTH = 3


@dataclass(slots=True)
class Unwrapped:
    key: str | None  # the source the wrapper names (pod, service, task); None: the file's own
    stream: str | None  # stdout / stderr when the wrapper says
    ts: dt.datetime | None  # when the collector saw the line
    text: str
    partial: bool = False  # the runtime split a long line: the next piece of this stream follows


def _ts(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    text = text.replace("Z", "+00:00").replace(", ", " ").replace(" UTC", "+00:00").replace("UTC", "+00:00")
    # fromisoformat takes at most 6 fractional digits; runtimes print 9.
    text = re.sub(r"[.,](\d{1,6})\d*", r".\1", text)
    try:
        t = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    # A time with no zone is read as UTC, as a log line's own time is (lines.py);
    # the clock stage aligns workers whose clocks differ.
    return t.replace(tzinfo=UTC) if t.tzinfo is None else t.astimezone(UTC)


_MESSAGE_KEYS = (
    ("textPayload",), ("jsonPayload", "message"), ("message",), ("log",), ("msg",), ("MESSAGE",),
    ("event",),  # structlog's default key
    ("value",),  # a platform's log entries (Polyaxon's plxlogs: timestamp, pod, value)
)  # fmt: skip
_TIME_KEYS = ("timestamp", "@timestamp", "time", "receiveTimestamp", "ts")
# Fluent Bit's json_date_key: an epoch number by default, or an ISO time; a
# record's plain calendar date ("2026-11-28") is no time of day.
_DATE_KEY = "date"
# What a log collector adds to the raw line it read ("log").
_COLLECTOR_KEYS = ("stream", "container_name", "container_id", "date")
# Docker's json-file driver writes these and nothing else.
_DOCKER_KEYS = {"log", "stream", "time", "attrs"}
_SOURCE_KEYS = (
    ("resource", "labels", "pod_name"),
    ("resource", "labels", "task_name"),  # Vertex AI custom jobs: workerpool0-0, workerpool1-1
    ("kubernetes", "pod", "name"),
    ("kubernetes", "pod_name"),
    ("labels", "k8s-pod/job-name"),
    ("jsonPayload", "worker"),
    ("pod",),
    ("pod_name",),
    # Docker's fluentd logging driver and Fluent Bit's docker parsers: "/<container name>".
    ("container_name",),
    # A shipper's own tags on each event (Vector's, Datadog's): {"tags": {"role": "chief:0"}}.
    ("tags", "role"),
    ("tags", "task"),
)


def _dig(rec: object, path: tuple[str, ...]) -> object:
    for key in path:
        if not isinstance(rec, dict) or key not in rec:
            return None
        rec = rec[key]
    return rec


# An application's own JSON logger: its level field says how the line was
# logged (unlike Cloud Logging's severity, which says how an entry was filed).
_LEVEL_KEYS = ("level", "levelname", "levelName", "lvl", "log_level", "loglevel")
_LEVELS = {"debug": "DEBUG", "info": "INFO", "warning": "WARNING", "warn": "WARNING", "error": "ERROR",
           "critical": "CRITICAL", "fatal": "FATAL"}  # fmt: skip
_LOGGER_KEYS = ("logger", "name", "logger_name")


def _json_time(value: object) -> dt.datetime | None:
    if isinstance(value, str):
        return _ts(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return from_epoch(value / 1000 if value > 1e11 else value)  # milliseconds or seconds
    return None


def app_json_line(line: str) -> Unwrapped | None:
    """A line a script's own JSON logger wrote (not a log viewer's export), as
    a readable line, among other lines of any kind: None for anything else."""
    u = _json_line(line)
    if u is None or not (line.lstrip().startswith("{") and _is_app_json(line)):
        return None
    return Unwrapped(None, None, u.ts, u.text)


def _is_app_json(line: str) -> bool:
    """A script's logger says its level or its time; a log viewer's export says
    its payload (and gRPC's JSON statuses neither)."""
    if any(f'"{k}"' in line for k in ("textPayload", "jsonPayload", "MESSAGE", "kubernetes")):
        return False
    return any(f'"{k}"' in line for k in (*_LEVEL_KEYS, "ts", "time", "timestamp", "@timestamp"))


def json_record_text(rec: dict[str, object], text: str | None = None) -> str:
    """A script's structured record as one line: its message, then every other
    field as key=value (its step, loss, epoch, data_ms), its time, level and
    logger left out. ``text``: the message, where the caller found it."""
    if text is None:
        text = next((v for k in ("message", "msg", "log", "event") if isinstance(v := rec.get(k), str)), "")
    shown = {"message", "msg", "log", "event", *_TIME_KEYS, *_LEVEL_KEYS, *_LOGGER_KEYS}
    flat: dict[str, object] = {}
    for k, v in rec.items():
        if isinstance(v, dict):  # structlog's nested fields ("data": {"epoch": 1, "loss": ...})
            flat.update({ik: iv for ik, iv in v.items() if ik not in rec})
        else:
            flat[k] = v
    extra = " ".join(
        f"{k}={json.dumps(v) if isinstance(v, str) and ' ' in v else _listed(v) if isinstance(v, list) else v}"
        for k, v in flat.items()
        if k not in shown and (v is None or isinstance(v, (str, int, float, bool)) or _scalars(v))
    )
    return " ".join(p for p in ((text or "").rstrip("\n"), extra) if p)


# A list field of a structured record (the ids a step read: "ids": [0, 1, 2, 3]) is
# shown as JSON writes it, without spaces, up to this many items.
LIST_SHOWN = 64


def _scalars(v: object) -> bool:
    """A list of numbers or words: what a record says, not a nested structure."""
    return isinstance(v, list) and bool(v) and all(isinstance(x, (str, int, float, bool)) for x in v)


def _listed(v: list[object]) -> str:
    shown = json.dumps(v[:LIST_SHOWN], separators=(",", ":"))
    return shown if len(v) <= LIST_SHOWN else f"{shown[:-1]},...]"


def _json_line(line: str) -> Unwrapped | None:
    if not line.lstrip().startswith("{"):
        return None
    try:
        rec = json.loads(line)
    except ValueError:
        return None
    if not isinstance(rec, dict):
        return None
    text = next((v for p in _MESSAGE_KEYS if isinstance(v := _dig(rec, p), str)), None)
    ts = next((t for k in _TIME_KEYS if (t := _json_time(rec.get(k))) is not None), None)
    if ts is None and (
        isinstance(d := rec.get(_DATE_KEY), (int, float)) or (isinstance(d, str) and ":" in d)
    ):
        ts = _json_time(d)
    if ts is None and isinstance(us := rec.get("__REALTIME_TIMESTAMP"), str) and us.isdigit():
        ts = from_epoch(int(us) / 1e6)
    key = next((v for p in _SOURCE_KEYS if isinstance(v := _dig(rec, p), str)), None)
    if key is not None and key.startswith("/"):
        key = key[1:]  # Docker names a container "/name"
    if (
        "textPayload" in rec or "jsonPayload" in rec or "MESSAGE" in rec or "kubernetes" in rec
        or ("value" in rec and ("pod" in rec or "pod_name" in rec))
        # A collector's record of a raw line (Fluent Bit, fluentd's docker driver): "log" and where it came from.
        or (isinstance(rec.get("log"), str) and any(k in rec for k in _COLLECTOR_KEYS))
    ):  # fmt: skip
        # A log viewer's export: its message is the line the worker printed.
        return None if text is None else Unwrapped(key, None, ts, text.rstrip("\n"))
    # A script's own JSON logger: the message, then every other field as
    # key=value (its step, loss, epoch), after the level it was logged at.
    body = json_record_text(rec, text)
    if not body:
        return None
    level = next((v for k in _LEVEL_KEYS if isinstance(v := rec.get(k), str)), "")
    if (name := _LEVELS.get(level.lower())) is not None:
        logger = next((v for k in _LOGGER_KEYS if isinstance(v := rec.get(k), str) and v), "json")
        body = f"{name}:{logger}:{body}"
    if key is None and isinstance(w := rec.get("worker"), (str, int)) and not isinstance(w, bool):
        key = str(w)
    return Unwrapped(key, None, ts, body)


_MONTHS = {
    m: i
    for i, m in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1
    )
}


def _syslog_ts(mon: str, day: str, hms: str, year: int | None) -> dt.datetime | None:
    """A syslog time (no year, no zone: the host's clock) in the year the
    file gives (its own dates, its time of writing); None without one."""
    if year is None or mon not in _MONTHS:
        return None
    return _ts(f"{year:04d}-{_MONTHS[mon]:02d}-{int(day):02d}T{hms}")


def _strip_one(w: Wrapper, line: str, year: int | None = None) -> Unwrapped | None:
    if w.name == "json_lines":
        return _json_line(line)
    if w.name == "docker_json":
        if not line.startswith("{"):
            return None
        try:
            rec = json.loads(line)
        except ValueError:
            return None
        if not isinstance(rec, dict) or not isinstance(rec.get("log"), str) or not rec.keys() <= _DOCKER_KEYS:
            return None  # a shipper's record with a "log" field and its own (Fluent Bit's): json_lines
        text = rec["log"]
        partial = not text.endswith("\n")
        return Unwrapped(None, rec.get("stream"), _ts(rec.get("time")), text.rstrip("\n"), partial)
    m = w.pattern.match(line)
    if m is None:
        return None
    g = m.groupdict()
    if w.name == "fluentbit":
        # The record is a Ruby-style map of JSON strings: its "log" is the line.
        rec = dict(_FB_FIELD.findall(g["rest"]))
        if "log" not in rec:
            return None
        try:
            msg = json.loads(f'"{rec["log"]}"')
        except ValueError:
            msg = rec["log"]
        return Unwrapped(g["key"], _stream(rec.get("stream")), _time_of(g, year), msg.rstrip("\n"))
    key = g.get("key")
    if w.name == "syslog":
        # The host: a collector's file of several hosts' lines keys them by it
        # (logfile.py keeps one host's file whole, its kernel's lines with it).
        key = g.get("host")
    if key is not None and w.name == "bracket":
        key = key.lower()
    return Unwrapped(
        key, _stream(g.get("stream")), _time_of(g, year), g.get("msg") or "", g.get("tag") == "P"
    )


def _leveled(sample: list[str]) -> bool:
    """Whether a fifth of the lines or more start with a date and name their
    level: a logging format's, not a stamp put before whole lines."""
    from .lines import parse_header

    head = sample[:100]
    named = 0
    for ln in head:
        h = parse_header(ln, 2000)
        if h is not None and h.style == "python" and h.severity is not None and h.ts is not None:
            named += 1
    return named * 5 >= len(head)


def _stream(said: str | None) -> str | None:
    """A wrapper's word for the stream (stderr, err, e, E, error; the rest is
    stdout: O, o, out, build ...)."""
    if said is None:
        return None
    return "stderr" if said.lower() in ("stderr", "err", "e", "error") else "stdout"


def _time_of(g: dict[str, str | None], year: int | None) -> dt.datetime | None:
    """A wrapper's time, from the groups its pattern names: ``epoch``
    (seconds, or 13 digits of milliseconds), ``tai`` (TAI64N), ``mon``/``day``/
    ``hms`` with ``year`` or the file's year (syslog, Bamboo), else ``ts``
    (ISO 8601). A time of day alone (``clock``) is no time."""
    if epoch := g.get("epoch"):
        return from_epoch(float(epoch) / (1000 if len(epoch) == 13 and "." not in epoch else 1))
    if tai := g.get("tai"):
        # 2^62 + TAI seconds; TAI is UTC + 10 s at 1970 (and the leap seconds since, which tai64nlocal ignores too).
        return from_epoch(int(tai[:16], 16) - (1 << 62) - 10 + int(tai[16:], 16) / 1e9)
    if mon := g.get("mon"):
        said = g.get("year")
        return _syslog_ts(mon, str(g["day"]), str(g["hms"]), int(said) if said else year)
    return _ts(g.get("ts"))


# Inside a launcher's own wrapper (a CI console), the workers' tagged lines sit
# among the launcher's untagged ones: a tag that names workers by a letter and
# a number ([w0], [worker-1]) then needs to fit this share, two tags or more.
INNER_TAG_SHARE = 0.6
_INNER_TAGS = ("bracket", "tag_bracket", "rank_prefix")


# A Keras progress bar's redraw on a line of its own (" 3/20 [===>....] - ETA: 0s - loss: ...\b\b").
_BAR_PIECE = re.compile(r"^\s*\d+/\d+ \[[=>.]*\]|[^\n]*\x08")


def _strip_most(w: Wrapper, sample: list[str], share: float = DETECT_SHARE) -> list[Unwrapped] | None:
    """``sample`` with ``w`` peeled off, when it fits at least ``share`` of
    the lines; None as soon as too many lines have failed to fit."""
    if len(sample) >= 4 * PROBE_LINES:
        # A wrapper puts its prefix on (nearly) every line: lines spread over the
        # sample of which fewer than half fit say it is none, before reading all.
        step = len(sample) // PROBE_LINES
        probe = sample[step // 2 :: step][:PROBE_LINES]
        if sum(_strip_one(w, ln) is not None or bool(_BAR_PIECE.match(ln)) for ln in probe) * 2 < len(probe):
            return None
    allowed = len(sample) - share * len(sample)
    misses = 0
    out: list[Unwrapped] = []
    for ln in sample:
        u = _strip_one(w, ln)
        if u is None and _BAR_PIECE.match(ln):
            continue  # a progress bar's redraw, written without the launcher's prefix: no evidence either way
        if u is None:
            misses += 1
            if misses > allowed:
                return None
        else:
            out.append(u)
    return out


# A terminal's colour and title escapes: a coloured logger (loguru, colorlog,
# rich) or a launcher's coloured prefixes (docker compose) around the text.
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?")


def strip_ansi(line: str) -> str:
    return _ANSI.sub("", line) if "\x1b" in line else line


def detect(lines: list[str]) -> tuple[str, ...]:
    """The wrappers around a file's lines, outermost first (empty: none)."""
    found: list[str] = []
    sample = [strip_ansi(ln).rstrip("\r") for ln in lines[:DETECT_LINES] if ln.strip()]
    for _ in range(MAX_DEPTH):
        if not sample:
            break
        for w in WRAPPERS:
            if w.name in found:
                continue
            stripped = _strip_most(w, sample)
            if stripped is None and found and w.name in _INNER_TAGS:
                stripped = _strip_most(w, sample, INNER_TAG_SHARE)
                if stripped is not None and len({u.key for u in stripped}) < 2:
                    stripped = None
            if stripped is not None and w.name == "stamp" and _leveled(sample):
                stripped = None  # a logging format's own date and level ("2026-... INFO msg")
            if stripped is not None:
                found.append(w.name)
                sample = [u.text for u in stripped if u.text.strip()]
                break
        else:
            # No wrapper known by name: one learned from the file itself.
            if not any(n.startswith(LEARNED) for n in found) and (name := learn(sample)) is not None:
                found.append(name)
                sample = [
                    u.text for ln in sample if (u := _strip_learned(name, ln)) is not None and u.text.strip()
                ]
                continue
            break
    return tuple(found)


# --- a wrapper learned from the file -------------------------------------------------------
#
# A launcher, process manager or shipper nobody listed puts its own prefix
# before each line: a time, a tag naming the process, separators. The lines
# TensorFlow prints are known whatever comes before them (an absl header, TF1's
# dated header, absl's first warning, a traceback): what stands before them on
# most lines is the wrapper. Its times masked, each distinct prefix is one
# process's (or one stream's) tag; a line that starts with one of them, a
# script's own print included, is that process's, the prefix peeled off.

LEARNED = "learned\x1f"
# A line TensorFlow printed, whatever stands before it (also what exports look for).
TF_LINE = re.compile(
    r"[IWEF]\d{4} \d\d:\d\d:\d+(?:\.\d+)? +\d+ [\w.\-/]+:\d+\]"
    r"|\d{4}-\d{2}-\d{2} \d\d:\d\d:\d\d\.\d+: [IWEF] [\w.\-/<>]+:\d+\]"
    r"|WARNING: All log messages before absl::InitializeLog"
    r"|Traceback \(most recent call last\):"
    r"|(?:INFO|WARNING|ERROR):tensorflow:"
)
_TIME_TOKEN = re.compile(
    r"\d{4}[-/]\d{2}[-/]\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?|\d{2}:\d{2}:\d{2}(?:[.,]\d+)?"
)
_TIME_MARK = "\x00"
_MAX_PREFIX = 80  # a wrapper's prefix is short; anything longer is a message
_MIN_ANCHORED = 5


def learn(sample: list[str]) -> str | None:
    """The learned wrapper of ``sample``'s lines, as a chain name (its masked
    prefixes in it), or None when the lines do not carry one: most of the
    lines TensorFlow printed must stand behind a short prefix, the same few
    prefixes (times aside) recurring, each at least twice."""
    prefixes: Counter[str] = Counter()
    anchored = bare = 0
    for line in sample:
        # (every form of TF_LINE holds one of these: most lines of a busy log hold none)
        if (
            "]" not in line
            and "absl::" not in line
            and "Traceback" not in line
            and ":tensorflow:" not in line
        ):
            continue
        m = TF_LINE.search(line)
        if m is None:
            continue
        anchored += 1
        if m.start() == 0:
            bare += 1
            if bare >= 20 and bare * 2 > anchored:
                return None  # TensorFlow's lines stand bare: no wrapper (most files end here)
        elif m.start() <= _MAX_PREFIX:
            prefixes[_TIME_TOKEN.sub(_TIME_MARK, line[: m.start()])] += 1
    if anchored < _MIN_ANCHORED or bare * 10 > anchored or sum(prefixes.values()) * 10 < anchored * 9:
        return None
    kept = [p for p, n in prefixes.items() if n >= 2 and p.strip(_TIME_MARK + " \t")]
    if not kept or len(kept) > 64 or sum(prefixes[p] for p in kept) * 10 < anchored * 8:
        return None
    return LEARNED + "\x1e".join(sorted(kept, key=len, reverse=True))


# A stream's word in a learned prefix (Cloud Foundry's "[APP/PROC/WEB/0] OUT"):
# TF's lines are all on the stderr side; the script's prints are on the other.
_STREAM_WORD = re.compile(r"(?<![\w/])(OUT|ERR|STDOUT|STDERR|stdout|stderr)(?![\w/])")


@lru_cache(maxsize=64)
def _learned(name: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    """Each learned prefix as a pattern (its first time captured) and the tag it
    names. A stream's word in it matches either stream, and is no part of the tag."""
    out: list[tuple[re.Pattern[str], str]] = []
    for prefix in name[len(LEARNED) :].split("\x1e"):
        parts = prefix.split(_TIME_MARK)

        def piece(text: str) -> str:
            words = _STREAM_WORD.split(text)
            return "".join(
                re.escape(w) if i % 2 == 0 else "(?:OUT|ERR|STDOUT|STDERR|stdout|stderr)"
                for i, w in enumerate(words)
            )

        pattern = "^" + piece(parts[0])
        for i, part in enumerate(parts[1:]):
            pattern += (f"(?P<ts>{_TIME_TOKEN.pattern})" if i == 0 else f"(?:{_TIME_TOKEN.pattern})") + piece(
                part
            )
        bare = _STREAM_WORD.sub(" ", prefix.replace(_TIME_MARK, " "))
        tag = re.sub(r"[\s|:\[\]()<>=]+", " ", bare).strip(" -")
        if (compiled := re.compile(pattern)) not in [c for c, _ in out]:
            out.append((compiled, tag))
    return tuple(out)


def _learned_keyed(name: str) -> bool:
    return len({tag for _, tag in _learned(name)}) > 1


def _strip_learned(name: str, line: str) -> Unwrapped | None:
    keyed = _learned_keyed(name)
    for pattern, tag in _learned(name):
        if m := pattern.match(line):
            ts = m.groupdict().get("ts")
            # (a time of day alone is no time)
            when = _ts(ts.replace("/", "-")) if ts is not None and ("-" in ts or "/" in ts) else None
            return Unwrapped(tag if keyed else None, None, when, line[m.end() :])
    return None


def unwrap(line: str, chain: tuple[str, ...], year: int | None = None) -> Unwrapped:
    """Peel ``chain``'s wrappers off one line; a line a wrapper left bare passes
    as is. ``year``: the year of a wrapper's time that has none (syslog's)."""
    if chain and line.endswith("\r"):
        line = line.rstrip("\r")  # a CRLF file: the wrapper's pattern ends at the line's end
    out = Unwrapped(None, None, None, strip_ansi(line) if chain and "\x1b" in line else line)
    for name in chain:
        u = (
            _strip_learned(name, out.text)
            if name.startswith(LEARNED)
            else _strip_one(_BY_NAME[name], out.text, year)
        )
        if u is None:
            continue
        out = Unwrapped(
            out.key or u.key,
            out.stream or u.stream,
            out.ts or u.ts,
            u.text,
            out.partial or u.partial,
        )
    return out


def is_keyed(chain: tuple[str, ...]) -> bool:
    return any(_learned_keyed(n) if n.startswith(LEARNED) else _BY_NAME[n].keyed for n in chain)


def join_partials(items: Iterable[tuple[int, Unwrapped]]) -> Iterator[tuple[int, Unwrapped]]:
    """Join runtime-split pieces (``P``) of one line back together, per source
    and stream; the joined line keeps the number and time of its first piece."""
    pending: dict[tuple[str | None, str | None], tuple[int, Unwrapped]] = {}
    for no, u in items:
        k = (u.key, u.stream)
        if k in pending:
            first_no, first = pending.pop(k)
            u = Unwrapped(u.key, u.stream, first.ts, first.text + u.text, u.partial)
            no = first_no
        if u.partial:
            pending[k] = (no, u)
            continue
        yield no, u
    for no, u in pending.values():
        yield no, u

"""Log platforms' exports: what a user downloads from the log viewer instead
of the workers' files.

* a JSON document of entries (Datadog's logs API pages ``{"data": [{"attributes":
  {"timestamp", "host", "message", "tags"}}]}``, Elasticsearch hits, a plain
  list of entries with a message field);
* a CSV export with a message column (Kibana Discover's "@timestamp",
  "host.name", "log.file.path", "message"; Splunk's ``_time, host, source, _raw``);
* Grafana Loki's ``logcli query`` output (``<RFC3339> {labels} <line>``);
* an Elasticsearch dump, one hit a line (``{"_index", "_source": {"@timestamp", "message", "log.file.path"}}``).

Each names, per entry, where it came from (a host, a file path, a pod, a
tag such as ``task:worker_1``) and when; viewers list the newest first. An
export is turned into the entries' lines in time order, one JSON line each
(``{"time", "message", "kubernetes": {"pod": {"name": <source>}}, "stream"}``),
which the ``json_lines`` wrapper reads as any log viewer's export: one worker
per source, the line's own time where it has none. Nothing here knows a
rule; the file keeps its name in every output.
"""

from __future__ import annotations

import csv
import io
import json
import re
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from .wrappers import TF_LINE, json_record_text, strip_ansi

# Fields that name where an entry came from, most specific first.
_SOURCE_FIELDS = (
    "kubernetes.pod.name", "kubernetes.pod_name", "resource.labels.pod_name", "resource.labels.task_name",
    "pod", "pod_name", "PodName", "container.name", "container", "container_name", "logStreamName", "resourceName",
    "log.file.path", "source", "filename", "file", "role", "task", "instance", "subsystemName", "host.name", "event.syslog.host", "hostname", "host", "computerName",
)  # fmt: skip
_MESSAGE_FIELDS = (
    "message",
    "msg",
    "log",
    "line",
    "_raw",
    "textPayload",
    "Message",
    "content",
    "out",
    "output",
    # A message queue's record (Kafka through kcat -J): the shipper's entry, as a JSON string.
    "payload",
    # Azure Monitor's container tables (ContainerLogV2, the older ContainerLog).
    "LogMessage",
    "LogEntry",
    # Loggly's search API events.
    "logmsg",
    # Coralogix's log entries (its REST ingestion and its export: "text", beside
    # "applicationName", "subsystemName", "computerName").
    "text",
)
# (OpenObserve's "_timestamp": microseconds since the epoch)
_TIME_FIELDS = (
    "@timestamp",
    "timestamp",
    "time",
    "_time",
    "_timestamp",
    "ts",
    "Timestamp",
    "date",
    "TimeGenerated",
)
_STREAM_FIELDS = ("stream", "logger.name", "log.origin.file.name", "status", "LogSource", "LogEntrySource")
# A tag that names the worker (Datadog's "task:worker_1", "pod_name:job-worker-1").
_TAG = re.compile(r"^(?:task|pod_name|pod|role|worker|container_name|kube_pod)[:=](?P<value>.+)$", re.I)

_LOGCLI = re.compile(
    r"^(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})) (?P<labels>\{[^}]*\}) (?P<msg>.*)$"
)
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def sniff(head: str) -> str | None:
    """Which export ``head`` (a file's first bytes) opens, or None."""
    text = head.lstrip("\ufeff \t\r\n").replace("\r\n", "\n")
    if "\x1b" in text:
        text = strip_ansi(text)
    if not text:
        return None
    if text[0] == "{" and '"cells"' in text[:65536] and '"nbformat"' in text:
        return "notebook"
    if text[0] == "{" and '"resourceLogs"' in text[:4096]:
        return "otlp"
    if text[0] == "{" and '"event_id"' in text[:4096] and '"exception"' in text and _SENTRY_SDK.search(text):
        return "sentry"
    if text[0] == "{" and _ASCIICAST_HEAD.match(text) and re.search(r'^\[[\d.]+, ?"o", ?"', text, re.M):
        return "asciicast"
    if _MBOX_FROM.match(text) and re.search(r"^Subject: ", text[:8192], re.M):
        return "mbox"
    if _sectioned(text):
        return "sections"
    if _fenced(text):
        return "markdown"
    if text[0] == "<" and "<testsuite" in text[:4096] and "<testcase" in text and "system-" in text:
        return "junit"
    if text[0] in "{[" and _CHAT_FENCE.search(text[:65536]):
        return "chat"
    if text[0] in "{[" and _entries_key(text) and (text[0] == "{" or _JSON_ARRAY_START.match(text)):
        return "json_document"
    if text[0] == "{" and (_ndjson_envelopes(text) or _ndjson_writers(text)):
        return "ndjson"
    if text[0] in "{[" and _holds_printed(text):
        return "printed"
    first = text.split("\n", 1)[0].rstrip("\r")
    if first.startswith('"') or "," in first:
        try:
            cols = next(csv.reader([first]), [])
        except csv.Error:  # a line no CSV writer wrote (a stray carriage return, NUL)
            cols = []
        if len(cols) >= 2 and (
            (
                any(_column(c) in _MESSAGE_FIELDS for c in cols)
                and any(_column(c) in _TIME_FIELDS for c in cols)
            )
            or _csv_by_shape(text)
        ):
            return "csv"
    if _fluentd_file(text):
        return "fluentd"
    if _tsv_layout(text) is not None:
        return "tsv"
    if _ANSIBLE_PLAY.search(text) and _ANSIBLE_RESULT.search(text):
        return "ansible"
    if _ANSIBLE_ADHOC.match(text):
        return "ansible_adhoc"
    lines = [ln for ln in text.splitlines()[:40] if ln.strip()]
    hits = sum(bool(_LOGCLI.match(ln)) for ln in lines)
    if hits >= 3 and hits * 2 >= len(lines):
        return "logcli"
    return None


# A JSON array's opening, not a bracketed tag before a line ("[train-chief-0 : train] ...").
_JSON_ARRAY_START = re.compile(r"\[\s*(?:[{\[\"\d-]|\]|true|false|null)")


def _ndjson_head(text: str, n: int) -> list[Any] | None:
    """The first ``n`` lines' documents, one a line (the last line, maybe cut
    by the sniff, left out); None when there are fewer than two or one is no JSON."""
    lines = [ln for ln in text.splitlines()[:n] if ln.strip()]
    if len(lines) < 2:
        return None
    try:
        return [json.loads(ln) for ln in lines[:-1]]
    except ValueError:
        return None


def _ndjson_envelopes(text: str) -> bool:
    """One search hit per line, its log entry inside an envelope
    (Elasticsearch's ``_source``, a ``fields`` map)."""
    docs = _ndjson_head(text, 20)
    return docs is not None and all(isinstance(d, dict) and isinstance(d.get("_source"), dict) for d in docs)


# A log archive of tab-separated columns with no header (Papertrail's hourly
# archives: id, generated_at, received_at, source_id, source_name, source_ip,
# facility, severity, program, message): the message last, a time among the
# others, and the column that names the writer (few values, words not levels).
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}")
_LEVEL_WORDS = {
    "info", "error", "err", "warning", "warn", "notice", "debug", "critical", "crit", "alert", "emerg",
    "emergency", "fatal", "trace", "user", "daemon", "kern", "local0", "local1", "local2", "local3",
    "local4", "local5", "local6", "local7", "syslog", "stdout", "stderr",
}  # fmt: skip


def _tsv_layout(text: str) -> tuple[int, int | None] | None:
    """(time column, writer column) of a headerless tab-separated archive
    whose last column is the message, or None."""
    if "\t" not in text[:4096]:
        return None
    rows = [ln.split("\t") for ln in text[:65536].split("\n")[:200] if ln.strip()]
    if len(rows) < 5:
        return None
    width = len(rows[0])
    if width < 4 or sum(len(r) == width for r in rows) * 10 < len(rows) * 9:
        return None
    rows = [r for r in rows if len(r) == width]
    times = [c for c in range(width - 1) if all(_ISO.match(r[c]) for r in rows)]
    if not times or not _TF_LINE.search("\n".join(r[-1] for r in rows)):
        return None
    writer: int | None = None
    best = 1
    for c in range(width - 1):
        values = {r[c] for r in rows}
        if (
            c not in times
            and best < len(values) <= 64
            and all(re.search("[A-Za-z]", v) for v in values)
            and not values <= _LEVEL_WORDS | {v.capitalize() for v in _LEVEL_WORDS}
            and {v.lower() for v in values} - _LEVEL_WORDS
        ):
            writer, best = c, len(values)
    return times[0], writer


def _from_tsv(text: str) -> list[dict[str, Any]]:
    layout = _tsv_layout(text)
    if layout is None:
        return []
    time_col, writer = layout
    out: list[dict[str, Any]] = []
    for n, line in enumerate(text.split("\n"), start=1):
        cols = line.split("\t")
        if len(cols) < 2 or not _ISO.match(cols[time_col] if time_col < len(cols) else ""):
            continue
        source = cols[writer] if writer is not None and writer < len(cols) else ""
        out.append({"time": cols[time_col], "source": source, "stream": "", "message": cols[-1], "line": n})
    return out


# Fluentd's out_file (and its buffer chunks): "<time>\t<tag>\t<record as JSON>",
# the record a collector's (log, stream or source, container_name).
_FLUENTD_LINE = re.compile(r"^(?P<time>\d{4}-\d{2}-\d{2}T\S+)\t(?P<tag>[^\t]+)\t(?P<record>\{.*\})\s*$")


def _fluentd_file(text: str) -> bool:
    lines = [ln for ln in text[:65536].split("\n")[:50] if ln.strip()][:-1] or [""]
    return len(lines) >= 2 and all(_FLUENTD_LINE.match(ln) for ln in lines)


def _from_fluentd(text: str) -> list[dict[str, Any]]:
    docs, numbers = [], []
    for n, line in enumerate(text.split("\n"), start=1):
        if (m := _FLUENTD_LINE.match(line)) is None:
            continue
        try:
            record = json.loads(m["record"])
        except ValueError:
            continue  # a line cut short at the end of a chunk
        if isinstance(record, dict):
            docs.append({"time": m["time"], "tag": m["tag"], **record})
            numbers.append(n)
    return _entry_lines(docs, numbers)


def _ndjson_writers(text: str) -> bool:
    """A log viewer's export one entry a line (Graylog's, a search API's):
    each a message with who wrote it, and more than one writer among them
    (one process's own JSON-lines log names itself on every line)."""
    docs = _ndjson_head(text, 200)
    if docs is None or not all(isinstance(d, dict) for d in docs):
        return False
    flat = [_flat(d) for d in docs]
    shape = _shape_message(flat)
    # (a blank line printed is an entry whose message is empty)
    if not all(_message_of(d, shape) is not None for d in flat) or not any(
        _message_of(d, shape) for d in flat
    ):
        return False
    return _writer_field(flat) is not None


def _message_of(entry: dict[str, Any], shape: tuple[str, ...] | None) -> str | None:
    """An entry's message: its first message field's, else the field its
    export's shape shows (``_shape_message``); None when it has neither."""
    for field in _MESSAGE_FIELDS:
        if isinstance(value := _dig(entry, field), str):
            return value
    if shape is not None and isinstance(value := _dig(entry, shape), str):
        return value
    return None


def _shape_message(entries: list[dict[str, Any]]) -> tuple[str, ...] | None:
    """A field no fixed list names that holds what the workers printed, in
    entries that have no message field the list knows: a field on (nearly)
    every entry among whose values TensorFlow's own lines are, the one with
    the most different values. None where every entry has a known one."""
    # (read on the entries that lack one: a viewer parses a JSON logger's lines
    # into fields, "body": {"msg": ...}, and keeps the other lines as text)
    lacking = [e for e in entries if not any(isinstance(_dig(e, f), str) for f in _MESSAGE_FIELDS)]
    if not lacking:
        return None
    values = _leaf_values(lacking)
    n = len(lacking)
    held = [
        (len(set(vals)), path)
        for path, vals in values.items()
        if len(vals) * 10 >= n * 9 and any(_TF_LINE.search(v) for v in vals)
    ]
    return max(held)[1] if held else None


def _entries_key(text: str) -> bool:
    return (
        # (AWS CloudWatch Logs' get-log-events and filter-log-events: {"events": [{"timestamp", "message"}]})
        bool(re.search(r'"(?:data|hits|entries|logs|results|events|records)"\s*:\s*\[', text[:4096]))
        or (
            text.startswith("[")
            and (
                bool(re.search(r'"(?:message|msg|log|_raw|textPayload|jsonPayload)"\s*:', text[:4096]))
                # A CI's step log (Drone, Woodpecker: [{"pos": 0, "out": "...", "time": 3}]) holding TF's lines.
                or (
                    bool(re.search(r'"(?:out|output)"\s*:\s*"', text[:4096]))
                    and bool(_TF_LINE.search(text[:65536]))
                )
            )
        )
    )


# A line TensorFlow printed (the wrappers' anchor), or TensorFlow named anywhere.
_TF_LINE = re.compile(TF_LINE.pattern + r"|(?i:tensorflow)")


def _dig(entry: Any, dotted: str | tuple[str, ...]) -> Any:
    """A field by its dotted name, nested (``log.file.path``) or flat; or by
    its keys' path (a key may hold dots: ``compute.googleapis.com/resource_name``)."""
    if isinstance(dotted, tuple):
        cur = entry
        for part in dotted:
            if not isinstance(cur, dict) or part not in cur:
                return None
            cur = cur[part]
        return cur
    if isinstance(entry, dict) and dotted in entry:
        return entry[dotted]
    cur = entry
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def _holds_message(d: dict[str, Any], depth: int = 2) -> bool:
    """Whether a record holds a message field, itself or within ``depth`` levels."""
    if any(isinstance(d.get(k), str) for k in _MESSAGE_FIELDS):
        return True
    return depth > 0 and any(isinstance(v, dict) and _holds_message(v, depth - 1) for v in d.values())


def _flat(entry: dict[str, Any]) -> dict[str, Any]:
    """An entry with its envelope opened: Datadog's ``attributes``,
    Elasticsearch's ``_source``; any envelope whose message lies a level or two
    down (OCI Logging's ``logContent.data.message``, beside ``logContent.source``)."""
    out = dict(entry)
    # An entry carried as a JSON string (kcat -J's "payload"): the entry is inside.
    for key in ("payload", "value", "body"):
        raw = entry.get(key)
        if isinstance(raw, str) and raw.lstrip().startswith("{"):
            try:
                inner = json.loads(raw)
            except ValueError:
                continue
            if isinstance(inner, dict) and _holds_message(inner):
                out = {**{k: v for k, v in out.items() if k != key}, **inner}
                entry = out
                break
    cur: dict[str, Any] = entry
    for _ in range(3):
        if any(isinstance(cur.get(k), str) for k in _MESSAGE_FIELDS):
            break
        opened = next((v for v in cur.values() if isinstance(v, dict) and _holds_message(v)), None)
        if opened is None:
            break
        out = {**out, **opened}
        cur = opened
    # Google Cloud Logging's structured entries keep their fields in ``jsonPayload``.
    for inner in ("attributes", "_source", "fields", "jsonPayload"):
        if isinstance(entry.get(inner), dict):
            out = {**out, **entry[inner]}
            if isinstance(entry[inner].get("attributes"), dict):
                out = {**entry[inner]["attributes"], **out}
    return out


def _source(entry: dict[str, Any]) -> str:
    for tag in entry.get("tags") or ():
        if isinstance(tag, str) and (m := _TAG.match(tag)):
            return m["value"]
    for field in _SOURCE_FIELDS:
        value = _dig(entry, field)
        if isinstance(value, (str, int)) and str(value):
            return str(value)
    return ""


def _first(entry: dict[str, Any], fields: Iterable[str]) -> str:
    for field in fields:
        value = _dig(entry, field)
        if isinstance(value, (str, int, float)) and str(value) != "":
            return str(value)
    return ""


# Fields that name a file, not who wrote it: when a field that names the
# writer (a host, a pod) also varies, the file is only the writer's stream
# (Splunk's ``source=/var/log/app/trainer.err`` on every host).
_PATH_FIELDS = ("log.file.path", "source", "filename", "file")


_STREAMS = {"stdout", "stderr"}


def _writer_field(entries: list[dict[str, Any]]) -> str | tuple[str, ...] | None:
    """The field that tells the entries' writers apart: the first of
    ``_SOURCE_FIELDS`` that names a writer and varies; else the first that
    varies; else one the entries' own shape shows (``_shape_writer``); None
    when none does (then each entry's first named field)."""
    seen: dict[str, set[str]] = {}
    held: dict[str, int] = {}
    for entry in entries:
        for field in _SOURCE_FIELDS:
            value = _dig(entry, field)
            if isinstance(value, (str, int)) and str(value):
                seen.setdefault(field, set()).add(str(value))
                held[field] = held.get(field, 0) + 1
    # (docker's fluentd driver calls the stream "source": stdout and stderr name no writer)
    varying = [f for f in _SOURCE_FIELDS if len(seen.get(f, ())) > 1 and not seen[f] <= _STREAMS]
    writers = [f for f in varying if f not in _PATH_FIELDS]
    # One on (nearly) every entry first: a field only some entries hold (a JSON
    # logger's own "task", parsed out of its lines) leaves the others to no writer.
    everywhere = [f for f in writers or varying if held[f] * 10 >= len(entries) * 9]
    if everywhere:
        return everywhere[0]
    if (writers or varying) and (shaped := _shape_writer(entries)) is not None:
        return shaped
    if writers or varying:
        return (writers or varying)[0]
    return _shape_writer(entries)


# Keys that never name a writer: times, levels, ids of one entry, a logger's
# or a call site's names (one process writes under many).
_NOT_WRITER = re.compile(
    r"(?i)time|stamp|date|severity|level|priority|stream|logname|insert_?id|trace|span|"
    r"^(?:logger|logger_?name|name|module|func_?name|function|lineno|line|pathname|path|filename|file|"
    r"thread|thread_?name|process_?name|msecs|created|caller|type|kind|id|seq|sequence|offset|position|pos)$"
)
_WRITER_WORD = re.compile(
    r"(?i)host|node|pod|instance|machine|vm|task|worker|rank|replica|container|resource_name"
)


def _leaves(
    entry: dict[str, Any], path: tuple[str, ...] = (), depth: int = 0
) -> Iterator[tuple[tuple[str, ...], str]]:
    for key, value in entry.items():
        if isinstance(value, dict) and depth < 3:
            yield from _leaves(value, (*path, key), depth + 1)
        elif isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
            yield (*path, key), str(value)


def _leaf_values(entries: Iterable[dict[str, Any]]) -> dict[tuple[str, ...], list[str]]:
    """Each field's path in the entries -> its values, one per entry that holds it."""
    values: dict[tuple[str, ...], list[str]] = {}
    for entry in entries:
        for path, value in _leaves(entry):
            values.setdefault(path, []).append(value)
    return values


def _shape_writer(entries: list[dict[str, Any]]) -> tuple[str, ...] | None:
    """A field no fixed list names that tells the writers apart: named like a
    host, a pod or a task, on (nearly) every entry, a few values each shared
    by many entries; a machine's name before its number. Cloud Logging names
    the VM under ``labels["compute.googleapis.com/resource_name"]`` and
    ``resource.labels.instance_id``."""
    n = len(entries)
    if n < 6:
        return None
    values = _leaf_values(entries)
    best: tuple[tuple[int, int], tuple[str, ...]] | None = None
    for path, vals in values.items():
        key = path[-1]
        distinct = set(vals)
        if (
            key in _MESSAGE_FIELDS
            or _NOT_WRITER.search(key)
            # (named like a writer, or its values name tasks, "mwms-worker-1", "chief-0",
            # on most entries: the platform's own entries beside them name it)
            or not (_WRITER_WORD.search(key) or _names_tasks(vals))
            or len(vals) * 10 < n * 9
        ):
            continue
        if not 2 <= len(distinct) <= min(64, n // 3):
            continue
        if {v.lower() for v in distinct} <= _LEVEL_WORDS | {"default"}:
            continue
        rank = (int(all(re.search("[A-Za-z]", v) for v in distinct)), -len(path))
        if best is None or rank > best[0]:
            best = (rank, path)
    return best[1] if best is not None else None


# A role and its index in a name (``mwms-worker-0``, ``/var/log/mwms/chief0.log``, ``ps_1``).
_ROLE_INDEX = re.compile(r"(?i)(?<![a-z])(?:chief|master|worker|ps|evaluator)[-_]?\d+(?!\d)")


def _names_tasks(values: list[str]) -> bool:
    """Values of which two or more name tasks, on most of the entries."""
    tasks = [v for v in values if _ROLE_INDEX.search(v)]
    return len(set(tasks)) >= 2 and len(tasks) * 2 > len(values)


def _task_names(entries: list[dict[str, Any]], writer: str | tuple[str, ...] | None) -> dict[str, str]:
    """Writer -> a name that says its task, where the writer field names a
    machine (``ip-10-0-3-21``) and another field, one value per writer and
    a different one for each, names a role and index (New Relic's
    ``service.name: mwms-worker-0``, a file path ``/var/log/mwms/worker0.log``)."""
    if writer is None:
        return {}
    by_writer: dict[str, dict[tuple[str, ...], set[str]]] = {}
    for entry in entries:
        value = _dig(entry, writer)
        if not isinstance(value, (str, int)) or not str(value):
            continue
        fields = by_writer.setdefault(str(value), {})
        for path, v in _leaves(entry):
            fields.setdefault(path, set()).add(v)
    if len(by_writer) < 2 or any(_ROLE_INDEX.search(w) for w in by_writer):
        return {}
    common = set.intersection(*(set(f) for f in by_writer.values()))
    for path in sorted(common, key=lambda p: (len(p), p)):
        names = {w: f[path] for w, f in by_writer.items()}
        if all(len(v) == 1 for v in names.values()):
            one = {w: next(iter(v)) for w, v in names.items()}
            if len(set(one.values())) == len(one) and all(_ROLE_INDEX.search(v) for v in one.values()):
                return one
    return {}


def _stream_of_path(path: str) -> str:
    """``stderr`` for a file named as a process's error stream, ``stdout`` for its output; else ""."""
    name = path.rsplit("/", 1)[-1].lower()
    if re.search(r"(?:^|[._-])(?:err|stderr|error)(?:\.log|\.txt)?$", name):
        return "stderr"
    if re.search(r"(?:^|[._-])(?:out|stdout|output)(?:\.log|\.txt)?$", name):
        return "stdout"
    return ""


def _entry_lines(entries: Iterable[Any], numbers: list[int] | None = None) -> list[dict[str, Any]]:
    """The entries' lines; ``numbers``: each entry's line in the file (one
    entry a line), kept where an entry is one line."""
    # (each with its structured payload: a JSON logger's record under Cloud
    # Logging's jsonPayload, its message and the fields the script wrote beside it)
    kept = [
        (_flat(raw), numbers[i] if numbers is not None else None, raw.get("jsonPayload"))
        for i, raw in enumerate(entries)
        if isinstance(raw, dict)
    ]
    flat = [e for e, _, _ in kept]
    writer = _writer_field(flat)
    named = _task_names(flat, writer)
    shape = _shape_message(flat)
    clock = _shape_time(flat)
    out = []
    for entry, number, payload in kept:
        message = _first(entry, _MESSAGE_FIELDS) or (_message_of(entry, shape) or "")
        if isinstance(payload, dict) and isinstance(message, str) and "\n" not in message:
            message = json_record_text(payload, message)
        if not message:
            continue
        value = _dig(entry, writer) if writer is not None else None
        source = str(value) if isinstance(value, (str, int)) and str(value) else _source(entry)
        source = named.get(source, source)
        stream = _first(entry, _STREAM_FIELDS)
        if not stream and entry.get("source") in _STREAMS:
            stream = entry["source"]
        if not stream and writer not in _PATH_FIELDS:
            stream = _stream_of_path(_first(entry, _PATH_FIELDS))
        when = _first(entry, _TIME_FIELDS) or (str(_dig(entry, clock)) if clock is not None else "")
        # An entry may hold a chunk of output (a CI's step log): each line its own entry.
        lines = message.rstrip("\n").split("\n")
        for line in lines:
            e: dict[str, Any] = {"time": when, "source": source, "stream": stream, "message": line}
            if number is not None and len(lines) == 1:
                e["line"] = number
            out.append(e)
    return out


def _from_json(text: str) -> list[dict[str, Any]]:
    doc = json.loads(text)
    if isinstance(doc, dict):
        for key in ("data", "hits", "entries", "logs", "results", "events", "records"):
            value = doc.get(key)
            if isinstance(value, dict) and isinstance(value.get("hits"), list):
                value = value["hits"]  # Elasticsearch: {"hits": {"hits": [...]}}
            if isinstance(value, list):
                return _entry_lines(value)
        return []
    return _entry_lines(doc if isinstance(doc, list) else [])


def _from_ndjson(text: str) -> list[dict[str, Any]]:
    docs, numbers = [], []
    for n, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            try:
                docs.append(json.loads(line))
            except ValueError:
                continue  # a line cut short at the end of a dump
            numbers.append(n)
    return _entry_lines(docs, numbers)


# A viewer's column names in any case ("Date", "Host", "Message": Datadog's export).
_KNOWN_FIELDS = {
    f.lower(): f for f in (*_SOURCE_FIELDS, *_TIME_FIELDS, *_MESSAGE_FIELDS, *_STREAM_FIELDS, "tags")
}


def _csv_by_shape(text: str) -> bool:
    """A CSV export whose columns no list names: one column holds
    TensorFlow's lines and one a date and time, in the rows sniffed (the
    last one, maybe cut, left out)."""
    try:
        head, *rows = list(csv.reader(io.StringIO("\n".join(text.split("\n")[:201]))))
    except (csv.Error, ValueError):
        return False
    rows = rows[:-1]
    # (a header of column names: a log whose lines hold commas is no table)
    if len(rows) < 2 or not all(_COLUMN_NAME.fullmatch(c) for c in head) or len(set(head)) < len(head):
        return False
    width = len(rows[0])
    if width < 2 or any(len(r) != width for r in rows):
        return False
    cols = list(zip(*rows, strict=True))
    return any(any(_TF_LINE.search(v) for v in c) for c in cols) and any(all(map(_a_time, c)) for c in cols)


_COLUMN_NAME = re.compile(r"[A-Za-z_@][\w .@\[\]/()-]{0,40}")
_ISO_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2}| ?UTC)?")


def _a_time(value: str) -> bool:
    """Whether a value is a date and time as a viewer writes one, and nothing else."""
    v = value.strip()
    return bool(_ISO_ONLY.fullmatch(v) or _US_TIME.match(v) or _KIBANA_TIME.fullmatch(v))


def _shape_time(entries: list[dict[str, Any]]) -> tuple[str, ...] | None:
    """A field no fixed list names that holds each entry's time: a date and
    time on every entry. None where the entries have a known one."""
    if any(_first(e, _TIME_FIELDS) for e in entries[:50]):
        return None
    values = _leaf_values(entries[:200])
    n = min(len(entries), 200)
    timed = [p for p, vals in values.items() if len(vals) == n and all(map(_a_time, vals))]
    return timed[0] if timed else None


def _column(name: str) -> str:
    # (a column's unit or zone after its name: Azure Monitor's "TimeGenerated [UTC]")
    name = re.sub(r"\s*\[[^\]]*\]$", "", name.strip())
    return _KNOWN_FIELDS.get(name.lower(), name)


def _from_csv(text: str) -> list[dict[str, Any]]:
    rows = csv.DictReader(io.StringIO(text))
    entries = []
    for row in rows:
        entry = {_column(k): v for k, v in row.items() if k}
        if isinstance(entry.get("tags"), str):
            entry["tags"] = [
                t.strip() for t in entry["tags"].split(",") if t.strip()
            ]  # "env:prod,task:worker_1"
        entries.append(entry)
    return _entry_lines(entries)


def _from_logcli(text: str) -> list[dict[str, Any]]:
    out = []
    for n, line in enumerate(text.split("\n"), start=1):
        m = _LOGCLI.match(line)
        if m is None:
            continue
        labels = dict(_LABEL.findall(m["labels"]))
        stream = labels.pop("stream", "")
        named = [
            v for k, v in labels.items() if k in ("pod", "role", "task", "container", "worker", "instance")
        ]
        out.append(
            {
                "time": m["ts"],
                "source": named[0] if named else ",".join(labels.values()),
                "stream": stream,
                "message": m["msg"],
                "line": n,
            }  # fmt: skip
        )
    return out


_KIBANA_TIME = re.compile(
    r"^(?P<mon>[A-Z][a-z]{2}) (?P<day>\d{1,2}), (?P<year>\d{4}) @ (?P<hms>\d{2}:\d{2}:\d{2}(?:\.\d+)?)$"
)
_MONTHS = {
    m: i
    for i, m in enumerate(
        ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1
    )
}


# A portal's US-locale time: Azure Monitor's "11/28/2026, 6:59:25.105 AM" (UTC).
_US_TIME = re.compile(
    r"^(?P<mon>\d{1,2})/(?P<day>\d{1,2})/(?P<year>\d{4}),? (?P<h>\d{1,2}):(?P<ms>\d{2}:\d{2}(?:\.\d+)?) ?(?P<ampm>[AP]M)$"
)


def _iso(value: str) -> str:
    """A viewer's time as ISO 8601 (Kibana's "Nov 24, 2026 @ 22:33:59.924";
    Azure Monitor's "11/28/2026, 6:59:25.105 AM"; epoch seconds or
    milliseconds); as it is otherwise."""
    if m := _KIBANA_TIME.match(value.strip()):
        return f"{m['year']}-{_MONTHS.get(m['mon'], 1):02d}-{int(m['day']):02d}T{m['hms']}Z"
    if m := _US_TIME.match(value.strip()):
        hour = int(m["h"]) % 12 + (12 if m["ampm"] == "PM" else 0)
        return f"{m['year']}-{int(m['mon']):02d}-{int(m['day']):02d}T{hour:02d}:{m['ms']}Z"
    if re.fullmatch(r"\d{10}(?:\.\d+)?|\d{13}|\d{16}|\d{19}", value.strip()):
        import datetime as dt

        # Thirteen digits are milliseconds, sixteen microseconds, nineteen nanoseconds;
        # "1795817482.85" (as long) is seconds.
        digits = len(value.strip()) if value.strip().isdigit() else 10
        secs = float(value) / {13: 1e3, 16: 1e6, 19: 1e9}.get(digits, 1)
        return dt.datetime.fromtimestamp(secs, dt.timezone.utc).isoformat().replace("+00:00", "Z")
    if re.fullmatch(r"\d{1,9}(?:\.\d+)?", value.strip()):
        return ""  # seconds since the step began (a CI's log): no time of day; the lines keep their order
    return value


# A line end inside a JSON string (escaped: "...\\n[chief-0] I0000 00:00:1795845566.12 ...").
_ESCAPED_LINE_BREAK = re.compile(r"\\n")
# This tool's own JSON report quotes evidence lines: never a capture to read again.
_OWN_REPORT = re.compile(r'"schema"\s*:\s*"mwms-doctor')


def _holds_printed(text: str) -> bool:
    """A JSON document (not a stream of entries) that carries what a program
    printed in its string values: lines with their line ends, TensorFlow's
    among them (two at least): a notebook's paragraph results, a kernel's log
    of one printed line an entry, a job API's captured output."""
    if _OWN_REPORT.search(text) or len(_ESCAPED_LINE_BREAK.findall(text[:65536])) < 4:
        return False
    return len(TF_LINE.findall(text[:65536])) >= 2 and _one_json_document(text)


def _one_json_document(text: str) -> bool:
    """Whether ``text`` is one JSON document (or one cut short by the sniff),
    not lines that open with ``[`` or ``{`` (``[pod/x/c] ...``, JSON lines)."""
    try:
        _, end = json.JSONDecoder().raw_decode(text)
    except json.JSONDecodeError as exc:
        return len(text) > 4096 and exc.pos >= len(text) - 4096
    return not text[end:].strip()


# What names the unit a result in a list is of; and a result's key for both of
# its streams merged, beside each stream's own.
_UNIT_KEYS = ("target", "host", "hostname", "node", "minion", "instance")
_MERGED_KEYS = ("merged_output", "combined_output", "output_merged")
# In a cell (code beside what it printed), the code's keys: not output.
_RESULT_KEYS = ("results", "result", "outputs", "output")
_CODE_KEYS = ("text", "source", "code", "command", "input", "script", "query")


def printed_text(text: str) -> str:
    """What a JSON document's string values say a program printed, in the
    document's order: every string that holds a line end (a line as printed,
    or many), or one holding a line TensorFlow printed, except a cell's code
    beside its results (Zeppelin's paragraph ``text`` beside
    ``results.msg[].data``). Raises ValueError when the text is no JSON
    document."""
    doc = json.loads(text)
    out: list[str] = []
    if isinstance(doc, dict) and str(doc.get("schema", "")).startswith("mwms-doctor"):
        return ""  # this tool's own report, its sniffed head too short to say

    def walk(value: Any, key: str = "", in_cell: bool = False, unit: str = "", listed: bool = False) -> None:
        if isinstance(value, dict):
            cell = any(k in value for k in _RESULT_KEYS)
            # A map of named units, each its own result (Salt's cmd.run_all by minion:
            # {"host-a": {"retcode": 0, "stdout": "..."}, ...}): each unit's lines
            # behind its name, as a fan-out tool tags them.
            named = len(value) >= 2 and all(isinstance(v, dict) for v in value.values())
            # Or a list of results, each naming its unit (Puppet Bolt's {"items":
            # [{"target": "gpu-box-01", "value": {"stdout": ...}}]}).
            own = next((v for k in _UNIT_KEYS if isinstance(v := value.get(k), str) and v), "")
            if listed and not unit and own:
                unit = own
            for k, v in value.items():
                if k in _MERGED_KEYS and any(s in value for s in ("stdout", "stderr")):
                    continue  # the same lines again, both streams merged
                walk(v, str(k), cell, str(k) if named and not unit else unit)
        elif isinstance(value, list):
            for v in value:
                walk(v, key, False, unit, listed=True)
        elif isinstance(value, str):
            if in_cell and key in _CODE_KEYS:
                return
            # (a line with its line end, one an entry: a kernel log's {"stream_name",
            # "time", "data": "...\n"}; or many lines; or one TF printed)
            if "\n" in value or TF_LINE.search(value):
                text = strip_ansi(value)
                if unit:
                    text = "".join(f"[{unit}] {ln}\n" for ln in text.splitlines() if ln.strip())
                out.append(text)

    walk(doc)
    return "".join(t if t.endswith("\n") else t + "\n" for t in out if t.strip())


def notebook_text(text: str) -> str:
    """A Jupyter notebook's outputs as the text they printed, cell after cell:
    its streams, and an error's traceback (terminal colours removed)."""
    doc = json.loads(text)
    out: list[str] = []
    for cell in doc.get("cells") or ():
        for o in cell.get("outputs") or () if isinstance(cell, dict) else ():
            if not isinstance(o, dict):
                continue
            if o.get("output_type") == "stream":
                t = o.get("text") or ""
                out.append("".join(t) if isinstance(t, list) else str(t))
            elif o.get("output_type") == "error":
                out.append(
                    "\n".join(re.sub(r"\x1b\[[0-9;]*m", "", str(ln)) for ln in o.get("traceback") or ())
                    + "\n"
                )
    return "".join(t if t.endswith("\n") else t + "\n" for t in out if t)


# ansible-playbook's output: a host's task results, with what the task
# printed in its registered result ("trainer_log.stdout_lines": [...]).
_ANSIBLE_PLAY = re.compile(r"^(?:PLAY|TASK) \[[^\]]*\] \*+", re.M)
_ANSIBLE_RESULT = re.compile(r"^(?:ok|changed|fatal|failed): \[[^\]]+\](?:: [A-Z!]+)? => \{", re.M)
_ANSIBLE_HEAD = re.compile(
    r"^(?:ok|changed|fatal|failed): \[(?P<host>[^\]]+)\](?:: [A-Z!]+)? => (?P<body>\{.*)$"
)


def _printed(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """(stream, line) for what a task's result says its command printed."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _printed(v, k)
    elif isinstance(value, list) and key.endswith(("stdout_lines", "stderr_lines")):
        stream = "stderr" if key.endswith("stderr_lines") else "stdout"
        yield from ((stream, str(v)) for v in value if isinstance(v, (str, int, float)))
    elif isinstance(value, str) and key in ("stdout", "stderr") and value:
        yield from ((key, ln) for ln in value.splitlines())


# An ad-hoc ansible command's output, host by host: "trainer01 | CHANGED | rc=0 >>"
# then what the command printed (its rc is that command's, a `tail`'s, not the training's).
_ANSIBLE_ADHOC = re.compile(
    r"^(?P<host>[\w.-]+) \| (?:CHANGED|SUCCESS|FAILED!?|UNREACHABLE!?) \| rc=-?\d+ >>$", re.M
)


# The resource attribute that names the writer of OpenTelemetry log records.
_OTLP_WRITER = ("k8s.pod.name", "service.instance.id", "host.name", "container.name", "service.name")


# A Sentry event (an error tracker's record of one uncaught exception): its SDK's
# name, "sentry.python", beside "event_id" and "exception".
_SENTRY_SDK = re.compile(r'"sdk"\s*:\s*\{[^{}]*"name"\s*:\s*"sentry\.|"platform"\s*:\s*"python"')


def _from_sentry(text: str) -> list[dict[str, Any]]:
    """A Sentry event as the process printed it: its breadcrumbs (the log
    records the SDK kept) at their times, then its exception as Python's
    traceback (``Traceback (most recent call last):``, each frame's file, line,
    function and code, then ``type: value``) at the event's time; the writer is
    its ``task`` tag, else its server."""
    doc = json.loads(text)
    if not isinstance(doc, dict):
        return []
    tags = doc.get("tags") or {}
    if isinstance(tags, list):  # (the API's form: [{"key": ..., "value": ...}] or [[key, value]])
        tags = dict((t.get("key"), t.get("value")) if isinstance(t, dict) else tuple(t[:2]) for t in tags)
    # (the tag that names the task: "task", "tf_task", "role", "rank" ...; else the server)
    named = [str(v) for k, v in tags.items() if v and re.search(r"(?i)task|role|rank|worker|replica", str(k))]
    source = named[0] if named else str(tags.get("server_name") or doc.get("server_name") or "")
    out: list[dict[str, Any]] = []
    crumbs = doc.get("breadcrumbs") or {}
    for b in (crumbs.get("values") if isinstance(crumbs, dict) else crumbs) or ():
        if isinstance(b, dict) and isinstance(b.get("message"), str):
            level = str(b.get("level") or "")
            stream = "stderr" if level in ("error", "fatal", "warning") else "stdout"
            out.append(
                {
                    "time": str(b.get("timestamp") or ""),
                    "source": source,
                    "stream": stream,
                    "message": b["message"],
                }
            )
    when = str(doc.get("timestamp") or "")
    values = (doc.get("exception") or {}).get("values") or []
    for i, v in enumerate(values):
        if not isinstance(v, dict):
            continue
        lines = (
            ["Traceback (most recent call last):"]
            if i == 0
            else [
                "",
                "During handling of the above exception, another exception occurred:",
                "",
                "Traceback (most recent call last):",
            ]
        )
        for f in (v.get("stacktrace") or {}).get("frames") or ():
            if isinstance(f, dict):
                lines.append(
                    f'  File "{f.get("abs_path") or f.get("filename")}", line {f.get("lineno")}, in {f.get("function")}'
                )
                if f.get("context_line"):
                    lines.append(f"    {str(f['context_line']).strip()}")
        name = f"{v['module']}.{v.get('type')}" if v.get("module") else str(v.get("type"))
        lines += f"{name}: {v.get('value') or ''}".rstrip(": ").split("\n")
        out += [{"time": when, "source": source, "stream": "stderr", "message": ln} for ln in lines]
    return out


def _otlp_value(v: Any) -> str:
    if isinstance(v, dict):
        for k in ("stringValue", "intValue", "doubleValue", "boolValue"):
            if k in v:
                return str(v[k])
    return ""


def _from_otlp(text: str) -> list[dict[str, Any]]:
    """An OpenTelemetry collector's file exporter (OTLP JSON, one export a line):
    each log record's body, time and stream, its writer from its resource."""
    out: list[dict[str, Any]] = []
    for line in text.splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        for res in doc.get("resourceLogs") or () if isinstance(doc, dict) else ():
            attrs = {
                a.get("key"): _otlp_value(a.get("value"))
                for a in (res.get("resource") or {}).get("attributes") or ()
            }
            writer = next((attrs[k] for k in _OTLP_WRITER if attrs.get(k)), "")
            for scope in res.get("scopeLogs") or ():
                for rec in scope.get("logRecords") or ():
                    body = _otlp_value(rec.get("body"))
                    if not body:
                        continue
                    ns = next(
                        (
                            int(v)
                            for k in ("timeUnixNano", "observedTimeUnixNano")
                            if str(v := rec.get(k, "0")).isdigit() and int(v) > 0
                        ),
                        0,
                    )
                    ra = {a.get("key"): _otlp_value(a.get("value")) for a in rec.get("attributes") or ()}
                    out.append(
                        {
                            "time": str(ns / 1e9) if ns else "",
                            "source": writer,
                            "stream": ra.get("log.iostream", ""),
                            "message": body,
                        }
                    )
    return out


# An mbox (cron's mails of each host's run, gathered in one mailbox): each
# message's body is what its host's command printed.
_MBOX_FROM = re.compile(r"^From \S+ +\w{3} \w{3} [ \d]?\d \d\d:\d\d:\d\d \d{4}")


def _from_mbox(text: str) -> list[dict[str, Any]]:
    import email.utils
    import mailbox

    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "box"
        path.write_text(text, encoding="utf-8")
        msgs = list(mailbox.mbox(path))
    hosts = [email.utils.parseaddr(str(m.get("From", "")))[1].rsplit("@", 1)[-1] for m in msgs]
    # The writer: the sending host when the messages come from several hosts,
    # else what each is about (its subject); one message names no writer (its
    # lines may name their own: "worker0: ...").
    by_host = len(set(hosts)) > 1
    for msg, host in zip(msgs, hosts, strict=True):
        body = msg.get_payload(decode=True)
        lines = (
            body.decode("utf-8", "replace") if isinstance(body, bytes) else str(msg.get_payload())
        ).splitlines()
        source = "" if len(msgs) == 1 else host if by_host else str(msg.get("Subject", ""))
        out += [{"time": "", "source": source, "stream": "", "message": ln} for ln in lines]
    return out


# Files of several processes' outputs one after the other, each behind a
# banner: `tail`/`head` of several files ("==> worker-1.log <=="), pueue's
# log ("--- Task 2: Success ---"), a script's "===== worker 1 =====", Bolt's
# "Finished on <host>:".
_SECTION = re.compile(
    r"^(?:==> (?P<a>[^\n]+?) <==|-{3,} ?(?P<b>[^\n]*?\w[^\n]*?) ?-{3,}|={3,} ?(?P<c>[^\n]*?\w[^\n]*?) ?={3,}"
    # Puppet Bolt's result per target: "Finished on gpu-12.lab.internal:", "Failed on ...:".
    r"|(?:Finished|Failed) on (?P<d>[\w.@-]+):"
    # Octopus Deploy's task log: each deployment target's part under its status and
    # name, in the log's tree ("                    |     Failed: TRAIN-VM-02").
    r"|[ \t]*\|[ \t]+(?:Success|Failed|Canceled|Cancelled|Skipped|Running|Pending|Queued|TimedOut):[ \t]+(?P<i>[\w.-]+)"
    # YARN's aggregated logs (``yarn logs -applicationId``): "Container: container_e31_..._000002
    # on hdp-dn-07.corp.example_45454", then that container's files, each between "LogType:stderr"
    # and "End of LogType:stderr" (hadoop-yarn-common, AggregatedLogFormat / LogToolUtils).
    r"|Container: (?P<f>container_\w+) on [\w.:-]+"
    # A terminal's capture (tmux capture-pane, screen, script(1)) of panes one after
    # another: a shell prompt that runs python starts each process's output
    # ("dev@ws-ranker:~/regress$ python train.py --shard none").
    r"|[\w.-]+@[\w.-]+:[^\n$#]*[$#] (?P<g>[^\n]*\bpython[\w.]*\b[^\n]*)"
    # A shell's or make's echo of the command that starts one task with its
    # TF_CONFIG, before that task's output (make -j --output-sync, a script's set -x):
    # "TF_CONFIG='{...\"task\": {\"type\": \"worker\", \"index\": 0}}' python3 train.py".
    # ``pdsh ... | dshbak`` and ``clush -b``: the host between two rules of dashes, on lines
    # of their own ("----------------" / "gpu-3" or "node[1-2] (2)" / "----------------").
    r"|-{3,}[ \t]*\n(?P<h>[\w.@:\[\],-]+(?: \(\d+\))?)[ \t]*\n-{3,}"
    r"|(?:\+ |\$ )?(?P<e>TF_CONFIG=(?:'[^'\n]*'|\"(?:[^\"\\\n]|\\.)*\")\s+[^\n]*?\bpython[\w.]*\b[^\n]*))[ \t]*$",
    re.M,
)
_STARTED = re.compile(r"Started server with target: |Coordination agent has successfully connected")


def _sectioned(text: str) -> bool:
    """Two or more banners, each followed by a process's own TensorFlow start."""
    heads = list(_SECTION.finditer(text))
    if len({_banner(m) for m in heads}) < 2:
        return False
    bodies = [
        text[m.end() : (heads[i + 1].start() if i + 1 < len(heads) else len(text))]
        for i, m in enumerate(heads)
    ]
    return sum(bool(_STARTED.search(b)) for b in bodies) >= 2


def _banner(m: re.Match[str], line: int | None = None) -> str:
    if m["e"]:
        # The task its TF_CONFIG starts ("worker-0"), the section's writer.
        task = re.search(r'\\?"type\\?"\s*:\s*\\?"(\w+)\\?"\s*,\s*\\?"index\\?"\s*:\s*(\d+)', m["e"])
        return f"{task[1]}-{task[2]}" if task else m["e"].strip()
    if m["g"]:
        # The same command in each pane: the prompt's line in the file tells them apart
        # (``line``, where the match is of that line alone).
        line = line if line is not None else m.string.count("\n", 0, m.start()) + 1
        return f"$ {m['g'].strip()} (line {line})"
    return (m["a"] or m["b"] or m["c"] or m["d"] or m["f"] or m["h"] or m["i"] or "").strip()


# Inside a section, a runner's labels of the streams it captured (Bolt's "  STDOUT:",
# YARN's "LogType:stderr").
_STREAM_LABEL = re.compile(r"^\s*(?:(?P<stream>STDOUT|STDERR|stdout|stderr):|LogType:(?P<file>\S+))\s*$")
# YARN's framing of each container file: no line of the process's own.
_YARN_FRAMING = re.compile(
    r"^(?:LogAggregationType: \w+|LogLastModifiedTime:.*|LogLength:\d+|Log Contents:|End of LogType:\S+|=+)\s*$"
)


def _from_sections(text: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    source, stream = "", ""
    section: list[dict[str, Any]] = []
    # Where each banner starts (a line number) and how many lines it takes (dshbak's are three).
    banners: dict[int, tuple[str, int]] = {}
    first, at = 1, 0
    for m in _SECTION.finditer(text):
        first, at = first + text.count("\n", at, m.start()), m.start()
        banners[first] = (_banner(m, first), m.group().count("\n") + 1)
    skip = 0
    for n, line in enumerate(text.split("\n"), start=1):
        if skip:
            skip -= 1
            continue
        if n in banners:
            out += _dedented(section)
            (source, taken), stream, section = banners[n], "", []
            skip = taken - 1
            continue
        if (label := _STREAM_LABEL.match(line)) is not None:
            stream = (label["stream"] or _stream_of_path(label["file"]) or label["file"]).lower()
            continue
        if _YARN_FRAMING.match(line):
            continue
        if source and (o := _OCTOPUS_LINE.match(line)) is not None:
            # Octopus's columns: the time of day (the task's date in its header), the
            # level it logged the line at (a script's stderr as Error), the tree.
            when = f"{day}T{o['t']}Z" if (day := _task_day(text)) and o["t"] else ""
            level = "stderr" if o["level"] in ("Error", "Fatal") else "stdout" if o["level"] else stream
            section.append({"time": when, "source": source, "stream": level, "message": o["msg"], "line": n})
            continue
        if source:
            section.append({"time": "", "source": source, "stream": stream, "message": line, "line": n})
    return out + _dedented(section)


# An Octopus Deploy task log's line: "09:49:26   Error    |       <what the script printed>",
# or the tree's own "                    |     Failed: TRAIN-VM-02".
_OCTOPUS_LINE = re.compile(
    r"^(?:(?P<t>\d{2}:\d{2}:\d{2})\s+(?P<level>Verbose|Info|Warning|Error|Fatal|Highlight|Wait)\s+|\s+)\|(?: (?P<msg>.*))?$"
)
# Its header's date: "Task started: Saturday, 28 November 2026 09:49:16 AM +00:00".
_TASK_DAY = re.compile(
    r"^Task (?:started|queued):\s+(?:\w+, )?(?P<d>\d{1,2}) (?P<m>[A-Z][a-z]+) (?P<y>\d{4})", re.M
)
_MONTH_NAMES = {m: i for i, m in enumerate(
    ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
     "November", "December"), start=1)}  # fmt: skip


def _task_day(text: str) -> str:
    """The day an Octopus task ran, as ISO (its lines say the time of day only); "" when unsaid."""
    m = _TASK_DAY.search(text[:4096])
    if m is None or m["m"] not in _MONTH_NAMES:
        return ""
    return f"{m['y']}-{_MONTH_NAMES[m['m']]:02d}-{int(m['d']):02d}"


def _dedented(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A section's lines with the indentation they all share taken off (a
    runner that indents what each target printed)."""
    indents = [len(e["message"]) - len(e["message"].lstrip(" ")) for e in entries if e["message"].strip()]
    cut = min(indents, default=0)
    if cut:
        for e in entries:
            e["message"] = e["message"][cut:]
    return entries


# Markdown (an issue, a gist, a chat paste) with each process's output in a
# fenced block under a label of its own: a heading, a bold line, a
# <details><summary>, or a line of prose ("worker 1 printed:").
_FENCE = re.compile(r"^ {0,3}(?P<fence>`{3,}|~{3,})[^`\n]*$", re.M)
_MD_LABEL = re.compile(r"</?\w+[^>]*>|^[#>*_\s-]+|[*_:\s]+$")


def _blocks(text: str) -> list[tuple[str, str]]:
    """Each fenced block's label (the last line of text before it, its
    markup taken off) and body, in order."""
    return [(label, "\n".join(body)) for label, body, _ in _numbered_blocks(text)]


def _numbered_blocks(text: str) -> list[tuple[str, list[str], int]]:
    """Each fenced block's label, body lines and the number of its first line."""
    out: list[tuple[str, list[str], int]] = []
    label = ""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            if plain := _MD_LABEL.sub("", lines[i]).strip():
                label = plain
            i += 1
            continue
        fence = m["fence"]
        body: list[str] = []
        i += 1
        first = i + 1
        while i < len(lines) and not lines[i].lstrip().startswith(fence):
            body.append(lines[i])
            i += 1
        i += 1
        out.append((label or f"block {len(out) + 1}", body, first))
        label = ""
    return out


def _fenced(text: str) -> bool:
    """Two or more fenced blocks, each with a process's own TensorFlow start."""
    if text.count("```") + text.count("~~~") < 4 or len(_FENCE.findall(text)) < 4:
        return False
    return sum(bool(_STARTED.search(body)) for _, body in _blocks(text)) >= 2


def _from_markdown(text: str) -> list[dict[str, Any]]:
    return [
        {"time": "", "source": label, "stream": "", "message": line, "line": first + k}
        for label, body, first in _numbered_blocks(text)
        for k, line in enumerate(body)
    ]


# A chat's export (Slack's per-day channel files, Mattermost's, Discord's
# {"messages": [...]}): messages whose text holds fenced blocks of logs, each
# under a line that says whose they are. Slack writes the fences inline
# ("```WARNING: ...```") and escapes <, > and & as HTML does.
_CHAT_FENCE = re.compile(r'"(?:text|content|message)"\s*:\s*"(?:[^"\\]|\\.)*```')
_CHAT_TEXT = ("text", "content", "message")


def _from_chat(text: str) -> list[dict[str, Any]]:
    import html

    doc = json.loads(text)
    if isinstance(doc, dict):
        doc = next((v for v in doc.values() if isinstance(v, list)), [])
    texts = [
        t
        for m in doc if isinstance(m, dict)
        for t in [next((m[k] for k in _CHAT_TEXT if isinstance(m.get(k), str)), "")]
        if t
    ]  # fmt: skip
    joined = "\n\n".join(
        # A fence inline with its text is put on a line of its own.
        re.sub(r"```(?=[^\n`]*[^\w\n`])", "```\n", re.sub(r"(?<=[^\n`])```", "\n```", html.unescape(t)))
        for t in texts
    )
    return [{k: v for k, v in e.items() if k != "line"} for e in _from_markdown(joined)]


# An asciinema recording (asciicast v2/v3): a header, then [time, "o", "text"]
# events: what the terminal showed, chunk by chunk, each at its time (since the
# start in v2, since the event before in v3).
_ASCIICAST_HEAD = re.compile(r'\{[^\n]*"version": ?[23]\b[^\n]*"(?:width|term)"')


def _from_asciicast(text: str) -> list[dict[str, Any]]:
    import datetime as dt

    lines = text.splitlines()
    head = json.loads(lines[0])
    start = head.get("timestamp")
    relative = head.get("version") == 3
    out: list[dict[str, Any]] = []
    clock, pending, pending_at = 0.0, "", 0.0
    for raw in lines[1:]:
        try:
            t, kind, data = json.loads(raw)
        except (ValueError, TypeError):
            continue  # a comment, a marker, a line cut short
        clock = clock + float(t) if relative else float(t)
        if kind != "o" or not isinstance(data, str):
            continue
        if not pending:
            pending_at = clock
        pending += data.replace("\r\n", "\n")
        *done, pending = pending.split("\n")
        for line in done:
            when = (
                dt.datetime.fromtimestamp(float(start) + pending_at, dt.timezone.utc).isoformat()
                if isinstance(start, (int, float))
                else ""
            )
            out.append({"time": when, "source": "", "stream": "", "message": line})
            pending_at = clock
    if pending:
        out.append({"time": "", "source": "", "stream": "", "message": pending})
    return out


def _from_junit(text: str) -> list[dict[str, Any]]:
    """A JUnit XML report whose test cases each ran one process (pytest,
    Bazel, a CI's test step): each case's captured output, its failure after."""
    import xml.etree.ElementTree as ET

    out: list[dict[str, Any]] = []
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:  # cut short, or not XML after all: read as text instead
        raise ValueError(f"not well-formed XML ({exc})") from None
    for case in root.iter("testcase"):
        name = case.get("name") or case.get("classname") or ""
        for tag, stream in (("system-out", "stdout"), ("system-err", "stderr")):
            for node in case.iter(tag):
                out += [
                    {"time": "", "source": name, "stream": stream, "message": ln}
                    for ln in (node.text or "").splitlines()
                ]
        for tag in ("failure", "error"):
            for node in case.iter(tag):
                if msg := node.get("message"):
                    out.append({"time": "", "source": name, "stream": "", "message": f"{tag}: {msg}"})
    return out


def _from_ansible_adhoc(text: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    host = None
    for n, line in enumerate(text.split("\n"), start=1):
        if m := _ANSIBLE_ADHOC.match(line):
            host = m["host"]
        elif host is not None:
            out.append({"time": "", "source": host, "stream": "", "message": line, "line": n})
    return out


def _from_ansible(text: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    ended: dict[str, int] = {}
    rows = text.splitlines()
    i = 0
    while i < len(rows):
        m = _ANSIBLE_HEAD.match(rows[i])
        i += 1
        if m is None:
            continue
        body = [m["body"]]
        if m["body"].strip() == "{":
            while i < len(rows) and not rows[i].startswith("}"):
                body.append(rows[i])
                i += 1
            body.append("}")
            i += 1
        try:
            doc = json.loads("\n".join(body))
        except ValueError:
            continue
        out += [{"time": "", "source": m["host"], "stream": s, "message": ln} for s, ln in _printed(doc)]
        if isinstance(doc, dict) and isinstance(rc := doc.get("rc"), int) and not isinstance(rc, bool):
            ended[m["host"]] = rc
    # The command's return code, where the task gave one, after what it printed.
    out += [
        {"time": "", "source": h, "stream": "", "message": f"exited with code {rc}"}
        for h, rc in ended.items()
    ]
    return out


def to_json_lines(text: str, kind: str) -> str:
    """The export's entries as JSON lines in time order (oldest first; a
    viewer's newest-first listing is turned round, ties keep their order)."""
    return convert(text, kind)[0]


def convert(text: str, kind: str) -> tuple[str, list[int] | None]:
    """``to_json_lines``, and the line in the export each output line came
    from, where each came from one line and they keep the export's order (so
    a report's ``file:line`` is the export's own line); else None."""
    readers = {
        "json_document": _from_json,
        "ndjson": _from_ndjson,
        "csv": _from_csv,
        "logcli": _from_logcli,
        "ansible": _from_ansible,
        "ansible_adhoc": _from_ansible_adhoc,
        "otlp": _from_otlp,
        "sentry": _from_sentry,
        "junit": _from_junit,
        "mbox": _from_mbox,
        "sections": _from_sections,
        "markdown": _from_markdown,
        "asciicast": _from_asciicast,
        "tsv": _from_tsv,
        "fluentd": _from_fluentd,
        "chat": _from_chat,
    }
    # A terminal's colours (ansible's, a CI console's) are no part of the entries.
    text = strip_ansi(text)
    entries = readers[kind](text.replace("\r\n", "\n"))
    for e in entries:
        e["time"] = _iso(e["time"])
    # Newest first (most viewers) or interleaved (a search over several shards):
    # put in time order; entries of one time keep their order (reversed when
    # the export ran newest first, so a burst of lines reads as printed).
    times = [e["time"] for e in entries if e["time"]]
    pairs = list(zip(times, times[1:], strict=False))
    if sum(a > b for a, b in pairs) > sum(a < b for a, b in pairs):
        entries.reverse()
    if all(e["time"] for e in entries):
        entries.sort(key=lambda e: e["time"])
    numbers = [n for e in entries if isinstance(n := e.get("line"), int)]
    line_map: list[int] | None = None
    if (
        numbers
        and len(numbers) == len(entries)
        and all(a < b for a, b in zip(numbers, numbers[1:], strict=False))
    ):
        line_map = numbers
    text_out = "".join(
        json.dumps(
            {
                "time": e["time"],
                "message": e["message"],
                # No source named: the entries are the file's own (its name says whose).
                **({"kubernetes": {"pod": {"name": e["source"]}}} if e["source"] else {}),
                **({"stream": e["stream"]} if e["stream"] in ("stdout", "stderr") else {}),
            }  # fmt: skip
        )
        + "\n"
        for e in entries
    )
    return text_out, line_map

"""A worker's black box (``mwms-blackbox-<type>-<index>.jsonl``, written by
``mwms_doctor.capture``) as lines of a log, so the same readers and rules
read it as any log: each record one line behind its time, said in words the
catalogue knows (a version banner, a TF_CONFIG, a step with its timings, a
batch's fingerprint), each line marked ``[black box]`` so a report says
where its evidence came from.

A stall record's stacks are read here into where the worker's main thread
was: in TensorFlow (waiting in a collective, a step's ops) or in the
script's own code (a queue, a lock, a file), the frame named."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from ..capture import FILE_PREFIX, FILE_SUFFIX
from .frames import INPUT, TF, THREAD, frame, where
from .source import plain_name

MARK = "[black box]"


def is_blackbox(name: str) -> bool:
    """A black box file, by its name (compressed or not)."""
    name = plain_name(name)
    return name.startswith(FILE_PREFIX) and name.endswith(FILE_SUFFIX)


def _stamp(t: Any) -> str:
    try:
        when = dt.datetime.fromtimestamp(float(t), dt.timezone.utc)
    except (TypeError, ValueError, OverflowError, OSError):
        return ""
    return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ ")


def _num(value: Any, digits: int = 6) -> str:
    return f"{float(value):.{digits}g}" if isinstance(value, (int, float)) else "n/a"


def where_stuck(stacks: str, main_thread: Any) -> str:
    """Where the main thread was, in words: "in TensorFlow (file:line func)"
    (its input pipeline included), "in the script's own code (file:line
    func)", "in Python's library (...)", or "" when the dump has no main
    thread."""
    ident = f"0x{int(main_thread):016x}" if isinstance(main_thread, int) else None
    lines = stacks.split("\n")
    heads = [i for i, ln in enumerate(lines) if THREAD.match(ln)]
    for k, i in enumerate(heads):
        head = THREAD.match(lines[i])
        if ident is not None and head is not None and head["ident"] != ident:
            continue
        body = lines[i + 1 : heads[k + 1] if k + 1 < len(heads) else len(lines)]
        place, short = where([f for ln in body if (f := frame(ln))])
        if not place:
            return ""
        return f"{TF if place == INPUT else place} ({short})"
    return ""


def blackbox_text(text: str) -> str:
    """The black box's records as log lines, one line a record, so a line
    number in a report is the record's line in the black box (a line that is
    no record, the one being written when the process was killed, is left
    empty)."""
    out: list[str] = []
    for raw in text.splitlines():
        try:
            rec = json.loads(raw)
        except ValueError:
            rec = None
        at = _stamp(rec.get("t")) if isinstance(rec, dict) else ""
        out.append(_render(rec, at) if isinstance(rec, dict) and at else "")
    return "\n".join(out) + "\n" if any(out) else ""


def _render(rec: dict[str, Any], at: str) -> str:
    """One record in words, behind its time ("" for a kind not shown)."""
    task, kind = rec.get("task", "?"), rec.get("kind")
    if kind == "start":
        v = rec.get("versions") or {}
        parts = [f"tensorflow={v['tensorflow']}"] if v.get("tensorflow") else []
        parts += [
            f"{k}={v[k]}"
            for k in ("keras", "tf_keras", "python", "numpy", "cuda_version", "cudnn_version")
            if v.get(k)
        ]
        return f"{at}{MARK} {task} started on {rec.get('host', '?')} pid {rec.get('pid', '?')}: {', '.join(parts)}"
    if kind == "config" and rec.get("tf_config"):
        return f"{at}{MARK} {task} TF_CONFIG={rec['tf_config']}"
    if kind == "batch" and rec.get("rows") == 0:
        return f"{at}{MARK} {task} input ran out: batch {rec.get('n')} was empty (0 rows)"
    if kind == "batch":
        # No task in the line: every worker's line about the same batch reads alike.
        return f"{at}{MARK} batch {rec.get('n')} fingerprint {rec.get('fp')}"
    if kind == "step":
        mem = rec.get("memory") or {}
        peak = max((int(x) for x in mem.values() if isinstance(x, (int, float))), default=0)
        return (
            f"{at}{MARK} step {rec.get('step')} step_time_s={_num(rec.get('step_time_s'))} "
            f"input_wait_s={_num(rec.get('input_wait_s'))} loss={_num(rec.get('loss'), 8)} memory_peak_bytes={peak}"
        )
    if kind == "stall":
        where = where_stuck(str(rec.get("stacks") or ""), rec.get("main_thread"))
        return (
            f"{at}{MARK} no step ended for {_num(rec.get('quiet_s'), 4)} s after step "
            f"{rec.get('after_step')} (usual step {_num(rec.get('usual_step_s'), 3)} s): main thread "
            f"{where or 'not in the dump'}"
        )
    if kind == "end" and rec.get("reason") == "exception":
        message = " ".join(str(rec.get("message", "")).split())[:300]
        return f"{at}{MARK} {task} ended on an uncaught {rec.get('exception')}: {message}"
    if kind == "end":
        empty = f", {rec['empty_batches']} of them empty" if rec.get("empty_batches") else ""
        return (
            f"{at}{MARK} ended ({rec.get('reason')}) after {rec.get('steps')} steps, "
            f"{rec.get('batches')} batches{empty}"
        )
    return ""

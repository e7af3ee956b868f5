"""Where each worker's main thread was, from the thread dumps in its log.

A script that guards against hangs with Python's ``faulthandler``
(``faulthandler.dump_traceback_later(timeout)``, a ``SIGUSR1`` handler, or
``py-spy dump`` pasted into the log) prints every thread's stack when no
step ended in time, in CPython's own format (Modules/faulthandler.c)::

    Timeout (0:00:10)!
    Thread 0x00007f01aafad6c0 (most recent call first):
      File "/app/train.py", line 106 in gen
    Thread 0x00007f0274732b80 (most recent call first):
      File ".../tensorflow/python/ops/gen_dataset_ops.py", line 3081 in iterator_get_next
      ...
      File "/app/train.py", line 193 in <module>

The main thread is the one whose outermost frame is the script's module
(else the last one listed: CPython lists the newest thread first). Where
its innermost frame outside Python's own library is says what the worker
was doing when it stalled: waiting on its input pipeline, in TensorFlow
running a step (a collective waiting for a peer), or in the script's own
code. A hang where one worker waits on its input or sits in its own code
while every other worker is in TensorFlow's step is that worker's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from .facts import Job
from .ingest.blackbox import where_stuck
from .rows import Row, to_rows

_THREAD = re.compile(
    r"^(?:Current thread|Thread) (?P<ident>0x[0-9a-f]+)(?: \(most recent call first\))?:\s*$"
)
_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)\s*$')
_HEAD = r"^(?:Current thread|Thread) 0x[0-9a-f]+"
_LIBRARY_FRAME = re.compile(r"/(?:tensorflow|keras|tf_keras)/|site-packages/")
MAX_FRAMES = 400  # lines after a dump's last thread header read for its frames
# The input pipeline's own frames: a tf.data iterator waiting for its next element.
_INPUT = re.compile(r"gen_dataset_ops\.py|/data/ops/|/distribute/input_lib\.py|iterator_get_next")

INPUT = "waiting on its input pipeline"
OWN = "in the script's own code"
TF = "in TensorFlow"


@dataclass(frozen=True)
class MainThread:
    worker: str
    where: str  # INPUT, OWN, TF, or "" when it cannot be told
    frame: str  # the frame that says so ("gen_dataset_ops.py:3081 iterator_get_next")
    row: Row  # the dump's line that opens the main thread's stack


def _dumps(rows: list[Row]) -> list[list[tuple[Row, list[str]]]]:
    """The thread dumps in one file's rows (in file order): each a list of
    (the thread's header row, its frame lines innermost first)."""
    dumps: list[list[tuple[Row, list[str]]]] = []
    current: list[tuple[Row, list[str]]] | None = None
    expect: int | None = None
    for r in rows:
        first = str(r["text"]).split("\n", 1)[0]
        if _THREAD.match(first):
            if current is None or expect is None or r["line"] != expect:
                current = []
                dumps.append(current)
            frames = [ln for ln in str(r["text"]).split("\n")[1:] if _FRAME.match(ln)]
            current.append((r, frames))
            expect = int(r["end_line"] or r["line"]) + 1
        elif current is not None and expect is not None and r["line"] == expect and _FRAME.match(first):
            current[-1][1].extend(ln for ln in str(r["text"]).split("\n") if _FRAME.match(ln))
            expect = int(r["end_line"] or r["line"]) + 1
        else:
            expect = None
    return dumps


def main_threads(job: Job) -> dict[str, MainThread]:
    """Each worker's main thread in the last thread dump of its log."""
    out: dict[str, MainThread] = {}
    ev = job.tables.events
    if ev.num_rows == 0:
        return out
    text = pc.cast(ev["text"], pa.string())
    heads = to_rows(ev.filter(pc.fill_null(pc.match_substring_regex(text, _HEAD), False)))
    places = sorted({(r["worker"], r["source"]) for r in heads if not str(r["worker"]).startswith("?")})
    for worker, source in places:
        lines = [int(r["line"]) for r in heads if r["worker"] == worker and r["source"] == source]
        mask = pc.and_(
            pc.and_(
                pc.equal(pc.cast(ev["worker"], pa.string()), worker),
                pc.equal(pc.cast(ev["source"], pa.string()), source),
            ),
            pc.and_(
                pc.greater_equal(ev["line"], min(lines)), pc.less_equal(ev["line"], max(lines) + MAX_FRAMES)
            ),
        )
        rows = sorted(to_rows(ev.filter(pc.fill_null(mask, False))), key=lambda r: r["line"])
        dumps = _dumps(rows)
        if not dumps:
            continue
        threads = dumps[-1]
        main = next((t for t in threads if t[1] and _outermost(t[1]) == "<module>"), threads[-1])
        row, frames = main
        header = str(row["text"]).split("\n", 1)[0]
        ident = int(_THREAD.match(header)["ident"], 16)  # type: ignore[index]
        said = where_stuck("\n".join([header, *frames]), ident)
        frame = said[said.find("(") + 1 : -1] if "(" in said else ""
        if said.startswith("in TensorFlow"):
            library = [f for f in frames if _LIBRARY_FRAME.search(f)]
            where = INPUT if library and _INPUT.search(library[0]) else TF
        elif said.startswith("in the script's own code"):
            where = OWN
        else:
            where = ""
        out[worker] = MainThread(worker, where, frame, row)
    return out


def _outermost(frames: list[str]) -> str:
    m = _FRAME.match(frames[-1])
    return m["func"] if m else ""

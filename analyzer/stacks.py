"""Where each worker's main thread was, from the thread dumps in its log.

A script that guards against hangs with Python's ``faulthandler``
(``faulthandler.dump_traceback_later(timeout)``, a ``SIGUSR1`` handler) or a
person who ran ``py-spy dump`` on each worker leaves every thread's stack in
the log. faulthandler's format (CPython, Modules/faulthandler.c)::

    Timeout (0:00:10)!
    Thread 0x00007f0274732b80 (most recent call first):
      File ".../tensorflow/python/ops/gen_dataset_ops.py", line 3081 in iterator_get_next
      File "/app/train.py", line 193 in <module>

and py-spy's (benfred/py-spy, src/dump.rs)::

    Thread 5021 (idle): "MainThread"
        iterator_get_next (tensorflow/python/ops/gen_dataset_ops.py:3081)
        <module> (train.py:193)

The main thread is the one py-spy names ``MainThread``, else the one whose
outermost frame is the script's module, else the last one listed (CPython
lists the newest thread first). Where its innermost frame outside Python's
own library is says what the worker was doing when it stalled: waiting on
its input pipeline, in TensorFlow running a step (a collective waiting for
a peer), or in the script's own code. A hang where one worker waits on its
input or sits in its own code while every other worker is in TensorFlow's
step is that worker's.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from .facts import Job
from .ingest.frames import INPUT, OWN, TF, THREAD, Frame, frame, where
from .rows import Row, to_rows

__all__ = ["INPUT", "OWN", "TF", "MainThread", "main_threads"]

# The header of a thread's stack in either format, as an Arrow (RE2) search.
_HEAD = r"(?m)^(?:Current thread|Thread) (?:0x[0-9a-fA-F]+|\d+)"
MAX_FRAMES = 400  # lines after a dump's last thread header read for its frames


@dataclass(frozen=True)
class MainThread:
    worker: str
    where: str  # INPUT, OWN, TF, or "" when it cannot be told
    frame: str  # the frame that says so ("gen_dataset_ops.py:3081 iterator_get_next")
    row: Row  # the dump's line that opens the main thread's stack


def _dumps(rows: list[Row]) -> list[list[tuple[Row, str, list[Frame]]]]:
    """The thread dumps in one file's rows (in file order): each a list of
    (the record that holds the thread's header, its name or "", its frames
    innermost first). A dump may stand in records of its own or be folded
    into the record before it (a logging call's continuation lines)."""
    dumps: list[list[tuple[Row, str, list[Frame]]]] = []
    current: list[tuple[Row, str, list[Frame]]] | None = None
    last: int | None = None  # the file line of the dump's last header or frame
    last_row = -1  # the index (in ``rows``) of the record that holds it
    for i, r in enumerate(rows):
        for k, ln in enumerate(str(r["text"]).split("\n")):
            no = int(r["line"]) + k
            # (a blank line or two between threads, as py-spy prints them, keeps the
            # dump; so do other workers' lines between this one's in a merged
            # stream: its next record, whatever the file lines between)
            near = last is not None and (no <= last + 3 or (i == last_row + 1 and k == 0 and no > last))
            if head := THREAD.match(ln):
                if current is None or not near:
                    current = []
                    dumps.append(current)
                current.append((r, head["name"] or "", []))
                last, last_row = no, i
            elif current is not None and near and (f := frame(ln)):
                current[-1][2].append(f)
                last, last_row = no, i
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
        dumps = [d for d in _dumps(rows) if any(frames for _, _, frames in d)]
        if not dumps:
            continue
        threads = dumps[-1]
        main = next(
            (t for t in threads if t[1] == "MainThread"),
            next((t for t in threads if t[2] and t[2][-1][2] == "<module>"), threads[-1]),
        )
        place, said = where(main[2])
        out[worker] = MainThread(worker, place if place in (INPUT, OWN, TF) else "", said, main[0])
    return out

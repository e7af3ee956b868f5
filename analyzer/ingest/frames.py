"""Stack frames as Python's thread dumps print them, and where a stack was.

Two formats: CPython's faulthandler (Modules/faulthandler.c), which the
black box (``mwms_doctor.capture``) also records, and py-spy's ``dump``
(benfred/py-spy, src/dump.rs)::

    Thread 0x00007f0274732b80 (most recent call first):
      File ".../tensorflow/python/ops/gen_dataset_ops.py", line 3081 in iterator_get_next

    Thread 5021 (idle): "MainThread"
        iterator_get_next (tensorflow/python/ops/gen_dataset_ops.py:3081)

Where a stack was is its innermost frame outside Python's own library (a
queue's get, a lock's wait: who called it decides): in TensorFlow (and
under it, waiting on the input pipeline) or in the script's own code."""

from __future__ import annotations

import re

# A thread's header in either format (py-spy names the thread: "MainThread").
THREAD = re.compile(
    r"^(?:Current thread|Thread) (?P<ident>0x[0-9a-fA-F]+|\d+)"
    r"(?: \(most recent call first\)| \([^)]*\))?(?:: \"(?P<name>[^\"]*)\"|:)\s*$"
)
_FAULTHANDLER_FRAME = re.compile(r'^\s*File "(?P<file>[^"]+)", line (?P<line>\d+) in (?P<func>\S+)\s*$')
_PYSPY_FRAME = re.compile(r"^\s+(?P<func>\S+) \((?P<file>[^()]+?):(?P<line>\d+)\)\s*$")
# TensorFlow's stack (and the libraries it runs on), by a full path or py-spy's short one.
_LIBRARY = re.compile(r"(?:^|/)(?:tensorflow|keras|tf_keras|absl|numpy|tensorflow_io)/|site-packages/")
# Python's own library, by a full path or py-spy's short one.
_STDLIB = re.compile(
    r"/lib/python\d\.\d+/(?!site-packages)|<frozen |^(?:threading|queue|selectors|socket|subprocess|"
    r"ssl|time|contextlib|functools)\.py$|^(?:concurrent|multiprocessing|asyncio|importlib|http|urllib)/"
)
# The input pipeline's own frames: a tf.data iterator waiting for its next element.
_INPUT = re.compile(r"gen_dataset_ops\.py|(?:^|/)data/ops/|/distribute/input_lib\.py|iterator_get_next")

INPUT = "waiting on its input pipeline"
OWN = "in the script's own code"
TF = "in TensorFlow"
STDLIB = "in Python's library"

Frame = tuple[str, str, str]  # file, line, function


def frame(line: str) -> Frame | None:
    """One frame of a thread dump, in either format."""
    m = _FAULTHANDLER_FRAME.match(line) or _PYSPY_FRAME.match(line)
    return (m["file"], m["line"], m["func"]) if m else None


def where(frames: list[Frame]) -> tuple[str, str]:
    """Where a stack (innermost frame first) was: INPUT, TF, OWN, or STDLIB
    when every frame is Python's own; with the frame that says so
    ("gen_dataset_ops.py:3081 iterator_get_next"). ("", "") for no frames."""
    for file, line, func in frames:
        if _STDLIB.search(file):
            continue
        short = f"{file.rsplit('/', 1)[-1]}:{line} {func}"
        if not _LIBRARY.search(file):
            return OWN, short
        return (INPUT if _INPUT.search(file) or _INPUT.search(func) else TF), short
    if frames:
        file, line, func = frames[0]
        return STDLIB, f"{file.rsplit('/', 1)[-1]}:{line} {func}"
    return "", ""

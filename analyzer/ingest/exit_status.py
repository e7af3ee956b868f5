"""Exit records: how a worker's process ended, as its scheduler or launcher saw it.

Accepted shapes (one file per worker, beside its log):

* a bare number: ``137``
* ``key: value`` lines, keys case-insensitive, as a launcher or
  ``kubectl describe pod`` prints them: ``exit_code: 137`` / ``Exit Code: 137``,
  ``signal: SIGKILL``, ``reason: OOMKilled``, ``note: free text``.
"""

from __future__ import annotations

import contextlib
import re
import signal
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ExitStatus:
    code: int | None
    signal: str | None
    note: str | None


# The names an exit record has: ``exit_code`` in a worker's folder, ``worker-1.exit`` beside its log.
EXIT_NAMES = ("exit_code", "exitcode", "exit_status")
EXIT_SUFFIXES = (".exit", ".exitcode")


def is_exit_record(name: str) -> bool:
    """A file named as an exit record, compressed or not (its content is read later)."""
    from .source import plain_name

    name = plain_name(name)
    return name in EXIT_NAMES or name.endswith(EXIT_SUFFIXES)


_KV = re.compile(r"^\s*([A-Za-z][\w ]*?)\s*[:=]\s*(.*?)\s*$")


def read_exit_status(path: Path) -> ExitStatus:
    from .source import detect

    with detect(path).open() as fh:
        text = fh.read(64 << 10).decode("utf-8", "replace")  # an exit record is a line or two
    code: int | None = None
    sig: str | None = None
    notes: list[str] = []
    stripped = text.strip()
    if re.fullmatch(r"-?\d+", stripped):
        code = int(stripped)
    else:
        for line in text.splitlines():
            m = _KV.match(line)
            if not m:
                continue
            key, value = m[1].lower().replace(" ", "_"), m[2]
            if key in ("exit_code", "exitcode", "code", "returncode") and re.fullmatch(r"-?\d+", value):
                code = int(value)
            elif key == "signal":
                sig = value
            elif key in ("reason", "note", "message"):
                notes.append(value)
    if code is not None:
        code = shell_code(code)
    if sig is None:
        sig = signal_of(code)
    return ExitStatus(code, sig, "; ".join(notes) or None)


def shell_code(code: int) -> int:
    """An exit code as the shell gives it: Python's returncode for a signal
    (-9) is the shell's 128 + 9."""
    return 128 - code if code < 0 else code


def signal_of(code: int | None) -> str | None:
    """The signal an exit code names by the shell's and Kubernetes' convention
    (128 + the signal's number): 137 is SIGKILL. None for ordinary codes."""
    if code is None or code <= 128:
        return None
    with contextlib.suppress(ValueError):
        return signal.Signals(code - 128).name
    return None

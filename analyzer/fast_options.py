"""``mwms-doctor analyze``'s options, for the console script's fast path (``entry.py``).

Generated from the typer declarations in ``cli.py`` by ``python scripts/fast_options.py``;
``tests/test_entry.py`` fails when this file is not what the declarations give. Do not edit.
"""

from __future__ import annotations

from pathlib import Path

from .commands import OutputFormat, Redaction
from .fastparse import Opt, at_least_float, at_least_int, size_bytes

OPTIONS: dict[str, Opt] = {
    "--out": Opt("out", Path),
    "-o": Opt("out", Path),
    "--format": Opt("fmt", OutputFormat),
    "-f": Opt("fmt", OutputFormat),
    "--name": Opt("name", str),
    "--no-files": Opt("no_files", None),
    "--jobs": Opt("jobs", at_least_int(1)),
    "-j": Opt("jobs", at_least_int(1)),
    "--profile": Opt("profile", None),
    "--redact": Opt("redact", Redaction),
    "--no-redact": Opt("no_redact", None),
    "--fail-on": Opt("fail_on", str),
    "--junit": Opt("junit", Path),
    "--max-expand": Opt("max_expand", size_bytes),
    "--out-inside": Opt("out_inside", None),
    "--as-one-job": Opt("as_one_job", None),
    "--max-ratio": Opt("max_ratio", at_least_float(1.0)),
}

DEFAULTS: dict[str, object] = {
    "out": Path("reports"),
    "fmt": OutputFormat.text,
    "name": None,
    "no_files": False,
    "jobs": None,
    "profile": False,
    "redact": Redaction.secrets,
    "no_redact": False,
    "fail_on": None,
    "junit": None,
    "max_expand": 17179869184,
    "out_inside": False,
    "as_one_job": False,
    "max_ratio": 200.0,
}

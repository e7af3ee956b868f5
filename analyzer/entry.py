"""The console script's entry (``mwms-doctor``, ``python -m mwms_doctor``).

``mwms-doctor analyze JOB`` is the command people run most, often on a small
job, where start-up is most of its time; loading typer (and the pydantic it
builds option converters with) costs as much as the analysis. So a plain
``analyze`` command line is read by ``fastparse`` from the generated table of
``analyze``'s options and runs at once; anything else goes to the typer app.
One exception handler for both: a bug is exit 3 with one line and a crash
file, never a traceback on the terminal; Ctrl-C is exit 130.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from .console import EXIT_INTERRUPTED, EXIT_OK, echo, exit_now, internal_error


def main(hard_exit: bool = True) -> None:
    """Run the command line in ``sys.argv`` and exit with its code.

    Once a fast ``analyze`` is done (its reports written and closed, its worker
    processes joined, its temporary files gone) the process ends at once,
    without the interpreter's teardown of every module pyarrow and numpy
    loaded; ``hard_exit=False`` (tests calling this in process) exits normally."""
    argv = sys.argv[1:]
    fast = False
    try:
        kw = _plain_analyze(argv)
        if kw is not None:
            from .commands import analyze_command

            fast = True
            code = analyze_command(**kw)
        else:
            code = _typer_app()
    except KeyboardInterrupt:
        echo("mwms-doctor: interrupted (a triage writes the jobs it finished)", err=True)
        code = EXIT_INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - whatever the bug, the user gets one line and exit 3
        code = internal_error(exc)
    if fast and hard_exit:
        exit_now(code)
    sys.exit(code)


def _plain_analyze(argv: list[str]) -> dict[str, Any] | None:
    if argv[:1] != ["analyze"]:
        return None
    from .fast_options import DEFAULTS, OPTIONS
    from .fastparse import parse

    return parse(argv[1:], OPTIONS, DEFAULTS)


def _typer_app() -> int:
    """The typer app, its usage errors printed as typer prints them (exit 2)."""
    import typer

    from .cli import app

    try:
        rv = app(standalone_mode=False)
    except typer.Abort as exc:
        raise KeyboardInterrupt from exc
    except Exception as exc:
        if hasattr(exc, "exit_code") and hasattr(exc, "show"):  # a usage error: typer says it, exit 2
            if isinstance(getattr(exc, "message", None), str):
                exc.message = plain_usage_error(exc.message)  # type: ignore[attr-defined]
            exc.show()
            return int(exc.exit_code)
        raise
    return rv if isinstance(rv, int) else EXIT_OK


# The option converters' own words (pydantic's), as a person would say them.
_PLAIN = (
    (re.compile(r"\bValue error, "), ""),
    (re.compile(r"Input should be greater than or equal to (\S+)"), r"must be \1 or more"),
    (re.compile(r"Input should be less than or equal to (\S+)"), r"must be \1 or less"),
    (
        re.compile(r"Input should be a valid integer(?:, unable to parse string as an integer)?"),
        "must be a whole number",
    ),
    (
        re.compile(r"Input should be a valid number(?:, unable to parse string as a number)?"),
        "must be a number",
    ),
)


def plain_usage_error(message: str) -> str:
    for pattern, words in _PLAIN:
        message = pattern.sub(words, message)
    return message


if __name__ == "__main__":
    main()

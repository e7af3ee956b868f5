"""Write analyzer/fast_options.py from the typer declarations of `analyze`
(cli.py): the console script's fast path reads its options from there.

    python scripts/fast_options.py          # rewrite it
    python scripts/fast_options.py --check  # exit 1 when it is stale
"""

from __future__ import annotations

import sys
from pathlib import Path

from mwms_doctor.cli import fast_options_source

TARGET = Path(__file__).resolve().parent.parent / "analyzer" / "fast_options.py"

if __name__ == "__main__":
    text = fast_options_source()
    if "--check" in sys.argv:
        sys.exit(0 if TARGET.read_text() == text else 1)
    TARGET.write_text(text)
    print(f"wrote {TARGET}")

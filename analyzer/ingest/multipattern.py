"""Many regexes, one pass: hyperscan databases, compiled once and cached.

The scanner (``scan``) and the template classifier (``templates``) both ask
"which of these ~80 patterns match this text" over and over. Hyperscan
answers that in one pass over the text. Compiling a database takes about
half a second, so a compiled one is kept in the user's cache folder
(``$MWMS_DOCTOR_CACHE``, ``$XDG_CACHE_HOME/mwms-doctor`` or
``~/.cache/mwms-doctor``), keyed by the patterns and the library's version.

``MWMS_DOCTOR_SCAN_ENGINE=re2`` turns hyperscan off (the callers then use
RE2 through pyarrow, or Python's ``re``), as does a missing wheel.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path
from typing import Any


def wanted() -> str:
    """``hyperscan``, ``re2`` or ``auto`` (hyperscan when it loads)."""
    return os.environ.get("MWMS_DOCTOR_SCAN_ENGINE", "auto").lower()


def hyperscan_module() -> Any | None:
    """The hyperscan module, or None when it is off or not installed."""
    if wanted() == "re2":
        return None
    try:
        import hyperscan
    except ImportError:
        if wanted() == "hyperscan":
            raise
        return None
    return hyperscan


def cache_dir() -> Path:
    base = os.environ.get("MWMS_DOCTOR_CACHE")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "mwms-doctor"


def database(hs: Any, exprs: list[bytes], ids: list[int], flags: list[int]) -> Any:
    """A block-mode database of ``exprs``, from the cache when it is there."""
    key = hashlib.sha256(repr((exprs, ids, flags, getattr(hs, "__version__", ""))).encode()).hexdigest()[:24]
    cached = cache_dir() / f"patterns-{key}.hsdb"
    if cached.is_file():
        try:
            db = hs.loadb(cached.read_bytes(), mode=hs.HS_MODE_BLOCK)
            db.scratch = hs.Scratch(db)  # a loaded database comes without one
            return db
        except Exception:  # noqa: BLE001 - a stale or damaged cache entry is rebuilt
            pass
    db = hs.Database(mode=hs.HS_MODE_BLOCK)
    db.compile(expressions=exprs, ids=ids, flags=flags)
    try:
        cached.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=cached.parent, prefix=".tmp-", delete=False) as tmp:
            tmp.write(hs.dumpb(db))
        os.replace(tmp.name, cached)
    except OSError:
        pass  # a read-only home: compile every time
    return db

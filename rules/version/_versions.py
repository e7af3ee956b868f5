"""Shared by the version rules: each worker's versions, and who is in the minority."""

from __future__ import annotations

from collections import Counter

from mwms_doctor.findings import Evidence
from mwms_doctor.query import env_rows, workers
from mwms_doctor.tables import JobTables

# Packages whose version must match across workers (pip names, lower case).
PACKAGES = ("tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tf-keras", "keras", "protobuf", "numpy")


def versions(tables: JobTables) -> dict[str, dict[str, tuple[str, Evidence | None]]]:
    """component -> worker -> (version, where it was read)."""
    out: dict[str, dict[str, tuple[str, Evidence | None]]] = {}
    for w, row in workers(tables).items():
        if w.startswith("?"):
            continue
        for comp, col in (("TensorFlow", "tf_version"), ("Python", "python_version")):
            if row.get(col):
                out.setdefault(comp, {})[w] = (str(row[col]), None)
    for r in env_rows(tables, ["package", "gpu"]):
        key = str(r["key"]).lower()
        comp = key if key in PACKAGES else ("CUDA" if key.endswith("cuda_version") else "")
        if (
            not comp
            or str(r["worker"]).startswith("?")
            or comp in ("tensorflow", "tensorflow-cpu", "tensorflow-gpu")
        ):
            continue
        ev = Evidence(
            r["worker"],
            r["source"],
            r["line"] or 0,
            r["line"] or 0,
            None,
            f"{r['key']}=={r['value']}",
            "version",
        )
        out.setdefault(comp, {}).setdefault(r["worker"], (str(r["value"]), ev))
    return out


def differing(tables: JobTables) -> dict[str, tuple[dict[str, str], list[str]]]:
    """component -> ({worker: version}, minority workers) for components that differ."""
    out = {}
    for comp, by_worker in versions(tables).items():
        values = {w: v for w, (v, _) in by_worker.items()}
        counts = Counter(values.values())
        if len(counts) < 2:
            continue
        common, n = counts.most_common(1)[0]
        ties = [v for v, c in counts.items() if c == n]
        minority = sorted(values) if len(ties) > 1 else sorted(w for w, v in values.items() if v != common)
        out[comp] = (values, minority)
    return out

"""Shared by the version rules: each worker's versions, and who is in the minority."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from mwms_doctor.facts import Job
from mwms_doctor.findings import Evidence
from mwms_doctor.rows import env_evidence, evidence
from mwms_doctor.tables import first_of_each
from mwms_doctor.text import mask_column

# Packages whose version must match across workers (pip names, lower case).
# TensorFlow's own version is the workers table's (banners first, then pip).
PACKAGES = ("tf-keras", "keras", "protobuf", "numpy")


def versions(job: Job) -> dict[str, dict[str, tuple[str, Evidence | None]]]:
    """component -> worker -> (version, where it was read)."""
    out: dict[str, dict[str, tuple[str, Evidence | None]]] = {}
    for w, row in job.facts.workers.items():
        if w.startswith("?"):
            continue
        for comp, col in (("TensorFlow", "tf_version"), ("Python", "python_version")):
            if row.get(col):
                out.setdefault(comp, {})[w] = (str(row[col]), None)
    for r in job.rows.env(["package", "gpu"]):
        key = str(r["key"]).lower()
        comp = key if key in PACKAGES else ("CUDA" if key.endswith("cuda_version") else "")
        if not comp or str(r["worker"]).startswith("?"):
            continue
        ev = env_evidence(r, f"{r['key']}=={r['value']}", "version")
        out.setdefault(comp, {}).setdefault(r["worker"], (str(r["value"]), ev))
    return out


def differing(job: Job) -> dict[str, tuple[dict[str, str], list[str]]]:
    """component -> ({worker: version}, minority workers) for components that differ."""
    out = {}
    leader = job.facts.leader
    for comp, by_worker in versions(job).items():
        values = {w: v for w, (v, _) in by_worker.items()}
        if len(set(values.values())) < 2:
            continue
        out[comp] = (values, _minority(values, leader))
    if not out and (builds := build_fingerprints(job)) is not None:
        values, _ = builds
        out["TensorFlow build (from its log lines)"] = (values, _minority(values, leader))
    return out


def _minority(values: dict[str, str], leader: str | None) -> list[str]:
    """The workers on a version fewer workers run than another. With no
    majority (two workers, or as many on each side), the job's own build is
    taken to be the leader's, the one it was launched and coordinated from:
    the others are the odd ones."""
    counts = Counter(values.values())
    common, n = counts.most_common(1)[0]
    if len([v for v, c in counts.items() if c == n]) == 1:
        return sorted(w for w, v in values.items() if v != common)
    if leader in values:
        return sorted(w for w, v in values.items() if v != values[leader])
    return sorted(values)


def build_fingerprints(job: Job) -> tuple[dict[str, str], list[Evidence]] | None:
    """Which TensorFlow *build* each worker runs, read from its own C++ log lines.

    TF prints where each message comes from (``grpc_server_lib.cc:467]``). One
    message printed from another line number of the same file on another
    worker means another build of that file: a different TensorFlow. Workers
    are grouped by the line numbers of the messages they share. Returns
    ({worker: build label}, evidence of one differing message on each side),
    or None when every worker agrees (or there is nothing to compare)."""
    seen: dict[tuple[str, str], dict[str, tuple[str, int]]] = {}
    for r in _first_by_message(job):
        seen.setdefault((r["file"], r["msg"]), {}).setdefault(r["worker"], (r["line"], r["i"]))
    groups: dict[str, set[str]] = {}
    differing: list[tuple[tuple[str, str], dict[str, tuple[str, int]]]] = []
    for key, by_worker in seen.items():
        if len(by_worker) < 2:
            continue
        if len({line for line, _ in by_worker.values()}) > 1:
            differing.append((key, by_worker))
    if not differing:
        return None
    # A worker's build label: the line numbers it printed for the differing messages.
    labels: dict[str, str] = {}
    for w in sorted({w for _, bw in differing for w in bw}):
        labels[w] = ",".join(f"{k[0]}:{bw[w][0]}" if w in bw else "?" for k, bw in differing)
    for w, label in labels.items():
        groups.setdefault(label, set()).add(w)
    if len(groups) < 2:
        return None
    key, by_worker = differing[0]
    ev = []
    shown: set[str] = set()
    for _w, (line, i) in sorted(by_worker.items(), key=lambda kv: kv[0]):
        if line not in shown:
            shown.add(line)
            ev.append(evidence(job.rows.at(i), f"printed from {key[0]}:{line}"))
    names = {
        label: f"build {chr(ord('A') + i)}"
        for i, label in enumerate(sorted(groups, key=lambda g: -len(groups[g])))
    }
    return {w: names[label] for w, label in labels.items()}, ev


def _first_by_message(job: Job) -> list[dict[str, Any]]:
    """For each C++ source file, masked message and worker, the first event
    (``i``: its row in the events table) and the line number it was printed
    from, in the order of the events. Computed in Arrow: a log that printed a
    warning a million times gives one row here, not a million."""
    ev = job.tables.events
    if ev.num_rows == 0:
        return []
    where = pc.extract_regex(
        pc.cast(ev["origin"], pa.string()), r"(?:^|/)(?P<file>[^/]+\.(?:cc|h)):(?P<line>\d+)$"
    )
    found = pc.fill_null(pc.is_valid(where), False)
    # Only the events printed from a C++ file are masked (a few in a hundred
    # in a long Python-heavy log; masking is most of this function's time).
    rows_of_cc = pc.indices_nonzero(found)
    where = where.take(rows_of_cc)
    table = pa.table(
        {
            "i": rows_of_cc.cast(pa.int64()),
            "worker": pc.cast(ev["worker"].take(rows_of_cc), pa.string()),
            "file": pc.struct_field(where, "file"),
            "line": pc.struct_field(where, "line"),
            "msg": pc.utf8_slice_codeunits(mask_column(ev["text"].take(rows_of_cc)), 0, 100),
        }
    )
    picked = table.take(first_of_each(table, ["file", "msg", "worker"]))
    rows: list[dict[str, Any]] = picked.to_pylist()
    return sorted(rows, key=lambda r: r["i"])

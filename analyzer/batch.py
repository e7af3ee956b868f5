"""Batch triage: many failed jobs in one run, one index page, one table.

Each job goes through the one-job pipeline (``pipeline.run_job``), the very
same one ``analyze`` uses, so a job's row says what ``analyze`` of it alone
says. Around it, triage adds:

* finding the jobs under one or more roots (by default each immediate
  subfolder of a root is one job, whatever it holds; ``depth`` goes deeper);
* a process pool over jobs (``jobs``; one process per core by default): the
  interpreter and the compiled matchers are paid once per process, not once
  per job; rows come back in the order of the jobs, whatever the pool did;
* per job, its reports under ``jobs/<unique name>/``, written as it finishes;
* a recurring-failure *signature*: the class, the root's role and the masked
  template of the root's first error; jobs sharing one are one cluster;
* ``triage.jsonl`` and ``triage.parquet`` (schema ``TRIAGE_SCHEMA``,
  versioned) and ``index.html``;
* with ``since`` (a previous triage's folder), each cluster is new,
  recurring, or gone.

A job that cannot be analysed is a row with ``status: error`` and the reason;
the run goes on.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TRIAGE_SCHEMA_VERSION = 1
# The columns of triage.jsonl / triage.parquet, in order, with their meaning.
COLUMNS: dict[str, str] = {
    "job": "the job's path as found under its root (the root's own name first)",
    "status": "healthy | failure | warning | error (the job could not be analysed)",
    "class": "the failure class (stable id, as in the JSON report); empty for an error",
    "root_workers": "the workers where the failure started",
    "confidence": "0..1, the verdict's confidence",
    "first_failure_ts": "when the failure started (ISO 8601, UTC), or empty",
    "signature": "class | root's role | masked template of the root's first error: what recurs",
    "cluster": "short id of the signature (the same failure in every job and every night)",
    "recurrence": "new | recurring (with --since: seen in the previous triage) | empty",
    "first_seen": "when this signature was first seen failing: carried over from --since triages",
    "summary": "the verdict in one sentence",
    "report": "the job's HTML report, relative to the triage folder",
    "error": "why the job could not be analysed (status error)",
}


@dataclass(frozen=True)
class JobRef:
    path: str  # a local folder, or an fsspec URL (s3://bucket/nightly/job-17)
    name: str  # how the job is shown: its path under the root, the root's name first
    storage_options: tuple[tuple[str, Any], ...] = ()  # for fsspec (an endpoint, credentials)

    @property
    def remote(self) -> bool:
        return is_url(self.path)


def is_url(text: str) -> bool:
    return "://" in text and not text.startswith("file://")


def find_jobs(
    roots: Iterable[str | Path], depth: int = 1, storage_options: dict[str, Any] | None = None
) -> list[JobRef]:
    """The jobs under each root: its folders ``depth`` levels down (1: each
    immediate subfolder is a job), or the paths listed in a text file given
    as a root. A root may be an fsspec URL (``s3://``, ``gs://``,
    ``memory://``). Hidden folders are not jobs."""
    out: list[JobRef] = []
    opts = tuple(sorted((storage_options or {}).items()))
    for root in roots:
        text = str(root)
        if is_url(text):
            out += _remote_jobs(text, depth, storage_options or {}, opts)
            continue
        local = Path(text.removeprefix("file://"))
        if local.is_file():
            base = local.parent
            for line in local.read_text(encoding="utf-8", errors="replace").splitlines():
                line = line.strip()
                if line and not line.startswith("#"):
                    target = line if is_url(line) or Path(line).is_absolute() else str(base / line)
                    out.append(JobRef(target, line, opts))
            continue
        level = [local]
        for _ in range(max(depth, 1)):
            level = [
                c
                for d in level
                for c in sorted(d.iterdir())
                if c.is_dir() and not c.is_symlink() and not c.name.startswith(".")
            ]
        out += [JobRef(str(p), f"{local.name}/{p.relative_to(local).as_posix()}", opts) for p in level]
    return out


def _remote_jobs(
    url: str, depth: int, options: dict[str, Any], opts: tuple[tuple[str, Any], ...]
) -> list[JobRef]:
    import fsspec

    fs, base = fsspec.core.url_to_fs(url, **options)
    base = base.rstrip("/")
    protocol = url.split("://", 1)[0]
    level = [base]
    for _ in range(max(depth, 1)):
        level = sorted(
            e["name"].rstrip("/")
            for d in level
            for e in fs.ls(d, detail=True)
            if e["type"] == "directory" and not e["name"].rstrip("/").rsplit("/", 1)[-1].startswith(".")
        )
    root_name = base.rsplit("/", 1)[-1]
    return [JobRef(f"{protocol}://{p}", f"{root_name}/{p[len(base) + 1 :]}", opts) for p in level]


def signature(cls: str, root_workers: list[str], first_error: str) -> str:
    from .text import mask_message

    role = root_workers[0].split(":", 1)[0] if root_workers else "-"
    return f"{cls} | {role} | {mask_message(first_error)[:160]}"


def cluster_id(sig: str) -> str:
    return hashlib.sha256(sig.encode("utf-8", "surrogateescape")).hexdigest()[:10]


def _job_dir_name(ref: JobRef, taken: set[str]) -> str:
    from .report import safe_name

    base = safe_name(ref.name.replace("/", "__"))
    name = base
    if name in taken:
        name = f"{base}-{hashlib.sha256(str(ref.path).encode('utf-8', 'surrogateescape')).hexdigest()[:8]}"
    taken.add(name)
    return name


def triage_one(ref: JobRef, folder: str, redact: str = "secrets") -> tuple[dict[str, Any], dict[str, str]]:
    """Analyse one job with the one-job pipeline: its row (status error with
    the reason when it cannot be analysed) and its reports (file name ->
    text), for whoever writes the triage folder. A job on object storage is
    copied to a temporary folder first, file by file, and the copy removed."""
    from .errors import UserError
    from .pipeline import run_job
    from .redact import text_redactor
    from .report import FORMATS, render

    shown = text_redactor(redact)
    row: dict[str, Any] = dict.fromkeys(COLUMNS, "")
    row.update(job=shown(ref.name), root_workers=[], confidence=0.0)
    try:
        if ref.remote:
            with tempfile.TemporaryDirectory(prefix="mwms-triage-") as tmp:
                local = _fetch(ref, Path(tmp))
                result = run_job(local, None, name="report", jobs=1, redact=redact)
        else:
            result = run_job(Path(ref.path), None, name="report", jobs=1, redact=redact)
    except UserError as exc:
        row.update(status="error", error=shown(exc.message))
        return row, {}
    except Exception as exc:  # noqa: BLE001 - one job's failure (even a bug of ours) must not stop the night
        bug = "" if isinstance(exc, OSError) else "internal error (a bug in mwms-doctor): "
        row.update(status="error", error=shown(f"{bug}{type(exc).__name__}: {exc}"))
        return row, {}
    files = {f"report.{fmt}": render(result.model, fmt) for fmt in FORMATS}
    v = result.model.verdict
    analysis = result.analysis
    root = analysis.root
    if root is not None and root.evidence:
        first = root.evidence[0].text
    elif analysis.unexplained:
        first = analysis.unexplained[0].text
    else:
        first = ""
    sig = shown(signature(v["class"], v["root_workers"], first)) if v["status"] != "healthy" else "healthy"
    row.update(
        status=v["status"],
        **{"class": v["class"]},
        root_workers=list(v["root_workers"]),
        confidence=float(v["confidence"]),
        first_failure_ts=v["first_failure_ts"] or "",
        signature=sig,
        cluster=cluster_id(sig),
        summary=v["summary"],
        report=f"jobs/{folder}/report.html",
    )
    return row, files


def _fetch(ref: JobRef, into: Path) -> Path:
    """Copy a job from object storage into a local folder, file by file."""
    import fsspec

    fs, base = fsspec.core.url_to_fs(ref.path, **dict(ref.storage_options))
    base = base.rstrip("/")
    job = into / "job"
    job.mkdir()
    for name in fs.find(base):
        rel = name[len(base) + 1 :]
        if not rel or any(part in ("", ".", "..") for part in rel.split("/")):
            continue
        target = job / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        fs.get_file(name, str(target))
    return job


def _triage_task(args: tuple[JobRef, str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    return triage_one(*args)


Progress = Callable[[int, int], None]


def run_triage(
    roots: list[Path] | list[str] | list[str | Path],
    out: Path,
    depth: int = 1,
    jobs: int | None = None,
    since: Path | None = None,
    redact: str = "secrets",
    progress: Progress | None = None,
    scheduler: str | None = None,
    storage_options: dict[str, Any] | None = None,
) -> list[dict[str, Any]]:
    """Triage every job under ``roots`` into ``out``; the rows, in job order.
    ``scheduler``: a dask.distributed scheduler address (``tcp://host:8786``)
    to run the jobs on instead of a local process pool."""
    from .ingest.logfile import cores

    refs = find_jobs(roots, depth, storage_options)
    out.mkdir(parents=True, exist_ok=True)
    taken: set[str] = set()
    tasks = [(ref, _job_dir_name(ref, taken), redact) for ref in refs]
    rows: list[dict[str, Any] | None] = [None] * len(tasks)

    def done(i: int, result: tuple[dict[str, Any], dict[str, str]]) -> None:
        row, files = result
        _write_job(out, tasks[i][1], files)
        rows[i] = row

    workers = cores() if jobs is None else max(1, jobs)
    interrupted = False
    try:
        if scheduler:
            _on_dask(scheduler, tasks, done, progress)
        elif workers == 1 or len(tasks) < 2:
            for i, task in enumerate(tasks):
                done(i, _triage_task(task))
                if progress:
                    progress(i + 1, len(tasks))
        else:
            _pooled(tasks, done, workers, progress)
    except KeyboardInterrupt:
        interrupted = True  # what is done is written, then the interruption goes on
    finished = [r for r in rows if r is not None]
    _mark_recurrence(finished, since)
    write_outputs(finished, out, since, interrupted=len(finished) < len(tasks))
    if interrupted:
        raise KeyboardInterrupt
    return finished


def _write_job(out: Path, folder: str, files: dict[str, str]) -> None:
    from .report import write_atomic

    if not files:
        return
    where = out / "jobs" / folder
    where.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        write_atomic(where / name, text)


Done = Callable[[int, tuple[dict[str, Any], dict[str, str]]], None]


def _pooled(
    tasks: list[tuple[JobRef, str, str]], done: Done, workers: int, progress: Progress | None
) -> None:
    import concurrent.futures as cf
    import multiprocessing as mp

    from .ingest import scan
    from .ingest.templates import classify

    scan.engine()  # built once, before the pool forks
    classify("")
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
    # A few tasks in flight per process, not all of them: a finished task's
    # reports are written and dropped at once, so memory stays flat in the
    # number of jobs (10 000 futures holding their reports would not).
    in_flight = workers * 4
    with cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
        pending: dict[cf.Future[tuple[dict[str, Any], dict[str, str]]], int] = {}
        queue = iter(enumerate(tasks))
        n = 0
        while True:
            for i, t in queue:
                pending[pool.submit(_triage_task, t)] = i
                if len(pending) >= in_flight:
                    break
            if not pending:
                break
            finished, _ = cf.wait(pending, return_when=cf.FIRST_COMPLETED)
            for fut in finished:
                done(pending.pop(fut), fut.result())
                n += 1
                if progress:
                    progress(n, len(tasks))


def _on_dask(
    scheduler: str, tasks: list[tuple[JobRef, str, str]], done: Done, progress: Progress | None
) -> None:
    """The same tasks on a dask.distributed cluster: each reads its own job
    (a shared path or URL) and sends back its row and reports."""
    from distributed import Client, as_completed

    with Client(scheduler) as client:  # type: ignore[no-untyped-call]
        futures: list[Any] = client.map(_triage_task, tasks, pure=False)
        index = {f.key: i for i, f in enumerate(futures)}
        for n, fut in enumerate(as_completed(futures), start=1):  # type: ignore[no-untyped-call]
            i = index[fut.key]
            done(i, fut.result())
            futures[i] = None  # written: let the cluster forget it
            fut.release()
            if progress:
                progress(n, len(tasks))


def _previous(since: Path | None) -> dict[str, dict[str, Any]]:
    """The previous triage's clusters: cluster id -> its first row."""
    if since is None:
        return {}
    path = since / "triage.jsonl" if since.is_dir() else since
    prev: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row.get("cluster"):
            prev.setdefault(row["cluster"], row)
    return prev


def _mark_recurrence(rows: list[dict[str, Any]], since: Path | None) -> None:
    """New or recurring (with ``since``), and since when each signature fails:
    the earliest time of this run, or of the previous triages it carries."""
    prev = _previous(since)
    earliest: dict[str, str] = {}
    for r in rows:
        ts = r["first_failure_ts"]
        if r["cluster"] and ts and (r["cluster"] not in earliest or ts < earliest[r["cluster"]]):
            earliest[r["cluster"]] = ts
    for r in rows:
        if not r["cluster"] or r["status"] in ("healthy", "error"):
            continue
        before = prev.get(r["cluster"], {})
        seen = [
            t
            for t in (
                earliest.get(r["cluster"], ""),
                before.get("first_seen") or before.get("first_failure_ts"),
            )
            if t
        ]
        r["first_seen"] = min(seen) if seen else ""
        if since is not None:
            r["recurrence"] = "recurring" if before else "new"


def clusters(rows: list[dict[str, Any]], since: Path | None = None) -> list[dict[str, Any]]:
    """Jobs grouped by signature, biggest first; with ``since``, the clusters
    of the previous triage that are gone are listed last."""
    groups: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r["status"] in ("healthy", "error") or not r["cluster"]:
            continue
        g = groups.setdefault(
            r["cluster"],
            {
                "cluster": r["cluster"],
                "signature": r["signature"],
                "class": r["class"],
                "jobs": [],
                "first_seen": "",
                "recurrence": r["recurrence"],
            },
        )
        g["jobs"].append(r)
        ts = r["first_seen"] or r["first_failure_ts"]
        if ts and (not g["first_seen"] or ts < g["first_seen"]):
            g["first_seen"] = ts
    out = sorted(groups.values(), key=lambda g: (-len(g["jobs"]), g["signature"]))
    if since is not None:
        now = set(groups)
        for cid, row in _previous(since).items():
            if cid not in now and row.get("status") not in ("healthy", "error"):
                out.append(
                    {
                        "cluster": cid,
                        "signature": row["signature"],
                        "class": row["class"],
                        "jobs": [],
                        "first_seen": row.get("first_failure_ts", ""),
                        "recurrence": "gone",
                    }
                )
    return out


def arrow_table(rows: list[dict[str, Any]]) -> Any:
    import pyarrow as pa

    schema = pa.schema(
        [
            pa.field("job", pa.string()),
            pa.field("status", pa.string()),
            pa.field("class", pa.string()),
            pa.field("root_workers", pa.list_(pa.string())),
            pa.field("confidence", pa.float64()),
            pa.field("first_failure_ts", pa.timestamp("ms", tz="UTC")),
            pa.field("signature", pa.string()),
            pa.field("cluster", pa.string()),
            pa.field("recurrence", pa.string()),
            pa.field("first_seen", pa.timestamp("ms", tz="UTC")),
            pa.field("summary", pa.string()),
            pa.field("report", pa.string()),
            pa.field("error", pa.string()),
        ],
        metadata={
            "mwms_doctor.triage_schema_version": str(TRIAGE_SCHEMA_VERSION),
            **{f"doc.{k}": v for k, v in COLUMNS.items()},
        },
    )

    def ts(value: str) -> dt.datetime | None:
        if not value:
            return None
        return dt.datetime.fromisoformat(value.replace("Z", "+00:00"))

    cols: dict[str, list[Any]] = {f.name: [] for f in schema}
    for r in rows:
        for name in cols:
            cols[name].append(ts(r[name]) if name in ("first_failure_ts", "first_seen") else r[name])
    return pa.table(cols, schema=schema)


def write_outputs(
    rows: list[dict[str, Any]], out: Path, since: Path | None, interrupted: bool = False
) -> None:
    import pyarrow.parquet as pq

    from .report import write_atomic

    write_atomic(
        out / "triage.jsonl",
        "".join(
            json.dumps({"schema_version": TRIAGE_SCHEMA_VERSION, **r}, sort_keys=True) + "\n" for r in rows
        ),
    )
    tmp = out / ".triage.parquet.tmp"
    pq.write_table(arrow_table(rows), tmp)
    os.replace(tmp, out / "triage.parquet")
    write_atomic(
        out / "index.html", render_index(rows, clusters(rows, since), since is not None, interrupted)
    )


def render_index(
    rows: list[dict[str, Any]], groups: list[dict[str, Any]], with_since: bool, interrupted: bool
) -> str:
    from collections import Counter

    from .report.html import _env

    counts = Counter(r["class"] if r["status"] not in ("healthy", "error") else r["status"] for r in rows)
    by_cluster = {g["cluster"]: g for g in groups}
    ordered = sorted(
        rows,
        key=lambda r: (
            -len(by_cluster[r["cluster"]]["jobs"]) if r["cluster"] in by_cluster else 0,
            r["cluster"],
            r["job"],
        ),
    )
    from . import __version__

    return str(
        _env()
        .get_template("triage.html.j2")
        .render(
            rows=ordered,
            groups=groups,
            counts=sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])),
            total=len(rows),
            with_since=with_since,
            interrupted=interrupted,
            version=__version__,
            generated=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        )
    )

"""Running a triage: each job through the one-job pipeline
(``pipeline.run_job``), in a process pool or on a dask.distributed cluster;
each job's reports written as it finishes; the rows in job order."""

from __future__ import annotations

import datetime as dt
import hashlib
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .find import JobRef, fetch, find_jobs
from .group import FINGERPRINT_VERSION, cluster_id, signature
from .history import append_history, from_triage, mark_recurrence, night_iso, night_of, read_history
from .table import COLUMNS, arrow_table, write_outputs


def _job_dir_name(ref: JobRef, taken: set[str]) -> str:
    from ..report import safe_name

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
    from ..errors import UserError
    from ..pipeline import run_job
    from ..redact import text_redactor
    from ..report import FORMATS, render

    shown = text_redactor(redact)
    row: dict[str, Any] = dict.fromkeys(COLUMNS, "")
    row.update(job=shown(ref.name), root_workers=[], confidence=0.0, fingerprint_version=FINGERPRINT_VERSION)
    try:
        if ref.remote:
            with tempfile.TemporaryDirectory(prefix="mwms-triage-") as tmp:
                local = fetch(ref, Path(tmp))
                result = run_job(local, None, name="report", processes=1, redact=redact, as_one_job=False)
        else:
            result = run_job(
                Path(ref.path), None, name="report", processes=1, redact=redact, as_one_job=False
            )
    except UserError as exc:
        row.update(status="error", error=shown(exc.message))
        return row, {}
    except Exception as exc:  # noqa: BLE001 - one job's failure (even a bug of ours) must not stop the night
        bug = "" if isinstance(exc, OSError) else "internal error (a bug in mwms-doctor): "
        row.update(status="error", error=shown(f"{bug}{type(exc).__name__}: {exc}"))
        return row, {}
    # jobs/<folder>/report.html: the index is two folders up.
    files = {f"report.{fmt}": render(result.model, fmt, back="../../index.html") for fmt in FORMATS}
    v = result.model.verdict
    sig = job_signature(result, shown)
    row.update(
        status=v["status"],
        **{"class": v["class"]},
        root_workers=list(v["root_workers"]),
        confidence=float(v["confidence"]),
        first_failure_ts=v["first_failure_ts"] or "",
        signature=sig,
        cluster=cluster_id(sig),
        fingerprint_version=FINGERPRINT_VERSION,
        summary=v["summary"],
        report=f"jobs/{folder}/report.html",
    )
    return row, files


def job_signature(result: Any, shown: Callable[[str], str]) -> str:
    """The job's signature (``group.signature``) from its analysis: the root
    finding's evidence, else its first unexplained error; "healthy" for a
    healthy job. ``shown``: the redaction its text goes through."""
    v = result.model.verdict
    if v["status"] == "healthy":
        return "healthy"
    analysis = result.analysis
    root = analysis.root
    if root is not None and root.evidence:
        code, texts = root.code, [(e.role, shown(e.text)) for e in root.evidence]
    else:
        code, texts = "", [("cause", shown(e.text)) for e in analysis.unexplained[:1]]
    return shown(signature(v["class"], v["root_workers"], code, texts))


def _triage_task(args: tuple[JobRef, str, str]) -> tuple[dict[str, Any], dict[str, str]]:
    return triage_one(*args)


Progress = Callable[[int, int], None]


def run_triage(
    roots: list[Path] | list[str] | list[str | Path],
    out: Path,
    depth: int = 1,
    processes: int | None = None,
    since: Path | None = None,
    redact: str = "secrets",
    progress: Progress | None = None,
    scheduler: str | None = None,
    storage_options: dict[str, Any] | None = None,
    history: Path | None = None,
    night: dt.datetime | None = None,
) -> list[dict[str, Any]]:
    """Triage every job under ``roots`` into ``out``; the rows, in job order.
    ``scheduler``: a dask.distributed scheduler address (``tcp://host:8786``)
    to run the jobs on instead of a local process pool. ``history``: the
    folder that keeps every night's rows; ``night``: this night's time (now
    by default; a re-run with the same night replaces it there)."""
    from ..ingest.logfile import cores

    started = night or dt.datetime.now(dt.timezone.utc)
    refs = find_jobs(roots, depth, storage_options)
    out.mkdir(parents=True, exist_ok=True)
    taken: set[str] = set()
    tasks = [(ref, _job_dir_name(ref, taken), redact) for ref in refs]
    rows: list[dict[str, Any] | None] = [None] * len(tasks)

    def done(i: int, result: tuple[dict[str, Any], dict[str, str]]) -> None:
        row, files = result
        _write_job(out, tasks[i][1], files)
        rows[i] = row

    workers = cores() if processes is None else max(1, processes)
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
    if not interrupted:
        _forget_other_jobs(out, {t[1] for t in tasks})
    this_night = night_of(started)
    past = read_history(history, this_night) if history is not None else from_triage(since)
    mark_recurrence(finished, past)
    write_outputs(finished, out, past, interrupted=len(finished) < len(tasks), night=night_iso(this_night))
    if history is not None and not interrupted:
        append_history(history, this_night, arrow_table(finished))
    if interrupted:
        raise KeyboardInterrupt
    return finished


def _write_job(out: Path, folder: str, files: dict[str, str]) -> None:
    from ..report import write_atomic

    if not files:
        return
    where = out / "jobs" / folder
    where.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        write_atomic(where / name, text)


def _forget_other_jobs(out: Path, folders: set[str]) -> None:
    """A re-used ``--out`` ends with this run's jobs only: report folders an
    earlier run left there (nothing in them but reports) are removed; a
    folder holding anything else is left alone."""
    import shutil

    from ..report import FORMATS

    ours = {f"report.{fmt}" for fmt in FORMATS}
    jobs = out / "jobs"
    if not jobs.is_dir():
        return
    for d in jobs.iterdir():
        if d.is_dir() and d.name not in folders and {p.name for p in d.iterdir()} <= ours:
            shutil.rmtree(d)


Done = Callable[[int, tuple[dict[str, Any], dict[str, str]]], None]


def _pooled(
    tasks: list[tuple[JobRef, str, str]], done: Done, workers: int, progress: Progress | None
) -> None:
    import concurrent.futures as cf
    import multiprocessing as mp

    from ..ingest import scan
    from ..ingest.templates import classify

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

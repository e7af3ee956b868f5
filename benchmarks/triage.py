"""Triage benchmark: a night of many failed jobs, on one machine.

    python benchmarks/triage.py                  # 1000 jobs: --jobs 1 and the default
    python benchmarks/triage.py --jobs-n 10000   # 10 000 jobs (default pool only)
    python benchmarks/triage.py --nights 0 365   # 1000 jobs against 0 and 365 nights of --history

Builds N jobs by copying the recorded runs (``fixtures/runs``, real TF 2.21
output) under varied names (``2026-11-23/job-00042-oom``), then times
``mwms-doctor triage`` over them: wall time, jobs per second and the peak RSS
summed over every process of the run (sampled from /proc). With several N
(``--jobs-n 1000 3000``) it shows how time grows with the number of jobs.

``--nights`` times the same night against a ``--history`` of that many
earlier nights: the first is written by a real triage of these jobs, the
others are its partition under other nights' names, with one signature in
ten made that night's own (so the signatures ever seen grow with the nights,
as a year of new bugs would make them).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "fixtures" / "runs"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from throughput import timed  # noqa: E402  (the same RSS-summing timer)


def build(root: Path, n: int) -> int:
    """N job folders copied from the recorded runs, round robin; total bytes."""
    runs = sorted(p for p in RUNS.iterdir() if (p / "logs").is_dir())
    night = root / "2026-11-23"
    night.mkdir(parents=True)
    total = 0
    for i in range(n):
        run = runs[i % len(runs)]
        dest = night / f"job-{i:05d}-{run.name}"
        shutil.copytree(run / "logs", dest)
        total += sum(p.stat().st_size for p in dest.rglob("*") if p.is_file())
    return total


def build_history(history: Path, first: Path, nights: int) -> None:
    """``nights`` partitions before 2026-11-23 from one real night's rows."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    table = pq.read_table(first / "triage.parquet")
    cluster = table.column("cluster")
    own = pc.equal(pc.bit_wise_and(pa.array(range(len(table))), 7), 0)  # one row in eight
    day = dt.datetime(2026, 11, 23, 2, 0, tzinfo=dt.timezone.utc)
    for k in range(1, nights + 1):
        name = (day - dt.timedelta(days=k)).strftime("%Y%m%dT%H%M%SZ")
        renamed = pc.if_else(own, pc.binary_join_element_wise(cluster, pa.scalar(f"-{k}"), ""), cluster)
        part = history / f"night={name}"
        part.mkdir(parents=True)
        pq.write_table(
            table.set_column(table.schema.get_field_index("cluster"), "cluster", renamed),
            part / "part-0.parquet",
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--jobs-n", type=int, nargs="+", default=[1000], help="how many jobs (several: one run each)"
    )
    ap.add_argument(
        "--serial",
        action="store_true",
        default=None,
        help="also time --jobs 1 (default: for 1000 jobs or fewer)",
    )
    ap.add_argument(
        "--nights",
        type=int,
        nargs="+",
        help="instead: the default pool against a --history of this many earlier nights (several: one run each)",
    )
    args = ap.parse_args()
    exe = shutil.which("mwms-doctor") or str(Path(sys.executable).with_name("mwms-doctor"))
    print(f"cores: {os.cpu_count()}")
    for n in args.jobs_n:
        with tempfile.TemporaryDirectory(prefix="mwms-triage-bench-") as tmp:
            work = Path(tmp)
            t0 = time.perf_counter()
            size = build(work / "jobs", n)
            print(f"built {n} jobs ({size / 1e6:.0f} MB) in {time.perf_counter() - t0:.1f} s")
            if args.nights:
                history_runs(exe, work, n, args.nights)
                continue
            modes = [["--jobs", "1"]] if (args.serial or (args.serial is None and n <= 1000)) else []
            modes.append([])
            for extra in modes:
                out = work / f"out{'-serial' if extra else ''}"
                secs, peak, proc = timed(
                    [exe, "triage", str(work / "jobs" / "2026-11-23"), "--out", str(out), *extra]
                )
                if proc.returncode not in (0, 1):
                    sys.exit(f"benchmark: triage failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
                label = "--jobs 1" if extra else "default (one process per core)"
                print(
                    f"{n:6} jobs, {label:32} {secs:7.1f} s  {n / secs:6.1f} jobs/s  "
                    f"peak RSS {peak / 2**20:5.0f} MiB (all processes)"
                )
    return 0


def history_runs(exe: str, work: Path, n: int, nights_list: list[int]) -> None:
    jobs = str(work / "jobs" / "2026-11-23")
    for nights in nights_list:
        history = work / f"history-{nights}"
        if nights:
            first = work / "first"
            if not (first / "triage.parquet").is_file():
                timed([exe, "triage", jobs, "--out", str(first)])
            build_history(history, first, nights)
        out = work / f"out-{nights}"
        cmd = [
            exe,
            "triage",
            jobs,
            "--out",
            str(out),
            "--history",
            str(history),
            "--night",
            "2026-11-23T02:00Z",
        ]
        secs, peak, proc = timed(cmd)
        if proc.returncode not in (0, 1):
            sys.exit(f"benchmark: triage failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
        print(
            f"{n:6} jobs, {nights:4} nights of history  {secs:7.1f} s  {n / secs:6.1f} jobs/s  "
            f"peak RSS {peak / 2**20:5.0f} MiB (all processes)"
        )


if __name__ == "__main__":
    sys.exit(main())

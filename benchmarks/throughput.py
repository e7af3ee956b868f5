"""Throughput benchmark: analyze a big job and grep it for the same signatures.

    python benchmarks/throughput.py                 # 64 workers x 50 MB, as in the README
    python benchmarks/throughput.py --workers 8 --mb 10 --repeat 1

Builds a job from recorded real TensorFlow output (``fixtures/runs``): each
worker's log is a real recorded log of a failed job (``peer_killed``: its
start-up, then its real failure at the end), with its training section (real
Keras ``verbose=1`` progress-bar lines, epoch lines and epoch-end lines from
a recorded ``verbose=1`` run) repeated in between until the file reaches its
size. Then, on the same files and in the same run, it times

* ``grep -E -c -f SIGNATURES`` with the analyzer's own signature list, and
* ``mwms-doctor analyze`` (the whole CLI: discovery, ingest, rules, HTML/JSON/MD),

and prints both times, their ratio and the analyzer's peak RSS. Files are in
the page cache for both (they were just written, and grep goes first).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "fixtures" / "runs"
FAILURE_RUN = "peer_killed"
_EPOCH = re.compile(rb"^Epoch (\d+)/(\d+)", re.M)


def unwrapped(path: Path) -> bytes:
    """A recorded log with its collector's wrapper (CRI, kubectl prefix) peeled off."""
    from mwms_doctor.ingest.wrappers import detect, join_partials, unwrap

    lines = path.read_bytes().decode("utf-8", "replace").split("\n")
    chain = detect(lines)
    if not chain:
        return path.read_bytes()
    items = join_partials((n, unwrap(line, chain)) for n, line in enumerate(lines) if line)
    return "".join(u.text + "\n" for _, u in sorted(items, key=lambda x: x[0])).encode()


def training_section(run: Path) -> bytes:
    """Lines of one worker's log from its first epoch to its last epoch end."""
    log = unwrapped(sorted((run / "logs").rglob("*.log"))[0])
    first = _EPOCH.search(log)
    if first is None:
        sys.exit(f"benchmark: no 'Epoch N/M' line in {run}")
    body = log[first.start() :]
    # Training only: stop before the run's failure (its first warning, error or traceback).
    failure = re.search(rb"^(?:[WEF]\d{4} |Traceback)", body, re.M)
    if failure:
        body = body[: failure.start()]
    # Up to the end of the last complete epoch-end line.
    ends = [m.end() for m in re.finditer(rb"[^\n]*(?:ms/step - |s - )loss[^\n]*\n", body)]
    return body[: ends[-1]] if ends else body


def skeleton(worker: int) -> tuple[bytes, bytes, Path]:
    """(start-up part, failure part, exit record) of the recorded failed run."""
    role = min(worker, 2)  # worker:1 died; worker:0 led the cluster; the rest survived
    path = RUNS / FAILURE_RUN / "logs" / f"worker-{role}.log"
    log = path.read_bytes()
    epochs = list(_EPOCH.finditer(log))
    return log[: epochs[0].start()], log[epochs[-1].start() :], path.with_suffix(".exit")


_ABSL_TIME = re.compile(rb"(?<=^[IWEF]0000 00:00:)\d+\.\d+", re.M)
_ASCTIME = re.compile(rb"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}")


def build(out: Path, workers: int, size: int, body_run: Path) -> int:
    body = training_section(body_run)
    total = 0
    for i in range(workers):
        head, tail, exit_record = skeleton(i)
        # The filler comes from another recording: its TF lines are stamped at
        # the head's last time, so the job's clock still runs forward into the
        # failure (a worker is not seen "alive" after it died).
        stamps = _ABSL_TIME.findall(head)
        filler = body
        if stamps:
            at = dt.datetime.fromtimestamp(float(stamps[-1]), dt.timezone.utc)
            asctime = at.strftime("%Y-%m-%d %H:%M:%S,").encode() + b"%03d" % (at.microsecond // 1000)
            filler = _ASCTIME.sub(asctime, _ABSL_TIME.sub(stamps[-1], body))
        with open(out / f"worker-{i}.log", "wb") as fh:
            fh.write(head)
            epoch = 0
            while fh.tell() < size - len(tail) - len(filler):
                epoch += 1
                fh.write(_EPOCH.sub(lambda m, e=epoch: b"Epoch %d/100000" % e, filler))
            fh.write(tail)
            total += fh.tell()
        shutil.copy(exit_record, out / f"worker-{i}.exit")
    return total


def timed(cmd: list[str], **kw: object) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, **kw)  # type: ignore[call-overload]
    return time.perf_counter() - t0, proc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=64)
    ap.add_argument("--mb", type=float, default=50.0, help="size of each worker's log, in MB")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each; the median is reported")
    ap.add_argument(
        "--body", default="verbose_healthy", help="recorded run whose training lines fill the logs"
    )
    ap.add_argument("--dir", type=Path, help="build the job here and keep it (default: a temp dir, removed)")
    args = ap.parse_args()

    from mwms_doctor.ingest.signatures import grep_patterns

    work = args.dir or Path(tempfile.mkdtemp(prefix="mwms-bench-"))
    job = work / "job"
    job.mkdir(parents=True, exist_ok=True)
    sigs = work / "signatures.txt"
    sigs.write_text("\n".join(grep_patterns()) + "\n")
    t0 = time.perf_counter()
    total = build(job, args.workers, int(args.mb * 1e6), RUNS / args.body)
    print(f"built {args.workers} logs, {total / 1e6:.0f} MB in all, in {time.perf_counter() - t0:.1f} s")
    logs = sorted(str(p) for p in job.glob("*.log"))

    grep_s, an_s = [], []
    rss_mib = 0.0
    verdict = ""
    exe = shutil.which("mwms-doctor") or str(Path(sys.executable).with_name("mwms-doctor"))
    for _ in range(args.repeat):
        s, proc = timed(["grep", "-E", "-c", "-f", str(sigs), *logs])
        if proc.returncode not in (0, 1):
            sys.exit(f"benchmark: grep failed: {proc.stderr.decode()}")
        grep_s.append(s)
        grep_out = proc.stdout.decode()
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        s, proc = timed([exe, "analyze", str(job), "--out", str(work / "reports")])
        if proc.returncode not in (0, 1):
            sys.exit(f"benchmark: analyze failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
        an_s.append(s)
        after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        rss_mib = max(rss_mib, max(before, after) / 1024)
        verdict = proc.stdout.decode().splitlines()[0]
    matches = sum(int(line.rsplit(":", 1)[1]) for line in grep_out.splitlines())
    g, a = statistics.median(grep_s), statistics.median(an_s)
    print(f"cores: {os.cpu_count()}  runs: {args.repeat} (median)")
    print(
        f"grep -E -c -f ({len(grep_patterns())} signatures): {g:.2f} s  ({total / 1e6 / g:.0f} MB/s, {matches} matching lines)"
    )
    print(f"mwms-doctor analyze:                 {a:.2f} s  ({total / 1e6 / a:.0f} MB/s)")
    print(f"ratio analyze/grep: {a / g:.2f}  (target <= 2.0)")
    print(f"analyzer peak RSS: {rss_mib:.0f} MiB  (target < 512)")
    print(f"verdict: {verdict}")
    if args.dir is None:
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())

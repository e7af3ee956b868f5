"""Throughput benchmark: analyze a big job, and ripgrep and grep it for the same signatures.

    python benchmarks/throughput.py                      # 64 workers x 50 MB (3.2 GB), as in issue 12
    python benchmarks/throughput.py --workers 8 --mb 25  # a quicker look
    python benchmarks/throughput.py --hits 5000000       # 5 M matching lines: memory must stay flat
    python benchmarks/throughput.py --hits 50000000      # 50 M
    python benchmarks/throughput.py --hits 0             # no line matches: the pure scan
    python benchmarks/throughput.py --small              # only the small-job time (a recorded 3-worker job)
    python benchmarks/throughput.py --small --against OLD/bin/mwms-doctor   # and another install's

Builds a job from recorded real TensorFlow output (``fixtures/runs``): each
worker's log is a real recorded log of a failed job (``peer_killed``: its
start-up, then its real failure at the end), with a training section in
between that fills it to its size. By default the filler is the real Keras
``verbose=1`` output of a recorded run (progress bars, epoch lines, epoch
ends: about one line in five matches a signature). With ``--hits N`` it is
absl warning lines (each one a signature hit) mixed with plain prints that
match nothing, so that N lines of the job match in all.

Then, on the same files and in the same run, it times (median of ``--repeat``):

* ``rg -c -f SIGNATURES`` with 2 threads and with 1 (``apt-get install ripgrep``;
  skipped with a message where it is missing): the yardstick;
* ``grep -E -c -f SIGNATURES`` with ``LC_ALL=C`` (in a UTF-8 locale GNU grep
  is ten times slower, which would flatter the analyzer);
* ``mwms-doctor analyze --profile`` (the whole CLI: discovery, ingest, rules,
  HTML/JSON/MD), with its per-stage times;

and prints the times, the ratios to ripgrep, the analyzer's peak RSS summed
over all its processes (sampled from /proc every 20 ms), and the verdict.
Files are in the page cache for every tool (they were just written).
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import os
import re
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


_WARN = b"W1121 18:30:%02d.%06d 2795 ring_reducer.cc:%d] Slow all-reduce: step %d took longer than expected\n"
_PLAIN = b"user script progress: processed %d records of the current shard so far\n"


def build_hits(out: Path, workers: int, size: int, hits: int) -> int:
    """Each worker's recorded start-up and failure, with a filler in between
    in which ``hits`` lines (over the whole job) match a signature."""
    per_worker = hits // workers
    total = 0
    for i in range(workers):
        head, tail, exit_record = skeleton(i)
        room = max(0, size - len(head) - len(tail))
        with open(out / f"worker-{i}.log", "wb") as fh:
            fh.write(head)
            written = matched = n = 0
            chunk: list[bytes] = []
            while written < room or matched < per_worker:
                n += 1
                if matched < per_worker and (written >= room or n % 2 == 0 or per_worker * 70 >= room):
                    line = _WARN % (n % 60, n % 1000000, n % 900, n)
                    matched += 1
                else:
                    line = _PLAIN % n
                chunk.append(line)
                written += len(line)
                if len(chunk) >= 65536:
                    fh.write(b"".join(chunk))
                    chunk.clear()
            fh.write(b"".join(chunk))
            fh.write(tail)
            total += fh.tell()
        shutil.copy(exit_record, out / f"worker-{i}.exit")
    return total


def _descendants(root: int) -> list[int]:
    kids: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        kids.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(kids.get(pid, []))
    return out


def _rss(pids: list[int]) -> int:
    total, page = 0, os.sysconf("SC_PAGE_SIZE")
    for pid in pids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            total += int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * page
    return total


def timed(
    cmd: list[str], env: dict[str, str] | None = None
) -> tuple[float, int, subprocess.CompletedProcess[bytes]]:
    """(seconds, peak RSS summed over the process tree, the finished process).
    The tree is listed every 0.5 s and its RSS sampled every 50 ms, so the
    sampling itself takes little of the cores being measured."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env)
        peak, pids, listed = 0, [proc.pid], 0.0
        while proc.poll() is None:
            now = time.perf_counter()
            if now - listed > 0.5:
                pids, listed = _descendants(proc.pid), now
            peak = max(peak, _rss(pids))
            time.sleep(0.05)
        secs = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        done = subprocess.CompletedProcess(cmd, proc.returncode, out.read(), err.read())
    return secs, peak, done


def _run_times(cmd: list[str], n: int, env: dict[str, str]) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
        out.append(time.perf_counter() - t0)
    return out


def small_job(exe: str, repeat: int, against: str | None = None) -> None:
    """End-to-end CLI time of a small recorded job (3 workers, 35 KB),
    beside the floors no Arrow-based tool on this machine can go under: the
    interpreter's start and ``import pyarrow.compute``."""
    job = RUNS / "oom" / "logs"
    size = sum(p.stat().st_size for p in job.rglob("*") if p.is_file())
    # As a user's second run finds it: bytecode written (a first run writes it,
    # unless PYTHONDONTWRITEBYTECODE says not to).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    n = max(repeat, 15)
    with tempfile.TemporaryDirectory() as out:
        cmd = [exe, "analyze", str(job), "--out", out]
        _run_times(cmd, 2, env)
        if against:
            # Another install of the tool (an older commit) on the same job,
            # run turn about with this one so that the machine's drift (this
            # one's times vary by a third from minute to minute) hits both.
            other = [against, "analyze", str(job), "--out", out]
            _run_times(other, 2, env)
            mine: list[float] = []
            theirs: list[float] = []
            for _ in range(n):
                mine += _run_times(cmd, 1, env)
                theirs += _run_times(other, 1, env)
            rows = [("analyze, end to end", mine), (against, theirs)]
        else:
            rows = [("analyze, end to end", _run_times(cmd, n, env))]
        rows += [
            ("python -c pass", _run_times([sys.executable, "-c", "pass"], n, env)),
            ("import pyarrow.compute", _run_times([sys.executable, "-c", "import pyarrow.compute"], n, env)),
            (
                "import mwms_doctor.pipeline",
                _run_times([sys.executable, "-c", "import mwms_doctor.pipeline"], n, env),
            ),
        ]
    print(f"small job ({job.relative_to(ROOT)}, {size / 1e3:.0f} KB), {n} runs each:")
    for what, times in rows:
        print(f"  {what:28} median {statistics.median(times):.3f} s  best {min(times):.3f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, default=64)
    ap.add_argument("--mb", type=float, default=50.0, help="size of each worker's log, in MB")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each; the median is reported")
    ap.add_argument(
        "--body", default="verbose_healthy", help="recorded run whose training lines fill the logs"
    )
    ap.add_argument("--hits", type=int, help="lines matching a signature in the whole job (synthetic filler)")
    ap.add_argument("--small", action="store_true", help="only time the small job")
    ap.add_argument(
        "--against",
        metavar="EXE",
        help="with --small: also time this mwms-doctor executable (another commit's install) on the same job",
    )
    ap.add_argument("--no-grep", action="store_true", help="skip GNU grep (slow on big jobs)")
    ap.add_argument("--dir", type=Path, help="build the job here and keep it (default: a temp dir, removed)")
    args = ap.parse_args()

    from mwms_doctor.ingest.scan import engine
    from mwms_doctor.ingest.signatures import grep_patterns

    exe = shutil.which("mwms-doctor") or str(Path(sys.executable).with_name("mwms-doctor"))
    print(f"cores: {os.cpu_count()}  scan engine: {engine().name}  runs: {args.repeat} (median)")
    if args.small:
        small_job(exe, args.repeat, args.against)
        return 0
    work = args.dir or Path(tempfile.mkdtemp(prefix="mwms-bench-"))
    job = work / "job"
    job.mkdir(parents=True, exist_ok=True)
    sigs = work / "signatures.txt"
    sigs.write_text("\n".join(grep_patterns()) + "\n")
    t0 = time.perf_counter()
    size = int(args.mb * 1e6)
    if args.hits is None:
        total = build(job, args.workers, size, RUNS / args.body)
    else:
        total = build_hits(job, args.workers, size, args.hits)
    print(f"built {args.workers} logs, {total / 1e6:,.0f} MB in all, in {time.perf_counter() - t0:.1f} s")
    logs = sorted(str(p) for p in job.glob("*.log"))

    rg = shutil.which("rg")
    tools: dict[str, list[str]] = {}
    if rg:
        tools["rg -c -j2 -f"] = [rg, "-c", "-j2", "-f", str(sigs), *logs]
        tools["rg -c -j1 -f"] = [rg, "-c", "-j1", "-f", str(sigs), *logs]
    else:
        print("ripgrep is not installed (apt-get install ripgrep): its lines are skipped")
    if not args.no_grep:
        tools["LC_ALL=C grep -E -c -f"] = ["grep", "-E", "-c", "-f", str(sigs), *logs]
    tools["mwms-doctor analyze"] = [exe, "analyze", str(job), "--out", str(work / "reports"), "--profile"]
    env_c = {**os.environ, "LC_ALL": "C"}
    secs: dict[str, list[float]] = {name: [] for name in tools}
    rss: dict[str, int] = dict.fromkeys(tools, 0)
    outputs: dict[str, subprocess.CompletedProcess[bytes]] = {}
    for _ in range(args.repeat):
        for name, cmd in tools.items():
            s, peak, proc = timed(cmd, env_c if name.startswith("LC_ALL") else None)
            if proc.returncode not in (0, 1):
                sys.exit(f"benchmark: {name} failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
            secs[name].append(s)
            rss[name] = max(rss[name], peak)
            outputs[name] = proc
    counts = {
        name: sum(int(line.rsplit(":", 1)[1]) for line in proc.stdout.decode().splitlines() if ":" in line)
        for name, proc in outputs.items()
        if name != "mwms-doctor analyze"
    }
    med = {name: statistics.median(v) for name, v in secs.items()}
    an = med["mwms-doctor analyze"]
    print(f"{'tool':28} {'time':>8} {'MB/s':>7} {'peak RSS':>10}  matching lines")
    for name in tools:
        print(
            f"{name:28} {med[name]:7.2f}s {total / 1e6 / med[name]:7.0f} {rss[name] / 2**20:8.0f} MiB  "
            f"{counts.get(name, '')}"
        )
    for name in ("rg -c -j2 -f", "rg -c -j1 -f", "LC_ALL=C grep -E -c -f"):
        if name in med:
            print(
                f"ratio analyze / {name}: {an / med[name]:.2f}"
                + ("  (target <= 2.5)" if "j2" in name else "")
            )
    print(f"analyzer peak RSS, all processes: {rss['mwms-doctor analyze'] / 2**20:.0f} MiB  (target <= 512)")
    err = outputs["mwms-doctor analyze"].stderr.decode()
    stages = [line.split("profile:", 1)[1].strip() for line in err.splitlines() if "profile:" in line]
    print("analyzer stages (last run): " + "; ".join(" ".join(x.split()) for x in stages))
    print(f"verdict: {outputs['mwms-doctor analyze'].stdout.decode().splitlines()[0]}")
    if args.dir is None:
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())

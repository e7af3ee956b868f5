"""Layout invariance: the same evidence handed over in another real layout
must give the same verdict.

    python scripts/metamorphic.py                       # every recorded set
    python scripts/metamorphic.py fixtures/runs ...     # folders of runs
    python scripts/metamorphic.py --only combine-pipe   # one transform

A first-time score on a fresh blind batch says how well the tool reads
layouts it has never seen; this says, on every run already recorded, which
*kinds* of re-packaging change what it concludes. Each transform is one a
real platform applies to the same processes' output:

* ``gzip``: every file compressed (log rotation, an archive step);
* ``crlf``: Windows line ends (a console captured on Windows, nohup via WSL);
* ``nested``: the folder moved two levels down (``job-1234/attempt-0/``);
* ``targz``: the whole folder as one ``.tar.gz``;
* ``kubectl-ts``: every line behind an RFC 3339 nanosecond stamp, as
  ``kubectl logs --timestamps`` prints it;
* ``docker-json``: Docker's json-file driver (``{"log","stream","time"}``),
  the runtime's runtime records on stderr, the rest on stdout;
* ``split``: each worker's log as ``.out`` and ``.err`` (a batch system's two
  streams);
* ``combine-pipe`` / ``combine-bracket`` / ``combine-mpi``: every worker's
  log in one file, in time order, each line behind its worker's tag as
  docker compose, a fan-out script or ``mpirun --tag-output`` writes it;
* ``fluentbit``: a log shipper's export, every pod's lines in one JSON-lines
  file (Fluent Bit's kubernetes filter: ``date``, ``log``, ``kubernetes.pod_name``);
* ``kibana-csv``: Kibana Discover's CSV export, newest line first;
* ``dshbak``: ``pdsh | dshbak`` or ``clush -b``, each host's output as a block
  under a three-line banner naming it;
* ``syslog``: each worker's file through journald and rsyslog, every line
  behind ``Nov 27 22:11:07 <host> python3[<pid>]: ``;
* ``syslog-combined``: one syslog server's file of every host's lines.

The transforms that need each line's time and worker (the last five) run on
the runs whose every log file the tool gave to one worker; a line without a
time of its own takes the last time before it in its file (as a collector
stamps it when it reads it). The verdict compared is the class, the root
workers and the status; a difference is printed with both verdicts. Exit 0
always: this is a measuring tool, its figures go in the note.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.relayout import TRANSFORMS, Layout, verdict  # noqa: E402

# A blind batch joins once it has been scored (its first score is on file):
# reading one before would be reading its answers.
SETS = [ROOT / "fixtures" / "runs", ROOT / "fixtures" / "blind" / "runs"] + sorted(
    p / "runs"
    for p in (ROOT / "fixtures" / "blind").glob("batch_*")
    if (p / "runs").is_dir() and (p.parent / f"{p.name}_first_score.txt").exists()
)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sets", nargs="*", type=Path)
    ap.add_argument("--only", action="append", choices=sorted(TRANSFORMS))
    args = ap.parse_args(argv)
    names = args.only or list(TRANSFORMS)
    runs = [r for s in (args.sets or SETS) for r in sorted(s.iterdir()) if (r / "logs").is_dir()]
    tried = dict.fromkeys(names, 0)
    changed: dict[str, list[str]] = {n: [] for n in names}
    for run in runs:
        logs = run / "logs"
        base = verdict(logs)
        lay = None
        for name in names:
            fn, needs = TRANSFORMS[name]
            if needs:
                if lay is None:
                    try:
                        lay = Layout(logs)
                    except Exception:  # noqa: BLE001 - a run the tool refuses has no layout to move
                        lay = False  # type: ignore[assignment]
                if not lay or not lay.ok:
                    continue
            with tempfile.TemporaryDirectory(prefix="mwms-meta-") as tmp:
                out = Path(tmp) / "logs"
                if not fn(logs, out, lay):
                    continue
                got = verdict(out)
            tried[name] += 1
            if got != base:
                changed[name].append(f"{run.parent.parent.name}/{run.name}: {base} -> {got}")
        print(f"{run.parent.parent.name}/{run.name}: {base}", file=sys.stderr)
    print(f"\n{'transform':18} {'runs':>5} {'changed':>8}")
    for name in names:
        print(f"{name:18} {tried[name]:5} {len(changed[name]):8}")
    for name in names:
        for c in changed[name]:
            print(f"  {name}: {c}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

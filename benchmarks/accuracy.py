"""Diagnosis accuracy over every recorded run: class, root worker, false alarms.

    python benchmarks/accuracy.py [RUNS_DIR]      # default fixtures/runs

Each run's ``expected.json`` (written by the harness when it recorded the run)
says what was injected: the class and the root worker(s). The analyzer runs on
the run's ``logs/`` exactly as ``mwms-doctor analyze`` does. Printed: one line
per run, then class accuracy, root-worker accuracy (the verdict's root workers
equal the expected ones, as sets) and false alarms on healthy runs (a healthy
run whose verdict is not healthy, or that has any error or warning finding).
Exits 1 when any run is wrong, so it can gate a change.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from mwms_doctor.engine import analyze
from mwms_doctor.pipeline import load_tables

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> int:
    runs_dir = Path(argv[0]) if argv else ROOT / "fixtures" / "runs"
    runs = sorted(d for d in runs_dir.iterdir() if (d / "expected.json").exists())
    ok_class = ok_root = healthy = false_alarms = 0
    wrong: list[str] = []
    print(f"{'run':32} {'expected':22} {'got':22} {'root expected':>22} {'root got':>22}  s")
    for run in runs:
        expected = json.loads((run / "expected.json").read_text())
        t0 = time.perf_counter()
        tables, _ = load_tables(run / "logs")
        analysis = analyze(tables)
        secs = time.perf_counter() - t0
        v = analysis.verdict
        cls_ok = v.cls == expected["class"]
        root_ok = set(v.root_workers) == set(expected["root_workers"])
        ok_class += cls_ok
        ok_root += root_ok
        if expected["class"] == "healthy":
            healthy += 1
            alarms = [f for f in analysis.findings if f.severity in ("error", "warning")]
            if v.status != "healthy" or alarms:
                false_alarms += 1
                wrong.append(f"{run.name}: false alarm ({v.cls}; {[f.code for f in alarms]})")
        if not (cls_ok and root_ok):
            wrong.append(
                f"{run.name}: expected {expected['class']} {expected['root_workers']}, got {v.cls} {v.root_workers}"
            )
        mark = "" if cls_ok and root_ok else "  <-- WRONG"
        print(
            f"{run.name:32} {expected['class']:22} {v.cls:22} {','.join(expected['root_workers']) or '-':>22} "
            f"{','.join(v.root_workers) or '-':>22} {secs:4.1f}{mark}"
        )
    n = len(runs)
    classes = sorted({json.loads((r / "expected.json").read_text())["class"] for r in runs})
    print()
    print(f"runs: {n}, classes covered: {len(classes)} ({', '.join(classes)})")
    print(f"class accuracy:       {ok_class}/{n} = {ok_class / n:.1%}")
    print(f"root-worker accuracy: {ok_root}/{n} = {ok_root / n:.1%}")
    print(f"false alarms on healthy runs: {false_alarms}/{healthy}")
    for w in wrong:
        print("  " + w)
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

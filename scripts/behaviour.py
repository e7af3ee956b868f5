"""What the tool concludes on every recorded case, field by field: a snapshot
to compare two versions of the code by (a refactor must not change it).

    python scripts/behaviour.py --out /tmp/before.json          # this checkout
    python scripts/behaviour.py --out /tmp/after.json
    python scripts/behaviour.py --compare /tmp/before.json /tmp/after.json

Every recorded run (tuned and blind), every real excerpt and every rule
case with logs of its own is analysed as ``mwms-doctor analyze`` would
(discover, ingest, align, rules, report model) and reduced to what a user
reads: the verdict, each finding with its evidence locations and echoes,
the unexplained errors, the alternatives, each rule's status, and the
verdict as in the JSON report. Times are ISO strings.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
NOW = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)


def cases() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for run in sorted((FIXTURES / "runs").iterdir()):
        out[f"runs/{run.name}"] = run / "logs"
    for run in sorted((FIXTURES / "blind" / "runs").iterdir()):
        out[f"blind/{run.name}"] = run / "logs"
    for part in sorted((FIXTURES / "excerpts").iterdir()):
        if part.is_dir():
            for case in sorted(part.iterdir()):
                if (case / "excerpt.txt").exists():
                    out[f"excerpts/{part.name}/{case.name}"] = case / "excerpt.txt"
    for case in sorted((FIXTURES / "rules").glob("*/*")):
        if (case / "logs").is_dir():
            out[f"rules/{case.parent.name}/{case.name}"] = case / "logs"
    return out


def _ts(value: Any) -> str | None:
    return value.isoformat() if isinstance(value, dt.datetime) else None


def _ev(e: Any) -> list[Any]:
    return [e.worker, e.source, e.line, e.role]


def snapshot(path: Path) -> dict[str, Any]:
    from mwms_doctor.pipeline import run_job

    result = run_job(path, None, now=NOW)
    a = result.analysis
    v = a.verdict
    return {
        "verdict": {
            "status": v.status,
            "class": v.cls,
            "root_workers": list(v.root_workers),
            "confidence": v.confidence,
            "first_failure_ts": _ts(v.first_failure_ts),
            "summary": v.summary,
            "remedy": v.remedy,
            "missing": list(v.missing),
        },
        "findings": [
            {
                "code": f.code,
                "root_workers": list(f.root_workers),
                "severity": f.severity,
                "confidence": f.confidence,
                "first_ts": _ts(f.first_ts),
                "cascade_of": f.cascade_of,
                "summary": f.summary,
                "evidence": [_ev(e) for e in f.evidence],
                "echoes": [_ev(e) for e in f.echoes],
            }
            for f in a.findings
        ],
        "rules": {s.code: [s.status, s.reason] for s in a.rules},
        "unexplained": [_ev(e) for e in a.unexplained],
        "alternatives": [[x.cls, x.confidence] for x in a.alternatives],
        "unrecognised": [[t.text, t.count] for t in a.unrecognised],
        "report_verdict": result.model.verdict,
        "workers": [
            {k: (_ts(val) if isinstance(val, dt.datetime) else val) for k, val in row.items()}
            for row in result.tables.workers.to_pylist()
        ],
    }


def diff(a: Any, b: Any, where: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in sorted(set(a) | set(b), key=str):
            if k not in a:
                out.append(f"{where}/{k}: added {json.dumps(b[k])[:200]}")
            elif k not in b:
                out.append(f"{where}/{k}: removed {json.dumps(a[k])[:200]}")
            else:
                out += diff(a[k], b[k], f"{where}/{k}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in diff(x, y, f"{where}[{i}]")]
    if a != b:
        return [f"{where}: {json.dumps(a)[:300]} -> {json.dumps(b)[:300]}"]
    return []


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, help="write the snapshot here")
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    ap.add_argument("--only", help="cases whose name contains this")
    args = ap.parse_args()
    if args.compare:
        before, after = (json.loads(p.read_text()) for p in args.compare)
        changed = 0
        for name in sorted(set(before) | set(after)):
            lines = diff(before.get(name), after.get(name))
            if lines:
                changed += 1
                print(f"== {name}")
                for line in lines:
                    print(f"   {line}")
        print(f"{changed} of {len(set(before) | set(after))} cases differ", file=sys.stderr)
        return 1 if changed else 0
    out: dict[str, Any] = {}
    for name, path in cases().items():
        if args.only and args.only not in name:
            continue
        out[name] = snapshot(path)
    text = json.dumps(out, indent=1, sort_keys=True, default=str)
    if args.out:
        args.out.write_text(text + "\n")
        print(f"{len(out)} cases -> {args.out}", file=sys.stderr)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

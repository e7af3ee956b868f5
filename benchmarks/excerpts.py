"""Accuracy on real excerpts pasted in public threads: the tool as an on-call
engineer uses it, with only a piece of the evidence.

    python benchmarks/excerpts.py [--set corpus|blind|all] [-v]

Each excerpt is ``fixtures/excerpts/<set>/<id>/excerpt.txt`` (sets: ``corpus``, the
rules were tuned on it; ``blind``, ``blind2`` ..., collected later and kept apart) with a
``label.json`` taken from the thread's resolution (see
fixtures/excerpts/README.md). It is analysed exactly as ``mwms-doctor analyze
excerpt.txt`` does. An answer is accepted when the verdict's class is one of the
label's ``accepted`` classes; a refusal is any excerpt the tool would not
analyse at all (bad input), which never should happen to non-empty text.
Printed: accuracy over the set, per class and per TF era, and each miss. The
``blind`` set (collected after the rules were written) is kept apart from the
``corpus`` the rules were tuned on. Exits 1 when accuracy is under the target
(90%) or anything was refused.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

from mwms_doctor.engine import run_rules
from mwms_doctor.errors import UserError
from mwms_doctor.facts import establish
from mwms_doctor.pipeline import load_tables

ROOT = Path(__file__).resolve().parents[1]
TARGET = 0.90


def score(folder: Path, verbose: bool) -> tuple[int, int, int]:
    cases = sorted(d for d in folder.iterdir() if (d / "label.json").exists())
    ok = refused = 0
    per_class: Counter[str] = Counter()
    per_class_ok: Counter[str] = Counter()
    per_era: Counter[str] = Counter()
    per_era_ok: Counter[str] = Counter()
    misses: list[str] = []
    t0 = time.perf_counter()
    for case in cases:
        label = json.loads((case / "label.json").read_text())
        try:
            tables, _ = load_tables(case / "excerpt.txt")
            verdict = run_rules(establish(tables)).verdict
            got = verdict.cls
        except UserError as exc:
            refused += 1
            got = f"REFUSED ({exc.message[:60]})"
        good = got in label["accepted"]
        ok += good
        per_class[label["class"]] += 1
        per_class_ok[label["class"]] += good
        per_era[label["era"]] += 1
        per_era_ok[label["era"]] += good
        if not good:
            misses.append(f"{case.name:58} expected {'|'.join(label['accepted']):34} got {got}")
        elif verbose:
            print(f"ok   {case.name:58} {got}")
    n = len(cases)
    secs = time.perf_counter() - t0
    print(f"\n== {folder.relative_to(ROOT)}: {n} excerpts, {secs:.1f} s")
    print(f"accepted class: {ok}/{n} = {ok / max(n, 1):.1%}    refused: {refused}")
    print("per class: " + ", ".join(f"{c} {per_class_ok[c]}/{per_class[c]}" for c in sorted(per_class)))
    print("per era:   " + ", ".join(f"{e} {per_era_ok[e]}/{per_era[e]}" for e in sorted(per_era)))
    for m in misses:
        print("  miss: " + m)
    return ok, n, refused


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", default="all", help="corpus, blind, blind2 ... or all (every set, apart)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    here = ROOT / "fixtures" / "excerpts"
    found = sorted((d.name for d in here.iterdir() if d.is_dir()), key=lambda n: (n != "corpus", n))
    sets = found if args.set == "all" else [args.set]
    failed = False
    blind_ok = blind_n = 0
    for name in sets:
        folder = ROOT / "fixtures" / "excerpts" / name
        if not folder.is_dir() or not any(folder.iterdir()):
            print(f"\n== fixtures/excerpts/{name}: none yet")
            continue
        ok, n, refused = score(folder, args.verbose)
        failed |= refused > 0
        if name.startswith("blind"):
            blind_ok, blind_n = blind_ok + ok, blind_n + n
        else:
            failed |= ok < TARGET * n
    if blind_n:
        # The blind part is every batch collected after the rules were written, together.
        print(f"\n== blind part (every blind batch): {blind_ok}/{blind_n} = {blind_ok / blind_n:.1%}")
        failed |= blind_ok < TARGET * blind_n
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

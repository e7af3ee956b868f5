"""Diagnosis accuracy over recorded runs: class, root worker, false alarms, stuck jobs.

    python benchmarks/accuracy.py                 # the tuned set and the blind set, apart
    python benchmarks/accuracy.py RUNS_DIR ...    # any folders of runs
    python benchmarks/accuracy.py fixtures/blind/batch_e/runs   # blind batch E

Two sets are kept apart:

* ``fixtures/runs``: recorded by the first harness; the rules were written
  and tuned against these (the *tuned* set);
* ``fixtures/blind/runs``: a second, independent family of programs, runners
  and layouts (fixtures/blind/harness), whose labels were committed before
  the runs were recorded (the *blind* set);
* ``fixtures/blind/batch_e/runs``: blind batch E, a third harness by a
  helper who never read the rules, labels committed first, scored once
  (``fixtures/blind/batch_e_first_score.txt``), then fixed by mechanism;
* ``fixtures/blind/batch_f/runs``: blind batch F, a fourth (orchestrator
  layouts: YARN, Argo, Ray, Nomad, supervisord, journald, CloudWatch ...),
  the same way (``fixtures/blind/batch_f_first_score.txt``).

Each run's ``expected.json`` says what was injected: ``class``, the
``root_workers`` (null, or [] for a failure: no single root to judge, e.g.
several workers writing one checkpoint), optionally ``accepted`` (other classes also right) and
``stuck`` (the job stopped making progress and its runner killed it) and
``finished`` (every worker ran its training to the end, whatever else went
wrong). The
analyzer runs on the run's ``logs/`` exactly as ``mwms-doctor analyze`` does.
Printed per set: class accuracy, root-worker accuracy over the runs that have
a root, healthy jobs called failed (or given any error/warning finding),
stuck jobs called healthy, and finished jobs said to have stopped (called a
hang, a handshake deadlock, a dead peer or a preemption). Exits 1 when a set misses a target (class 95%,
root 90%, no healthy job failed, no stuck job healthy).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from mwms_doctor.engine import run_rules
from mwms_doctor.errors import UserError
from mwms_doctor.facts import establish
from mwms_doctor.pipeline import load_tables

ROOT = Path(__file__).resolve().parents[1]
SETS = {
    "tuned": ROOT / "fixtures" / "runs",
    "blind": ROOT / "fixtures" / "blind" / "runs",
    "blind batch E": ROOT / "fixtures" / "blind" / "batch_e" / "runs",
    "blind batch F": ROOT / "fixtures" / "blind" / "batch_f" / "runs",
    "blind batch G": ROOT / "fixtures" / "blind" / "batch_g" / "runs",
    "blind batch H": ROOT / "fixtures" / "blind" / "batch_h" / "runs",
    "blind batch I": ROOT / "fixtures" / "blind" / "batch_i" / "runs",
    "blind batch J": ROOT / "fixtures" / "blind" / "batch_j" / "runs",
    "blind batch K": ROOT / "fixtures" / "blind" / "batch_k" / "runs",
    "blind batch L": ROOT / "fixtures" / "blind" / "batch_l" / "runs",
    "blind batch M": ROOT / "fixtures" / "blind" / "batch_m" / "runs",
    "blind batch N": ROOT / "fixtures" / "blind" / "batch_n" / "runs",
    "blind batch O": ROOT / "fixtures" / "blind" / "batch_o" / "runs",
    "blind batch P": ROOT / "fixtures" / "blind" / "batch_p" / "runs",
    "blind batch Q": ROOT / "fixtures" / "blind" / "batch_q" / "runs",
    "blind batch R": ROOT / "fixtures" / "blind" / "batch_r" / "runs",
    "blind batch S": ROOT / "fixtures" / "blind" / "batch_s" / "runs",
    "blind batch T": ROOT / "fixtures" / "blind" / "batch_t" / "runs",
    "blind batch U": ROOT / "fixtures" / "blind" / "batch_u" / "runs",
    "blind batch V": ROOT / "fixtures" / "blind" / "batch_v" / "runs",
    "blind batch W": ROOT / "fixtures" / "blind" / "batch_w" / "runs",
    "blind batch X": ROOT / "fixtures" / "blind" / "batch_x" / "runs",
    "blind batch Y": ROOT / "fixtures" / "blind" / "batch_y" / "runs",
    "blind batch Z": ROOT / "fixtures" / "blind" / "batch_z" / "runs",
    "blind batch AA": ROOT / "fixtures" / "blind" / "batch_aa" / "runs",
    "blind batch AB": ROOT / "fixtures" / "blind" / "batch_ab" / "runs",
    "blind batch AC": ROOT / "fixtures" / "blind" / "batch_ac" / "runs",
    "blind batch AD": ROOT / "fixtures" / "blind" / "batch_ad" / "runs",
    "blind batch AE": ROOT / "fixtures" / "blind" / "batch_ae" / "runs",
    "blind batch AF": ROOT / "fixtures" / "blind" / "batch_af" / "runs",
    "blind batch AG": ROOT / "fixtures" / "blind" / "batch_ag" / "runs",
    "blind batch AH": ROOT / "fixtures" / "blind" / "batch_ah" / "runs",
    "blind batch AI": ROOT / "fixtures" / "blind" / "batch_ai" / "runs",
    "blind batch AJ": ROOT / "fixtures" / "blind" / "batch_aj" / "runs",
    "blind batch AK": ROOT / "fixtures" / "blind" / "batch_ak" / "runs",
    "blind batch AL": ROOT / "fixtures" / "blind" / "batch_al" / "runs",
    "blind batch AM": ROOT / "fixtures" / "blind" / "batch_am" / "runs",
    "blind batch AN": ROOT / "fixtures" / "blind" / "batch_an" / "runs",
    "blind batch AO": ROOT / "fixtures" / "blind" / "batch_ao" / "runs",
    "blind batch AP": ROOT / "fixtures" / "blind" / "batch_ap" / "runs",
    "blind batch AQ": ROOT / "fixtures" / "blind" / "batch_aq" / "runs",
    "blind batch AR": ROOT / "fixtures" / "blind" / "batch_ar" / "runs",
    "blind batch AS": ROOT / "fixtures" / "blind" / "batch_as" / "runs",
    "blind batch AT": ROOT / "fixtures" / "blind" / "batch_at" / "runs",
    "blind batch AU": ROOT / "fixtures" / "blind" / "batch_au" / "runs",
    "blind batch AV": ROOT / "fixtures" / "blind" / "batch_av" / "runs",
    "blind batch AW": ROOT / "fixtures" / "blind" / "batch_aw" / "runs",
    "blind batch AX": ROOT / "fixtures" / "blind" / "batch_ax" / "runs",
    "blind batch AY": ROOT / "fixtures" / "blind" / "batch_ay" / "runs",
    "blind batch AZ": ROOT / "fixtures" / "blind" / "batch_az" / "runs",
    "blind batch BA": ROOT / "fixtures" / "blind" / "batch_ba" / "runs",
    "blind batch BB": ROOT / "fixtures" / "blind" / "batch_bb" / "runs",
    "blind batch BC": ROOT / "fixtures" / "blind" / "batch_bc" / "runs",
    "blind batch BD": ROOT / "fixtures" / "blind" / "batch_bd" / "runs",
    "blind batch BE": ROOT / "fixtures" / "blind" / "batch_be" / "runs",
    "blind batch BF": ROOT / "fixtures" / "blind" / "batch_bf" / "runs",
    "blind batch BG": ROOT / "fixtures" / "blind" / "batch_bg" / "runs",
    "blind batch BH": ROOT / "fixtures" / "blind" / "batch_bh" / "runs",
    "blind batch BI": ROOT / "fixtures" / "blind" / "batch_bi" / "runs",
    "blind batch BJ": ROOT / "fixtures" / "blind" / "batch_bj" / "runs",
    "blind batch BK": ROOT / "fixtures" / "blind" / "batch_bk" / "runs",
    "blind batch BL": ROOT / "fixtures" / "blind" / "batch_bl" / "runs",
}
CLASS_TARGET, ROOT_TARGET = 0.95, 0.90
# Classes that say the job stopped before its end: wrong for a job that finished.
STOPPED = {"hang", "handshake_deadlock", "peer_died", "preemption"}


def score(name: str, runs_dir: Path) -> bool:
    runs = sorted(d for d in runs_dir.iterdir() if (d / "expected.json").exists())
    if not runs:
        print(f"\n== {name}: no runs in {runs_dir}")
        return True
    ok_class = ok_root = with_root = healthy = false_alarms = stuck = stuck_healthy = 0
    finished = finished_stopped = 0
    wrong: list[str] = []
    print(f"\n== {name} ({runs_dir.relative_to(ROOT)})")
    print(f"{'run':40} {'expected':22} {'got':22} {'root expected':>26} {'root got':>26}  s")
    for run in runs:
        expected = json.loads((run / "expected.json").read_text())
        t0 = time.perf_counter()
        try:
            tables, _ = load_tables(run / "logs")
        except UserError as exc:
            # The tool refused the evidence (exit 2): a wrong answer, said as such.
            print(
                f"{run.name:40} {expected['class']:22} {'error (refused)':22}  {exc.message[:80]}  <-- WRONG"
            )
            wrong.append(f"{run.name}: refused: {exc.message[:200]}")
            roots = expected.get("root_workers")
            if roots is not None and not (roots == [] and expected["class"] != "healthy"):
                with_root += 1
            if expected["class"] == "healthy":
                healthy += 1
                false_alarms += 1  # a healthy job's evidence refused: no better than an alarm
            stuck += bool(expected.get("stuck"))
            finished += bool(expected.get("finished"))
            continue
        analysis = run_rules(establish(tables))
        secs = time.perf_counter() - t0
        v = analysis.verdict
        accepted = [expected["class"], *(expected.get("accepted") or [])]
        cls_ok = v.cls in accepted
        roots = expected.get("root_workers")
        if roots == [] and expected["class"] != "healthy":
            roots = None  # a failure whose label names no worker: no single root to judge
        root_ok = True
        if roots is not None:
            with_root += 1
            root_ok = set(v.root_workers) == set(roots)
            ok_root += root_ok
        ok_class += cls_ok
        if expected["class"] == "healthy":
            healthy += 1
            alarms = [f for f in analysis.findings if f.severity in ("error", "warning")]
            if v.status != "healthy" or alarms:
                false_alarms += 1
                wrong.append(f"{run.name}: false alarm ({v.cls}; {[f.code for f in alarms]})")
        if expected.get("stuck"):
            stuck += 1
            if v.status == "healthy":
                stuck_healthy += 1
                wrong.append(f"{run.name}: a stuck job called healthy")
        if expected.get("finished"):
            finished += 1
            if v.cls in STOPPED and not cls_ok:
                finished_stopped += 1
                wrong.append(f"{run.name}: a finished job said to have stopped ({v.cls})")
        if not (cls_ok and root_ok):
            wrong.append(f"{run.name}: expected {'|'.join(accepted)} {roots}, got {v.cls} {v.root_workers}")
        mark = "" if cls_ok and root_ok else "  <-- WRONG"
        exp_roots = "n/a" if roots is None else ",".join(roots) or "-"
        print(
            f"{run.name:40} {expected['class']:22} {v.cls:22} {exp_roots:>26} "
            f"{','.join(v.root_workers) or '-':>26} {secs:4.1f}{mark}"
        )
    n = len(runs)
    classes = sorted({json.loads((r / "expected.json").read_text())["class"] for r in runs})
    print(f"runs: {n}, classes covered: {len(classes)} ({', '.join(classes)})")
    print(f"class accuracy:       {ok_class}/{n} = {ok_class / n:.1%}")
    print(
        f"root-worker accuracy: {ok_root}/{with_root} = {ok_root / max(with_root, 1):.1%} (runs with a root)"
    )
    print(f"healthy jobs called failed: {false_alarms}/{healthy}")
    print(f"stuck jobs called healthy:  {stuck_healthy}/{stuck}")
    print(f"finished jobs said stopped: {finished_stopped}/{finished}")
    for w in wrong:
        print("  " + w)
    return (
        ok_class >= CLASS_TARGET * n
        and ok_root >= ROOT_TARGET * with_root
        and false_alarms == 0
        and stuck_healthy == 0
        and finished_stopped == 0
    )


def main(argv: list[str]) -> int:
    # A set named by its folder's path (several batches' folders are all "runs").
    sets = {str(Path(a)): Path(a).resolve() for a in argv} if argv else SETS
    good = [score(name, path) for name, path in sets.items() if path.is_dir()]
    return 0 if all(good) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

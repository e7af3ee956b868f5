from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
RUNS = FIXTURES / "runs"
RULE_CASES = FIXTURES / "rules"
GOLDENS = Path(__file__).resolve().parent / "goldens"
BLIND_RUNS = FIXTURES / "blind" / "runs"
EXCERPTS = FIXTURES / "excerpts"

"""The emitters' own vocabulary (analyzer/ingest/emitted.py): every error and
warning format string from TF's, tf-keras', Horovod's and NCCL's source, with
the meaning scripts/coverage.py gives it, read where the hand-written
catalogue knows no message; rule EM001 concludes the class it names."""

from __future__ import annotations

import importlib.util
import json
import sys
from types import ModuleType

import pytest
from mwms_doctor.classes import CLASSES
from mwms_doctor.engine import run_rules
from mwms_doctor.facts import establish
from mwms_doctor.ingest import emitted
from mwms_doctor.ingest.emitted_table import STRINGS
from mwms_doctor.pipeline import load_tables

from .paths import EXCERPTS, ROOT, RUNS


@pytest.fixture(scope="module")
def coverage() -> ModuleType:
    spec = importlib.util.spec_from_file_location("coverage_script_e", ROOT / "scripts" / "coverage.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_the_generated_table_is_what_the_generator_makes_now(coverage: ModuleType) -> None:
    """emitted_table.py is generated, never edited: the extracted strings and
    the MEANINGS table give exactly it."""
    assert coverage.TABLE.read_text(encoding="utf-8") == coverage.generate(), (
        "run `python scripts/coverage.py generate`"
    )


def test_every_meaning_is_a_class_or_a_role(coverage: ModuleType) -> None:
    assert {row[5] for row in STRINGS} <= set(CLASSES) | set(coverage.ROLES)


@pytest.mark.parametrize("filler", ["X1", "/job:worker/replica:0/task:1", "17"])
def test_each_format_string_printed_is_found_with_its_meaning(filler: str) -> None:
    """Printed with anything in its gaps, and inside a log line, each format
    string is found by its anchor word, and with the meaning it was given (a
    longer format string that also matches decides only where it means the
    same)."""
    wrong = []
    for row in STRINGS:
        text = row[4].replace("{}", filler)
        for gap in ("%r", "%s", "%d"):
            text = text.replace(gap, filler)
        line = f"E1124 18:00:00.000000  4242 {row[1].rsplit('/', 1)[-1]}:{row[2]}] {text} (at step 3)"
        found = emitted.lookup(line)
        # The same words printed at two levels (two eras) cannot be told apart: either meaning.
        if found is None or (found.meaning != row[5] and found.text != row[4]):
            wrong.append((row[4], row[5], found and (found.text, found.meaning)))
    assert wrong == []


def test_words_of_no_format_string_are_not_found() -> None:
    assert emitted.lookup("E1124 train.py:12] my own error about the data loader") is None
    assert emitted.lookup("") is None


def test_a_real_excerpt_that_no_message_knew_gets_the_class_its_source_gives() -> None:
    """tensorflow/tensorflow#48372: a GPU all-reduce joined a group registered
    with another device type. No recording held that wording; the runtime's
    own source (collective_param_resolver_local.cc) says it is a collective
    whose members disagree. It was an `unknown` before the generated vocabulary."""
    tables, _ = load_tables(EXCERPTS / "corpus" / "tensorflow-tensorflow-48372" / "excerpt.txt")
    analysis = run_rules(establish(tables))
    label = json.loads((EXCERPTS / "corpus" / "tensorflow-tensorflow-48372" / "label.json").read_text())
    assert analysis.verdict.cls in label["accepted"]
    root = analysis.findings[0]
    assert root.code == "EM001" and root.cls == "collective_mismatch"
    assert root.facts["emitted_at"].startswith(
        "tensorflow/core/common_runtime/collective_param_resolver_local.cc:"
    )


def test_an_exception_whose_message_is_tfs_own_config_error_is_not_the_scripts_own_bug() -> None:
    """A real recording: worker 2's TF_CONFIG names task index 3 of 3; it dies
    with `ValueError: The task_id 3 exceeds the maximum id of 2.` The
    traceback keeps its kind, and its message's source (multi_worker_util.py)
    gives its meaning, so UE001 does not call it an uncaught script bug."""
    tables, _ = load_tables(RUNS / "tf_config_index_out_of_range" / "logs")
    rows = [
        r
        for r in tables.events.to_pylist()
        if r["kind"] == "py.traceback" and "exceeds the maximum id" in r["text"]
    ]
    assert rows
    fields = dict(rows[0]["fields"])
    assert fields["meaning"] == "tf_config_mismatch"
    assert fields["emitted_at"].startswith("python/distribute/multi_worker_util.py:")
    analysis = run_rules(establish(tables))
    assert analysis.verdict.cls == "tf_config_mismatch"
    assert not any(f.code == "UE001" for f in analysis.findings)

"""scripts/coverage.py: the emitters' format strings taken from their source,
and the README's coverage table as the catalogue reads them now."""

from __future__ import annotations

import importlib.util
import json
import sys
from types import ModuleType

import pytest

from .paths import ROOT


@pytest.fixture(scope="module")
def coverage() -> ModuleType:
    spec = importlib.util.spec_from_file_location("coverage_script", ROOT / "scripts" / "coverage.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


CPP = r"""
Status Check(const string& task) {
  // errors::Internal("a comment is no message")
  if (bad) return errors::Unavailable("Task ", task, " heartbeat timeout. ", "Check the logs.");
  LOG(ERROR) << "Stopping service as " << absl::StrCat("task ", t, " failed; ") << status;
  return absl::FailedPreconditionError(absl::StrFormat("Barrier (%s) has already passed", id));
}
"""


def test_cpp_statuses_and_log_lines_keep_their_literals_and_mark_each_gap(coverage: ModuleType) -> None:
    rows = list(coverage._cpp("x.cc", CPP, horovod=False))
    got = {(r["level"], r["text"]) for r in rows}
    assert got == {
        ("Unavailable", "Task {} heartbeat timeout. Check the logs."),
        ("ERROR", "Stopping service as task {} failed; {}"),
        ("FailedPrecondition", "Barrier ({}) has already passed"),
    }
    assert {r["line"] for r in rows if r["level"] == "Unavailable"} == {4}


PY = """
def f(task, n):
    if n > 3:
        raise RuntimeError("Timeout waiting for the cluster, timeout is %d seconds" % n)
    logging.warning("%s seems down, retrying %d/%d", task, 1, n)
    logger.error(f"worker {task} failed")
    raise ValueError("got {} and {}".format(task, n))
    print("not a message")
"""


def test_python_raises_and_logging_calls_become_format_strings(coverage: ModuleType) -> None:
    got = {(r["level"], r["text"]) for r in coverage._py("x.py", PY)}
    assert got == {
        ("RuntimeError", "Timeout waiting for the cluster, timeout is {} seconds"),
        ("warning", "{} seems down, retrying {}/{}"),
        ("error", "worker {} failed"),
        ("ValueError", "got {} and {}"),
    }


def test_nccl_warn_formats(coverage: ModuleType) -> None:
    text = '#define WARN(...) ncclDebugLog(NCCL_LOG_WARN, __VA_ARGS__)\nWARN("Call to %s failed : %d", fn, rc);\n'
    assert [r["text"] for r in coverage._nccl("src/x.cc", text)] == ["Call to {} failed : {}"]


def test_a_kind_that_only_the_filler_has_is_not_the_words(coverage: ModuleType) -> None:
    """'/job:worker/replica:0/task:1' alone reads as a script naming its task:
    a message whose gap held it is not recognised for that."""
    assert coverage.recognised(coverage.instances({"text": "Could not parse worker name: {}"})) is None
    assert (
        coverage.recognised(coverage.instances({"text": "Task {} heartbeat timeout. This indicates that"}))
        is not None
    )


def test_the_readme_table_is_what_the_catalogue_recognises_now(coverage: ModuleType) -> None:
    for scope in coverage.SCOPES:
        rows = [json.loads(x) for x in (coverage.OUT / f"{scope.name}.jsonl").read_text().splitlines()]
        assert rows and all({"file", "line", "level", "text"} <= set(r) for r in rows), scope.name
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert coverage.markdown() in readme, (
        "README's coverage table is stale: run `python scripts/coverage.py --markdown`"
    )

"""Rule documentation lives in the rules' docstrings; the docs page is generated."""

from __future__ import annotations

import re

from mwms_doctor.registry import REQUIRED_SECTIONS, load_rules, rule_doc, rules_page

from .paths import ROOT


def test_rules_page_is_current() -> None:
    page = (ROOT / "docs" / "rules.md").read_text()
    assert page == rules_page(), "docs/rules.md is stale: run `mwms-doctor rules --format md > docs/rules.md`"


def test_every_rule_is_documented_and_well_formed() -> None:
    for rule in load_rules():
        assert re.fullmatch(r"[A-Z]{2}\d{3}", rule.CODE)
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)+", rule.NAME)
        assert rule.SEVERITY in ("error", "warning", "info")
        doc = rule_doc(rule)
        assert doc.title, rule.CODE
        assert (rule.__doc__ or "").startswith(f"{rule.CODE} {rule.NAME}:")
        for section in REQUIRED_SECTIONS:
            assert len(doc.sections.get(section, "")) > 80, (rule.CODE, section)


def test_messages_page_is_current() -> None:
    """docs/messages.md is what scripts/messages.py makes of the catalogue and the fixtures now."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("messages_page", ROOT / "scripts" / "messages.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = (ROOT / "docs" / "messages.md").read_text(encoding="utf-8")
    assert page == module.page(), "docs/messages.md is stale: run `python scripts/messages.py`"


def test_readme_python_example_runs_as_written(tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """The README's Python example, run verbatim from a folder laid out as
    the repository is (three of the bundled recordings under fixtures/runs,
    to keep the triage short): it prints the bundled OOM's verdict and the
    night's classes."""
    import shutil

    import mwms_doctor

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"In Python:\n\n```python\n(.*?)```", readme, re.S)
    assert block, "the README's 'In Python:' example is gone"
    for name in ("oom", "healthy", "peer_killed"):
        shutil.copytree(ROOT / "fixtures" / "runs" / name, tmp_path / "fixtures" / "runs" / name)
    monkeypatch.chdir(tmp_path)
    exec(compile(block.group(1), "README.md", "exec"), {})  # noqa: S102 - the README's own example
    out = capsys.readouterr().out
    assert "failure oom ['worker:1']" in out
    assert "healthy" in out and "peer_died" in out and (tmp_path / "triage" / "index.html").is_file()
    assert sorted(dir(mwms_doctor)) == ["__version__", "analyze", "triage"]


def test_rules_json_lists_every_rule_with_its_docs() -> None:
    import json
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "mwms_doctor", "rules", "-f", "json"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    rules = json.loads(r.stdout)
    assert [x["code"] for x in rules] == [m.CODE for m in load_rules()]
    assert all(x["title"] and x["what_to_do"] and x["class"] for x in rules)

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

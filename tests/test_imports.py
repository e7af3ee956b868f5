"""No import circle inside the package: every import (at module level or
inside a function) between its modules is followed, and no module reaches
itself. A child importing its own parent package is how packages hand names
on, and is not counted."""

from __future__ import annotations

import ast
from pathlib import Path

from .paths import ROOT

LAYOUT = {"analyzer": "mwms_doctor", "rules": "mwms_doctor.rules"}


def _modules() -> dict[str, Path]:
    out = {}
    for folder, package in LAYOUT.items():
        for path in (ROOT / folder).rglob("*.py"):
            rel = path.relative_to(ROOT / folder).with_suffix("").as_posix().replace("/", ".")
            name = package if rel == "__init__" else f"{package}.{rel.removesuffix('.__init__')}"
            out[name] = path
    return out


def _imports(modules: dict[str, Path]) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    parts = name.split(".")
                    base = parts[: len(parts) - node.level + (1 if is_package else 0)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                candidates = [target, *(f"{target}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                candidates = [a.name for a in node.names]
            else:
                continue
            edges[name] |= {
                c for c in candidates if c in modules and c != name and not name.startswith(c + ".")
            }
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_no_import_circle_inside_the_package() -> None:
    modules = _modules()
    assert len(modules) > 80
    assert _cycles(_imports(modules)) == []


def test_the_walk_finds_a_circle_where_there_is_one() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(edges) == [["a", "b", "c"]]

"""The bridge's modules import one another in one direction: no import circle.

Every import inside ``stpis_bridge`` counts, wherever it stands: at the top, under
``TYPE_CHECKING``, or inside a function. Issue 52 found two circles (the pool's four
modules, and ``fast`` with ``lockstep``); the Go side has had a layering test since
its first.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

_PACKAGE = "stpis_bridge"
_ROOT = Path(__file__).resolve().parents[1] / _PACKAGE


def _modules() -> dict[str, Path]:
    return {p.stem: p for p in sorted(_ROOT.glob("*.py"))}


def imports_of(source: str, modules: set[str]) -> set[str]:
    """Return the modules of ``stpis_bridge`` (by short name) that ``source`` imports."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == _PACKAGE and len(parts) > 1:
                    found.add(parts[1])
        elif isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module is None:  # from . import x
                found.update(a.name for a in node.names)
            elif node.level == 1 and node.module is not None:  # from .x import y
                found.add(node.module.split(".")[0])
            elif node.module == _PACKAGE:  # from stpis_bridge import x
                found.update(a.name for a in node.names)
            elif node.module is not None and node.module.startswith(_PACKAGE + "."):
                found.add(node.module.split(".")[1])
    return found & modules


def graph() -> dict[str, set[str]]:
    """Return module -> the package's modules it imports."""
    modules = _modules()
    names = set(modules)
    return {m: imports_of(p.read_text(), names) - {m} for m, p in modules.items()}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Return one circle through each strongly connected group of modules (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return groups


def test_the_checker_finds_circles() -> None:
    """The checker sees the import forms the bridge uses, and the circles they make."""
    names = {"pool", "pool_batch", "fast", "lockstep", "envs"}
    src = (
        "from typing import TYPE_CHECKING\n"
        "import stpis_bridge.envs\n"
        "if TYPE_CHECKING:\n    from stpis_bridge.pool import WorkerPool\n"
        "def f():\n    from stpis_bridge import fast\n"
        "from . import lockstep\n"
        "import numpy\n"
    )
    assert imports_of(src, names) == {"envs", "pool", "fast", "lockstep"}
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


def test_no_import_circle_in_the_bridge() -> None:
    found = circles(graph())
    assert not found, f"import circles in {_PACKAGE}: {found}"


@pytest.mark.parametrize("module", ["pool_batch", "pool_procs", "pool_watch"])
def test_pool_parts_sit_beneath_the_pool(module: str) -> None:
    assert "pool" not in graph()[module]


def test_lockstep_sits_beneath_fast() -> None:
    edges = graph()
    assert "lockstep" in edges["fast"] and "fast" not in edges["lockstep"]

"""Dependencies point one way: the runtime and replay never import the demo package or the test doubles.

Imports inside functions count too: a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

from p2w_runtime.demo.sites.catalog import SITES
from replay.judges import DEMO_LOCATION_SITES

REPO = Path(__file__).resolve().parents[1]
AWAY_FROM_RUNTIME = ("p2w_runtime.demo", "p2w_runtime.testing")
"""Packages that depend on the runtime and must never be depended on by it."""


def _imported(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _runtime_modules() -> list[Path]:
    modules = [p for package in ("p2w_runtime", "replay", "schemas") for p in sorted((REPO / package).rglob("*.py"))]
    away = [REPO / name.replace(".", "/") for name in AWAY_FROM_RUNTIME]
    return [p for p in modules if not any(p.is_relative_to(folder) for folder in away)]


def test_the_runtime_and_replay_never_import_the_demo_package_or_the_test_doubles() -> None:
    found = [
        f"{path.relative_to(REPO)} imports {name}"
        for path in _runtime_modules()
        for name in sorted(_imported(ast.parse(path.read_text(), str(path))))
        if name.startswith(AWAY_FROM_RUNTIME)
    ]
    assert found == []


def test_the_check_sees_a_lazy_import() -> None:
    tree = ast.parse("def f():\n    from p2w_runtime.demo.sites import DemoHosting\n")
    assert "p2w_runtime.demo.sites" in _imported(tree)


def test_replay_names_the_demo_sites_that_the_catalogue_flags_location_aware() -> None:
    assert set(DEMO_LOCATION_SITES) == {site.host for site in SITES if site.location_aware}

"""The CLI pattern: library code returns data, rendering modules print it.

In ``replay/`` and ``p2w_runtime/`` only a module named ``_render.py`` / ``render.py`` may call ``print()`` or
import ``rich``; everything else returns data for ``p2w_cli`` (or a renderer) to show.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("replay", "p2w_runtime")
RENDERING = {"_render", "render"}


def violations(source: str) -> list[str]:
    """``print()`` calls and ``rich`` imports in ``source``, as ``line: what``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            found.append(f"{node.lineno}: print()")
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if a.name.split(".")[0] == "rich"]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "rich":
            found.append(f"{node.lineno}: from {node.module} import ...")
    return found


def test_the_scan_finds_prints_and_rich_imports() -> None:
    source = "import rich\nfrom rich.table import Table\nimport rich.console as c\nprint('x')\nlog.print('y')\n"
    assert violations(source) == [
        "1: import rich",
        "2: from rich.table import ...",
        "3: import rich.console",
        "4: print()",
    ], "a method named print (a console's, in a renderer's caller) is not the builtin"
    assert violations("from richer import x\nprinter = print\n") == []


def test_only_rendering_modules_print_or_import_rich() -> None:
    modules = [p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))]
    assert len(modules) > 100, "the scan sees the packages"
    bad = {
        str(path.relative_to(ROOT)): found
        for path in modules
        if path.stem not in RENDERING and (found := violations(path.read_text(encoding="utf-8")))
    }
    assert not bad, f"print()/rich outside a _render.py / render.py module: {bad}"

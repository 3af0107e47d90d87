"""The CLI pattern: library code returns data, the CLI presents it (docs/ARCHITECTURE.md).

No module of ``replay/`` or ``p2w_runtime/`` calls ``print()`` or imports a presentation library (rich, Jinja2,
Starlette, uvicorn), not even inside a function: the web viewer and every terminal renderer live in
``p2w_cli/view/`` and ``p2w_cli/render/``.
"""

from __future__ import annotations

import ast

from tests.helpers.paths import REPO

PACKAGES = ("replay", "p2w_runtime")
PRESENTATION = ("rich", "jinja2", "starlette", "uvicorn")


def violations(source: str) -> list[str]:
    """``print()`` calls and presentation imports anywhere in ``source`` (lazy ones too), as ``line: what``."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
            found.append(f"{node.lineno}: print()")
        elif isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if a.name.split(".")[0] in PRESENTATION]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] in PRESENTATION:
            found.append(f"{node.lineno}: from {node.module} import ...")
    return found


def test_the_scan_finds_prints_and_presentation_imports_lazy_ones_too() -> None:
    source = (
        "import rich\nfrom rich.table import Table\nimport rich.console as c\nprint('x')\nlog.print('y')\n"
        "def page():\n    from jinja2 import Environment\n    import starlette.routing\n"
        "async def serve():\n    import uvicorn\n"
    )
    assert violations(source) == [
        "1: import rich",
        "2: from rich.table import ...",
        "3: import rich.console",
        "4: print()",
        "7: from jinja2 import ...",
        "8: import starlette.routing",
        "10: import uvicorn",
    ], "a method named print (a console's, in a renderer's caller) is not the builtin"
    assert violations("from richer import x\nprinter = print\nfrom . import rich\nimport jinja2ish\n") == []


def test_replay_and_the_runtime_never_print_or_import_a_presentation_library() -> None:
    modules = [p for package in PACKAGES for p in sorted((REPO / package).rglob("*.py"))]
    assert len(modules) > 100, "the scan sees the packages"
    bad = {str(p.relative_to(REPO)): found for p in modules if (found := violations(p.read_text(encoding="utf-8")))}
    assert not bad, f"print() or a presentation library in replay/ or p2w_runtime/: {bad}"


def test_the_viewer_and_the_terminal_renderers_live_with_the_cli() -> None:
    """Where the presentation went: every module importing rich, Jinja2, Starlette or uvicorn is under p2w_cli."""
    presenting = {
        str(p.relative_to(REPO))
        for p in sorted(REPO.rglob("*.py"))
        if p.relative_to(REPO).parts[0] in (*PACKAGES, "p2w_cli", "schemas")
        and any("print()" not in v for v in violations(p.read_text(encoding="utf-8")))
    }
    assert {"p2w_cli/view/_app.py", "p2w_cli/view/_render.py", "p2w_cli/render/terminal.py"} <= presenting
    assert {p for p in presenting if not p.startswith("p2w_cli/")} == set()

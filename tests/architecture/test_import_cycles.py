"""No import cycles among our modules: each layer's modules import in one direction (docs/ARCHITECTURE.md).

Read from the source with ``ast``: the imports a module runs when it is loaded (top level, and inside top-level
``if``/``try`` blocks), and, in a second graph, also those under ``if TYPE_CHECKING:`` (a circle the type checker
reads is still two modules that cannot be understood apart); not those inside functions. An import of a submodule
counts as an edge to that module; ``from package import name`` to the package, or to the submodule ``name`` is.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.helpers.module_names import installed_name
from tests.helpers.paths import REPO

PACKAGES = ("p2w_runtime", "replay", "schemas")


def module_files(root: Path = REPO) -> dict[str, Path]:
    """Every module of ``PACKAGES`` by dotted name (a package by its own name, for its ``__init__.py``)."""
    modules = {}
    for package in PACKAGES:
        for path in (root / package).rglob("*.py"):
            modules[installed_name(root, path)] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _load_time_imports(body: list[ast.stmt], type_checking: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if type_checking or not _is_type_checking(node.test):
                yield from _load_time_imports(node.body, type_checking)
            yield from _load_time_imports(node.orelse, type_checking)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _load_time_imports(block, type_checking)


def imports_of(name: str, path: Path, modules: dict[str, Path], type_checking: bool = False) -> set[str]:
    """The modules of ``modules`` that loading module ``name`` (at ``path``) imports (with ``type_checking``, also
    those only the type checker reads)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _load_time_imports(ast.parse(path.read_text(), str(path)).body, type_checking):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
            base = ".".join([*anchor, base] if base else anchor)
        for alias in node.names:
            found.add(f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base)
    return {module for module in found if module in modules and module != name}


def import_graph(root: Path = REPO, *, type_checking: bool = False) -> dict[str, set[str]]:
    modules = module_files(root)
    return {name: imports_of(name, path, modules, type_checking) for name, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted: every import cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles_among_our_modules_even_for_the_type_checker() -> None:
    graph = import_graph()
    assert len(graph) > 100 and "p2w_runtime.browser._execute" in graph
    assert cycles(graph) == []
    typed = import_graph(type_checking=True)
    assert typed.keys() == graph.keys() and all(graph[name] <= typed[name] for name in graph)
    assert cycles(typed) == []


def test_the_browser_modules_do_not_import_each_other_in_a_circle_even_for_the_type_checker() -> None:
    """``_execute`` knows the episode through the ``EpisodeHandle`` protocol, not by importing ``_episode``."""
    browser = {
        name: {target for target in targets if target.startswith("p2w_runtime.browser")}
        for name, targets in import_graph(type_checking=True).items()
        if name.startswith("p2w_runtime.browser")
    }
    assert "p2w_runtime.browser._handle" in browser["p2w_runtime.browser._execute"]
    assert cycles(browser) == []


def test_the_checker_finds_a_cycle_and_ignores_type_checking_and_function_imports(tmp_path: Path) -> None:
    pkg = tmp_path / "replay" / "loop"
    pkg.mkdir(parents=True)
    (tmp_path / "replay" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from p2w_rt.replay.loop._a import A\n")
    (pkg / "_a.py").write_text("from . import _b\nA = 1\n")
    (pkg / "_b.py").write_text("try:\n    from p2w_rt.replay.loop._c import C\nexcept ImportError:\n    C = None\n")
    (pkg / "_c.py").write_text("from p2w_rt.replay.loop import _a\nC = 2\n")
    (pkg / "_d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p2w_rt.replay.loop._e import E\n"
        "def f():\n    from p2w_rt.replay.loop._e import E\n"
    )
    (pkg / "_e.py").write_text("from p2w_rt.replay.loop._d import f\nE = 3\n")
    (pkg / "_f.py").write_text(
        "import typing\nif typing.TYPE_CHECKING:\n    from p2w_rt.replay.loop import _g\nelse:\n    from . import _h\n"
    )
    (pkg / "_g.py").write_text("from p2w_rt.replay.loop._f import F\n")
    (pkg / "_h.py").write_text("X = 1\n")
    graph = import_graph(tmp_path)
    assert graph["p2w_rt.replay.loop"] == {"p2w_rt.replay.loop._a"}
    assert graph["p2w_rt.replay.loop._d"] == set()
    assert graph["p2w_rt.replay.loop._f"] == {"p2w_rt.replay.loop._h"}
    assert cycles(graph) == [["p2w_rt.replay.loop._a", "p2w_rt.replay.loop._b", "p2w_rt.replay.loop._c"]]
    typed_graph = import_graph(tmp_path, type_checking=True)
    assert typed_graph["p2w_rt.replay.loop._d"] == {"p2w_rt.replay.loop._e"}
    assert typed_graph["p2w_rt.replay.loop._f"] == {"p2w_rt.replay.loop._g", "p2w_rt.replay.loop._h"}
    assert cycles(typed_graph) == [
        ["p2w_rt.replay.loop._a", "p2w_rt.replay.loop._b", "p2w_rt.replay.loop._c"],
        ["p2w_rt.replay.loop._d", "p2w_rt.replay.loop._e"],
        ["p2w_rt.replay.loop._f", "p2w_rt.replay.loop._g"],
    ]

"""Dependencies point one way (docs/ARCHITECTURE.md): the runtime and replay never import the demo package or the
test doubles; ``schemas`` imports nothing of ours; the store knows no domain; the domain nothing above it; the judge
family and the other benchmarks' plugins never import the Persona2Web rubric, a plugin beside them.

Imports inside functions count too: a lazy import is still a dependency; so do relative imports and
``importlib.import_module`` / ``__import__`` of a literal name.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from p2w_rt.replay.persona2web import DEMO_LOCATION_SITES
from p2w_runtime.demo.sites.catalog import SITES
from tests.helpers.module_names import installed_name
from tests.helpers.paths import REPO

AWAY_FROM_RUNTIME = ("p2w_runtime.demo", "p2w_runtime.testing")
"""Packages that depend on the runtime and must never be depended on by it."""


ABOVE_THE_DOMAIN = (
    "p2w_rt.replay",
    "p2w_cli",
    "p2w_rt.cli",
    "p2w_runtime.agent",
    "p2w_runtime.browser",
    "p2w_runtime.llm",
    "p2w_runtime.rerun",
    "p2w_runtime.importers",
    "p2w_runtime.recording",
    "p2w_runtime.exec",
)
"""What uses the domain (runs, the episode grammar and writer, the trajectory): the domain imports none of it."""
FLOORS = {
    "schemas": ("p2w_runtime", "p2w_rt.replay", "p2w_cli", "p2w_rt.cli"),
    "p2w_runtime/store": ("p2w_runtime.domain", *ABOVE_THE_DOMAIN),
    "p2w_runtime/domain": ABOVE_THE_DOMAIN,
    "p2w_runtime": ("p2w_rt.replay", "p2w_cli", "p2w_rt.cli"),
    "replay": ("p2w_cli", "p2w_rt.cli"),
}
"""Folder -> the packages no file in it may import: the interfaces stand on nothing of ours, the store knows
streams, events, blobs, claims and seals but no runs or episodes."""
PERSONA2WEB = ("p2w_rt.replay.persona2web",)
BESIDE_PERSONA2WEB = ("replay/judges", "replay/webarena", "replay/agenticshop")
"""The generic judge family and the other benchmarks' plugins: the Persona2Web rubric is one plugin of the family,
standing on it beside WebArena and AgenticShop, so none of them may import it (issue 38)."""


def _imported(tree: ast.AST, package: str = "") -> set[str]:
    """Every module name ``tree`` imports anywhere; relative imports resolved against ``package`` (the dotted
    package the file is in)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            if base:
                names.add(base)
                names.update(f"{base}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name | ast.Attribute)
            and (node.func.id if isinstance(node.func, ast.Name) else node.func.attr) in ("import_module", "__import__")
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.add(node.args[0].value)
    return names


def _within(name: str, packages: tuple[str, ...]) -> bool:
    return any(name == package or name.startswith(f"{package}.") for package in packages)


def _file_imports(path: Path) -> set[str]:
    name = installed_name(REPO, path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    return _imported(ast.parse(path.read_text(), str(path)), package)


def floor_violations(folder: str, forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{path.relative_to(REPO)} imports {name}"
        for path in sorted((REPO / folder).rglob("*.py"))
        for name in sorted(_file_imports(path))
        if _within(name, forbidden)
    ]


def _runtime_modules() -> list[Path]:
    modules = [p for package in ("p2w_runtime", "replay", "schemas") for p in sorted((REPO / package).rglob("*.py"))]
    away = [REPO / name.replace(".", "/") for name in AWAY_FROM_RUNTIME]
    return [p for p in modules if not any(p.is_relative_to(folder) for folder in away)]


def test_the_runtime_and_replay_never_import_the_demo_package_or_the_test_doubles() -> None:
    found = [
        f"{path.relative_to(REPO)} imports {name}"
        for path in _runtime_modules()
        for name in sorted(_file_imports(path))
        if _within(name, AWAY_FROM_RUNTIME)
    ]
    assert found == []


def test_the_check_sees_a_lazy_import() -> None:
    tree = ast.parse("def f():\n    from p2w_runtime.demo.sites import DemoHosting\n")
    assert "p2w_runtime.demo.sites" in _imported(tree)


def test_schemas_import_nothing_of_ours() -> None:
    assert floor_violations("schemas", FLOORS["schemas"]) == []


def test_the_store_imports_neither_the_domain_nor_anything_above_it() -> None:
    assert floor_violations("p2w_runtime/store", FLOORS["p2w_runtime/store"]) == []


def test_the_domain_imports_nothing_that_stands_on_it() -> None:
    assert floor_violations("p2w_runtime/domain", FLOORS["p2w_runtime/domain"]) == []


def test_the_recording_side_imports_neither_replay_nor_the_cli() -> None:
    assert floor_violations("p2w_runtime", FLOORS["p2w_runtime"]) == []


def test_replay_imports_nothing_of_the_cli_the_interface_on_top() -> None:
    assert floor_violations("replay", FLOORS["replay"]) == []


def test_the_floor_check_sees_lazy_relative_and_dynamic_imports() -> None:
    """A store module reaching the domain in each way the floors forbid is found; its own modules are not."""
    source = (
        "from p2w_runtime.store._tree import read_tree\n"
        "from . import _claims\n"
        "def runs(store):\n"
        "    from p2w_runtime.domain import list_runs\n"
        "def episodes():\n"
        "    from ..domain import episodes_of\n"
        "def view():\n"
        "    import importlib\n"
        "    return importlib.import_module('p2w_rt.replay.view')\n"
    )
    names = _imported(ast.parse(source), "p2w_runtime.store")
    assert {"p2w_runtime.store._claims", "p2w_runtime.domain.list_runs", "p2w_runtime.domain"} <= names
    assert "p2w_rt.replay.view" in names
    found = sorted(name for name in names if _within(name, FLOORS["p2w_runtime/store"]))
    assert found == [
        "p2w_rt.replay.view",
        "p2w_runtime.domain",
        "p2w_runtime.domain.episodes_of",
        "p2w_runtime.domain.list_runs",
    ]
    assert not _within("p2w_runtime.domains", ("p2w_runtime.domain",))
    assert not _within("p2w_rt.clickhouse", ("p2w_rt.cli",))


@pytest.mark.parametrize("folder", BESIDE_PERSONA2WEB)
def test_the_judge_family_and_the_other_benchmarks_never_import_the_persona2web_plugin(folder: str) -> None:
    assert floor_violations(folder, PERSONA2WEB) == []


def test_the_plugin_check_sees_imports_for_the_type_checker_inside_functions_and_relative() -> None:
    """A WebArena module reaching the rubric in each way the rule forbids is found."""
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from p2w_rt.replay.persona2web import SiteSettings\n"
        "def targets():\n"
        "    from p2w_rt.replay.persona2web._targets import rubric_targets\n"
        "def sites():\n"
        "    from ..persona2web import _sites\n"
        "from p2w_rt.replay import persona2web\n"
    )
    names = _imported(ast.parse(source), "p2w_rt.replay.webarena")
    assert sorted(name for name in names if _within(name, PERSONA2WEB)) == [
        "p2w_rt.replay.persona2web",
        "p2w_rt.replay.persona2web.SiteSettings",
        "p2w_rt.replay.persona2web._sites",
        "p2w_rt.replay.persona2web._targets",
        "p2w_rt.replay.persona2web._targets.rubric_targets",
    ]


def test_replay_names_the_demo_sites_that_the_catalogue_flags_location_aware() -> None:
    assert set(DEMO_LOCATION_SITES) == {site.host for site in SITES if site.location_aware}

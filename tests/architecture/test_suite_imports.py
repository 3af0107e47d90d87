"""One helpers package: what test modules share lives in ``tests/helpers/`` (a fixture in a ``conftest.py``).

A test module never imports another test module: that would run the other module's module-level code and tie two
test files together, so moving or deleting one breaks the other. And a helper is imported by its full name
(``tests.helpers.paths``), never by a bare one (``helpers.paths``, ``paths``) that resolves only when some folder
happens to be on ``sys.path``. Read from the source with ``ast``, imports inside functions included.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.helpers.paths import HELPERS, REPO

SUITE = REPO / "tests"


def suite_files() -> list[Path]:
    """The suite's Python: test modules, conftests and helpers (not the data files under ``tests/data``)."""
    return [p for p in sorted(SUITE.rglob("*.py")) if p.relative_to(SUITE).parts[0] != "data"]


def module_of(path: Path) -> str:
    """``tests/replay/test_x.py`` as ``tests.replay.test_x`` (a package by its own name)."""
    parts = path.relative_to(REPO).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def bare_names() -> set[str]:
    """Top-level names that mean a module of the suite imported without its ``tests.`` prefix."""
    stems = {p.stem for p in suite_files() if p.stem.startswith("test_") or p.parent == HELPERS}
    return (stems - {"__init__"}) | {"helpers", "conftest"}


def imported(source: str, module: str) -> Iterator[tuple[int, str]]:
    """(line, module) for every import anywhere in ``source``, relative ones made absolute; ``from a import b``
    names both ``a`` and ``a.b``, since ``b`` may be a submodule."""
    package = module.rpartition(".")[0]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1])
                base = f"{anchor}.{base}" if base else anchor
            yield node.lineno, base
            yield from ((node.lineno, f"{base}.{alias.name}") for alias in node.names)


def violations(source: str, module: str, bare: set[str]) -> list[str]:
    """Imports of a test module (named up to it) and of the suite's modules by bare name (the bare top-level
    name), as ``line: what``, once per line."""
    found: set[tuple[int, str]] = set()
    for line, name in imported(source, module):
        parts = name.split(".")
        tests = [i for i, part in enumerate(parts) if i and part.startswith("test_")]
        if parts[0] == "tests" and tests:
            found.add((line, "test module " + ".".join(parts[: tests[0] + 1])))
        elif parts[0] in bare:
            found.add((line, f"bare {parts[0]}"))
    return [f"{line}: {what}" for line, what in sorted(found)]


def test_the_scan_finds_test_modules_and_bare_names_lazy_and_relative_ones_too() -> None:
    source = (
        "from tests.replay.test_judge_llm import make_run\n"
        "import tests.cli.test_view_api as api\n"
        "from tests.replay import test_plugins\n"
        "def later():\n    from .test_secrets import database_text\n"
        "from helpers.paths import REPO\n"
        "import builders\n"
        "from test_replay_cli import build\n"
    )
    assert violations(source, "tests.runtime.test_x", {"helpers", "builders", "conftest", "test_replay_cli"}) == [
        "1: test module tests.replay.test_judge_llm",
        "2: test module tests.cli.test_view_api",
        "3: test module tests.replay.test_plugins",
        "5: test module tests.runtime.test_secrets",
        "6: bare helpers",
        "7: bare builders",
        "8: bare test_replay_cli",
    ]
    allowed = (
        "from tests.helpers.builders import make_run\nfrom tests.helpers import paths\nimport pytest\n"
        "from testing import x\nfrom p2w_runtime.testing.episodes import run_started\nfrom . import _local\n"
    )
    assert violations(allowed, "tests.runtime.test_x", {"helpers", "builders", "paths"}) == []


def test_no_module_of_the_suite_imports_a_test_module_or_a_helper_by_bare_name() -> None:
    files = suite_files()
    assert len(files) > 150 and any(p.parent == HELPERS for p in files), "the scan sees the suite and its helpers"
    bare = bare_names()
    assert {"paths", "builders", "helpers", "test_judge_llm"} <= bare
    bad = {
        str(p.relative_to(REPO)): found
        for p in files
        if (found := violations(p.read_text(encoding="utf-8"), module_of(p), bare))
    }
    assert not bad, f"move what is shared into tests/helpers/ and import it as tests.helpers.<module>: {bad}"

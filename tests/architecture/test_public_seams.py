"""Packages talk through their public names: no module imports another package's private module.

A private module is one whose dotted name has a part starting with ``_`` (``replay.derived._settings``); it
belongs to the package above that part (``replay.derived``), and only modules inside that package may import
it. Everything else goes through the package's ``__init__`` and its ``__all__``. Checked from the source with
``ast``, every import counted (module level, ``TYPE_CHECKING`` blocks and inside functions alike). Tests may
reach into private modules to test them; the packages and ``cli.py`` may not.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.helpers.module_names import OURS, installed_name
from tests.helpers.paths import REPO

PACKAGES = ("schemas", "p2w_runtime", "replay", "p2w_cli")


def _sources(root: Path) -> Iterator[Path]:
    for package in PACKAGES:
        if (root / package).is_dir():
            yield from sorted((root / package).rglob("*.py"))
    if (root / "cli.py").exists():
        yield root / "cli.py"


def _imported_modules(name: str, path: Path) -> set[str]:
    """Every module (and ``module.name``) the file imports, relative imports resolved."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _private_owner(module: str) -> tuple[str, str] | None:
    """``(owner package, private module)`` when ``module`` names a private module of ours, else None."""
    parts = module.split(".")
    if parts[0] not in OURS:
        return None
    for index, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:index]), ".".join(parts[: index + 1])
    return None


def private_imports(root: Path = REPO) -> list[str]:
    """``importer -> private module`` for every import of another package's private module."""
    found: set[str] = set()
    for path in _sources(root):
        name = installed_name(root, path)
        for module in _imported_modules(name, path):
            owned = _private_owner(module)
            if owned is None:
                continue
            owner, private = owned
            if not (name == owner or name.startswith(f"{owner}.")):
                found.add(f"{name} -> {private}")
    return sorted(found)


def test_no_package_imports_another_packages_private_module() -> None:
    assert private_imports() == []


def test_the_check_sees_private_imports_across_packages_even_lazy_or_for_the_type_checker(tmp_path: Path) -> None:
    for folder in ("replay/a", "replay/b", "p2w_cli"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "__init__.py").write_text("")
    (tmp_path / "replay/__init__.py").write_text("")
    (tmp_path / "replay/a/_inner.py").write_text("X = 1\n")
    (tmp_path / "replay/a/_user.py").write_text("from p2w_rt.replay.a._inner import X\nfrom . import _inner\n")
    (tmp_path / "replay/b/lazy.py").write_text("def f():\n    from p2w_rt.replay.a._inner import X\n")
    (tmp_path / "replay/b/typed.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p2w_rt.replay.a import _inner\n"
    )
    (tmp_path / "p2w_cli/_common.py").write_text("")
    (tmp_path / "cli.py").write_text("from p2w_cli._common import *\n")
    assert private_imports(tmp_path) == [
        "p2w_rt.cli -> p2w_cli._common",
        "p2w_rt.replay.b.lazy -> p2w_rt.replay.a._inner",
        "p2w_rt.replay.b.typed -> p2w_rt.replay.a._inner",
    ]

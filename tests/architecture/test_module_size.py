"""Small modules: no product module grows past 300 lines (docs/design/size.md). A module that does is doing more than
one thing; split it by responsibility, each part named for what it does."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.paths import REPO

PRODUCT = ("schemas", "p2w_runtime", "replay", "p2w_cli")
LIMIT = 300


def product_modules() -> list[Path]:
    return [REPO / "cli.py", *(p for package in PRODUCT for p in sorted((REPO / package).rglob("*.py")))]


def lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_product_modules_are_found() -> None:
    modules = product_modules()
    assert len(modules) > 400 and REPO / "p2w_runtime" / "store" / "sqlite.py" in modules


def test_no_product_module_is_over_300_lines() -> None:
    over = {str(p.relative_to(REPO)): lines(p) for p in product_modules() if lines(p) > LIMIT}
    assert not over, f"modules over {LIMIT} lines, to split by responsibility: {over}"

"""Only the run lifecycle writes a run's start and end: no product module builds a ``run.started`` or
``run.finished`` payload (``RunStarted(``, ``RunFinished(``) or calls the ``run_started`` builder, under any name
it is imported as, except the modules listed here. A new writer of runs opens and closes them with
``p2w_runtime.domain``'s ``start_run`` / ``resume_run`` / ``RunRecording.close`` (docs/design/run-lifecycle.md).
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers.paths import REPO

PRODUCT = ("p2w_runtime", "replay", "schemas", "p2w_cli")
"""With ``cli.py``: every product module (``p2w_rt/`` only links to them)."""
BUILDERS = frozenset({"RunStarted", "RunFinished", "run_started"})
ALLOWED = {
    "p2w_runtime/domain/_lifecycle.py": "the lifecycle: run_started for start_run, close_run",
    "p2w_runtime/store/contract/builders.py": "raw events for the store contract tests: the store knows no domain",
    "p2w_runtime/store/contract/coordination.py": "a store contract test appending the contract's raw run.started",
    "p2w_runtime/store/contract/summaries.py": "a store contract test appending the contract's raw run.started",
    "p2w_runtime/testing/episodes.py": "hand-built runs for tests and benchmarks, returned as events to append",
}


def constructions(source: str) -> list[tuple[int, str]]:
    """Where ``source`` calls a builder of run starts or ends: (line, name as written)."""
    tree = ast.parse(source)
    aliases = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.name in BUILDERS
    }
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name is not None and (name in BUILDERS or name in aliases):
            found.append((node.lineno, name))
    return found


def _product_files() -> list[Path]:
    files = [REPO / "cli.py"]
    for package in PRODUCT:
        files += sorted((REPO / package).rglob("*.py"))
    return files


def test_no_product_module_but_the_lifecycle_builds_a_run_start_or_end() -> None:
    found = {
        f"{path.relative_to(REPO)}:{line} {name}("
        for path in _product_files()
        if path.relative_to(REPO).as_posix() not in ALLOWED
        for line, name in constructions(path.read_text())
    }
    assert sorted(found) == []


def test_every_allowed_module_still_builds_one() -> None:
    """An entry whose module no longer builds runs is stale: it would let the next one in unseen."""
    assert [name for name in ALLOWED if not constructions((REPO / name).read_text())] == []


def test_the_check_sees_payloads_builders_and_renamed_imports() -> None:
    source = (
        "from p2w_rt.schemas import RunFinished\n"
        "from p2w_runtime.domain import run_started as started\n"
        "def f(schemas):\n"
        "    a = schemas.RunStarted(run_id='r')\n"
        "    b = RunFinished(status='completed')\n"
        "    return started('r'), a, b, run_finished('r')\n"
    )
    assert sorted(name for _, name in constructions(source)) == ["RunFinished", "RunStarted", "started"]

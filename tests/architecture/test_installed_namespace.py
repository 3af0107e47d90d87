"""Installed, p2w-rt adds only ``p2w_*`` import names, so an agent project with its own ``schemas.py``, ``cli.py`` or
``replay.py`` can import the recording API and record (docs/design/layers.md, "One installed namespace")."""

from __future__ import annotations

import ast
import asyncio
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from p2w_runtime.domain import episodes_of, list_runs
from p2w_runtime.store import open_store
from tests.helpers.module_names import NAMESPACED
from tests.helpers.paths import REPO

AGENT = """
import asyncio, sys
import cli, replay, schemas  # the agent project's own modules
from p2w_runtime.data import load_tasks
from p2w_runtime.demo.sample import sample_tasks_dir
from p2w_runtime.recording import open_run
from p2w_runtime.store import open_store

async def main(db):
    assert (schemas.OWN, cli.OWN, replay.OWN) == ("schemas", "cli", "replay")
    async with open_store(db) as store:
        tasks = [load_tasks(sample_tasks_dir()).get("Lena_Fischer_A1")]
        async with await open_run(store, label="own", agent="own-agent", model="m", tasks=tasks) as run:
            async with run.episode("Lena_Fischer_A1") as episode:
                await episode.observe(url="http://basket.p2w.test/", title="Basket")
                await episode.action("stop [done]")
                await episode.end("answered", answer="done")

asyncio.run(main(sys.argv[1]))
"""


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """p2w-rt's wheel, built from this checkout as ``pip`` builds it."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out), str(REPO)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (built,) = out.glob("p2w_rt-*.whl")
    return built


def test_the_wheel_installs_only_p2w_names(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top = {name.split("/")[0] for name in names if ".dist-info/" not in name}
    assert top == {"p2w_rt", "p2w_runtime", "p2w_cli"}
    # the linked folders arrive as files, with their data
    assert {"p2w_rt/cli.py", "p2w_rt/schemas/__init__.py", "p2w_rt/replay/__init__.py"} <= set(names)
    assert any(name.startswith("p2w_rt/schemas/json/") and name.endswith(".json") for name in names)
    entry_points = next(name for name in names if name.endswith("entry_points.txt"))
    assert "p2w-rt = p2w_rt.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def test_an_agent_project_with_its_own_schemas_cli_and_replay_records_through_the_api(
    wheel: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    project = tmp_path / "agent"
    project.mkdir()
    for own in ("schemas", "cli", "replay"):
        (project / f"{own}.py").write_text(f"OWN = {own!r}\n")
    (project / "agent.py").write_text(AGENT)
    db = tmp_path / "own.db"
    # the installed wheel first (its dependencies from this interpreter), the agent's folder before it as Python sets it
    env = {**os.environ, "PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "agent.py", str(db)], cwd=project, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]

    async def recorded() -> tuple[str, str | None]:
        async with open_store(db) as store:
            (run,) = await list_runs(store)
            (episode,) = await episodes_of(store, run.run_id)
            return run.label, episode.end_reason

    assert asyncio.run(recorded()) == ("own", "answered")


def test_none_of_the_generic_names_is_ours_when_installed(wheel: Path, tmp_path: Path) -> None:
    """From a folder of nobody's, with the wheel installed: ``schemas``, ``replay`` and ``cli`` are not found."""
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    probe = (
        "import importlib.util as u, sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')];"
        "print([n for n in ('schemas', 'replay', 'cli') if u.find_spec(n) is not None], "
        "u.find_spec('p2w_rt.schemas').origin.startswith(sys.argv[1]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(site)],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(site)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout.split() == ["[]", "True"], done.stderr[-2000:]


def test_no_source_imports_the_generic_names_bare() -> None:
    """``from schemas import X`` would still run from a checkout (its folder is on the path) and load a second copy
    of every model; installed it would import the user's module. Every import names ``p2w_rt``."""
    bare = []
    for folder in ("schemas", "replay", "p2w_runtime", "p2w_cli", "tests", "benchmarks", "scripts", "examples"):
        for path in sorted((REPO / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names = (
                    [alias.name for alias in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                    if isinstance(node, ast.ImportFrom) and not node.level
                    else []
                )
                bare += [f"{path.relative_to(REPO)}: {n}" for n in names if n.split(".")[0] in NAMESPACED]
    assert bare == []

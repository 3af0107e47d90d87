"""What ``p2w-rt --help``, ``runs`` and ``show`` load: none of the heavy libraries another command needs.

Each command runs in a fresh interpreter (``import cli; cli.main([...])``, as the ``p2w-rt`` script does) and reports
``sys.modules`` when it ends; the assertion is on that module set, not on timings (``benchmarks/bench_startup.py``
measures those). The store the listing reads is the bundled ``earlier`` example run, imported once.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import BinaryIO

import pytest
from click.testing import CliRunner

from cli import main
from p2w_runtime.demo.examples import example_run_bundles

HEAVY = (
    "torch",
    "sentence_transformers",
    "faiss",
    "playwright",
    "matplotlib",
    "scipy",
    "pyarrow",
    "asyncpg",
    "starlette",
    "uvicorn",
    "jinja2",
    "openai",
)
STORE = ("sqlalchemy", "sqlmodel", "aiosqlite", "schemas")
"""What reading the SQLite store takes; ``--help`` needs none of it."""

_REPORT = """
import json, sys
import cli
try:
    cli.main(sys.argv[2:])
except SystemExit as exit:
    code = exit.code
else:
    code = 0
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "modules": sorted({name.split(".")[0] for name in sys.modules})}, out)
"""


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("startup")
    path = folder / "runs.db"
    bundle = next(b for b in example_run_bundles() if b.stem == "earlier")
    result = CliRunner().invoke(main, ["--db", str(path), "--log-file", str(folder / "log"), "import", str(bundle)])
    assert result.exit_code == 0, result.output
    return path


def _loaded(tmp_path: Path, *args: str) -> tuple[set[str], str]:
    """(top-level modules in ``sys.modules`` when the command ended, its stdout); the command must succeed."""
    report = tmp_path / "modules.json"
    env = {**os.environ, "P2W_LOG_FILE": str(tmp_path / "p2w.log")}
    done = subprocess.run(
        [sys.executable, "-c", _REPORT, str(report), *args], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(report.read_text())
    assert seen["code"] in (0, None), done.stderr
    return set(seen["modules"]), done.stdout


def test_help_loads_neither_the_store_nor_any_heavy_library(tmp_path: Path) -> None:
    modules, out = _loaded(tmp_path, "--help")
    assert "Record, judge, classify and diff" in out and "show" in out
    assert not modules & {*HEAVY, *STORE}, sorted(modules & {*HEAVY, *STORE})


def test_runs_reads_sqlite_without_the_heavy_libraries(tmp_path: Path, db: Path) -> None:
    modules, out = _loaded(tmp_path, "--db", str(db), "runs")
    assert "earlier" in out and "completed" in out
    assert set(STORE) <= modules  # the check sees what a command does load
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


def test_show_lists_a_run_without_the_heavy_libraries(tmp_path: Path, db: Path) -> None:
    modules, out = _loaded(tmp_path, "--db", str(db), "show", "earlier")
    assert "Lena_Fischer_A1" in out and "answered" in out
    assert set(STORE) <= modules
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))


def test_subcommand_help_loads_no_store(tmp_path: Path, db: Path) -> None:
    modules, out = _loaded(tmp_path, "--db", str(db), "show", "--help")
    assert "RUN" in out
    assert not modules & {*HEAVY, *STORE}, sorted(modules & {*HEAVY, *STORE})


def test_a_command_loading_a_model_says_so_on_a_terminal(tmp_path: Path) -> None:
    """The real load path (sentence-transformers reading a folder) on a folder that holds no model, stderr a
    terminal: the notice comes first, then the one-line error naming the embedder. On a pipe, only the error."""
    not_a_model = tmp_path / "not-a-model"
    not_a_model.mkdir()
    env = {**os.environ, "P2W_LOG_FILE": str(tmp_path / "p2w.log"), "COLUMNS": "500"}
    command = [
        *(sys.executable, "-c", "import sys, cli; cli.main(sys.argv[1:])", "history", "search", "Jordan_Park", "q"),
        *("--embedder", str(not_a_model), "--cache-dir", str(tmp_path / "cache")),
    ]
    leader, follower = pty.openpty()
    with os.fdopen(leader, "rb", buffering=0) as terminal:
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=follower, env=env, timeout=300)
        os.close(follower)
        said = _read_all(terminal).decode().replace("\r\n", "\n").splitlines()
    assert done.returncode != 0
    assert said[0] == f"loading {not_a_model} …", said
    assert said[-1].startswith("error: embedder") and "cannot load the model" in said[-1], said

    piped = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert piped.returncode != 0
    assert piped.stderr.splitlines() == [said[-1]]


def _read_all(terminal: BinaryIO) -> bytes:
    """What the child wrote to the terminal; reading past its end raises EIO on Linux."""
    out = b""
    while True:
        try:
            chunk = terminal.read(65536)
        except OSError:
            return out
        if not chunk:
            return out
        out += chunk

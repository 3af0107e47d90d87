"""Ctrl-C at any point of a command prints ``interrupted`` and exits 130, as it does during a pass.

Each command runs as the installed ``p2w-rt`` process, held still in its start-up by a module on its
``PYTHONPATH`` that marks a file and sleeps; SIGINT is sent once the mark is there, so the interrupt lands at a
known point, not after a guessed delay.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.plugin_install import install

P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))

SLEEPER = """
import pathlib, time

pathlib.Path({mark!r}).touch()
time.sleep(300)
"""
"""A module whose import marks ``mark`` and waits there for the interrupt."""


def _interrupt_when_marked(site: Path, mark: Path, *args: str) -> tuple[int, str]:
    """``p2w-rt ARGS`` with ``site`` first on its ``PYTHONPATH``, sent SIGINT once ``mark`` exists: exit code,
    stderr."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(site), os.environ.get("PYTHONPATH"))))}
    with subprocess.Popen([P2W_RT, *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        deadline = time.monotonic() + 120
        while not mark.exists() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        if not mark.exists():
            p.kill()
            pytest.fail(f"the command never reached the sleeping module: {p.communicate()}")
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=120)
    return p.returncode, err


def test_ctrl_c_while_the_cli_modules_load(tmp_path: Path) -> None:
    """``p2w_cli._common`` imports ``unicodedata``, which nothing imports before the CLI's modules load: the one
    found first on ``PYTHONPATH`` stands in for it and holds the import there."""
    site, mark = tmp_path / "site", tmp_path / "importing"
    site.mkdir()
    (site / "unicodedata.py").write_text(SLEEPER.format(mark=str(mark)))
    code, err = _interrupt_when_marked(site, mark, "--db", str(tmp_path / "p2w.db"), "runs")
    assert (code, err) == (130, "interrupted\n")
    assert not (tmp_path / "p2w.db").exists()


def test_ctrl_c_while_a_command_parses_its_options(tmp_path: Path) -> None:
    """``import-trajectories --format`` reads the formats while its options are parsed, which loads the installed
    plugins: one of them holds the parse there."""
    site, mark = tmp_path / "site", tmp_path / "parsing"
    install(site, "sleeper = outside_bench", SLEEPER.format(mark=str(mark)))
    db = tmp_path / "p2w.db"
    code, err = _interrupt_when_marked(
        site, mark, "--db", str(db), "--log-file", f"{db}.log", "import-trajectories", "--examples", "--format", "x"
    )
    assert (code, err) == (130, "interrupted\n")
    assert not db.exists()

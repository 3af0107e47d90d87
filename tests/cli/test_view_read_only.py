"""``view --annotator`` on a store it cannot write refuses at start in one line; ``view`` alone serves that store.

The store is read-only as the viewer really meets one under root: its folder on a read-only mount
(``tests/helpers/read_only_mount.py``). Each viewer runs as its own ``p2w-rt`` process, read until it either exits
or prints the line it prints once it serves, so no wait is guessed.
"""

from __future__ import annotations

import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from p2w_rt.cli import main
from tests.helpers.read_only_mount import on_read_only, skip_unless_read_only_mounts
from tests.helpers.view_support import URL_LINE

P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))


@pytest.fixture
def archive(tmp_path: Path) -> Path:
    """A folder holding ``old.db`` with one imported run, to be mounted read-only."""
    skip_unless_read_only_mounts(tmp_path / "probe")
    folder = tmp_path / "archive"
    folder.mkdir()
    args = ["--db", str(folder / "old.db"), "import-trajectories", "--examples", "--format", "p2w-agentoccam"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return folder


def _view(archive: Path, *args: str) -> tuple[int | None, str, str]:
    """``p2w-rt --db ARCHIVE/old.db view ARGS`` with ``archive`` read-only: its exit code, stdout and stderr once
    it exits, or ``None`` and the URL it serves at (fetched once) when it starts serving instead."""
    command = [P2W_RT, "--db", str(archive / "old.db"), "--log-file", "/dev/null", "view", "--port", "0", *args]
    with subprocess.Popen(
        on_read_only(archive, command), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=archive.parent
    ) as proc:
        assert proc.stdout is not None
        served = URL_LINE.search(proc.stdout.readline())  # "p2w-rt view: DB at URL" once serving; EOF on exit
        if served is None:
            out, err = proc.communicate(timeout=120)
            return proc.returncode, out, err
        try:
            with urllib.request.urlopen(served.group(1), timeout=60) as page:
                assert page.status == 200
        finally:
            proc.terminate()
            proc.communicate(timeout=60)
        return None, served.group(1), ""


def test_view_annotator_refuses_a_read_only_store_in_one_line(archive: Path) -> None:
    code, out, err = _view(archive, "--annotator", "alice")
    assert code == 2 and out == "", (code, out, err)
    assert err == (
        f"error: {archive / 'old.db'}: opened read-only (the file, its folder or its medium is read-only), so "
        "--annotator cannot record labels in it; view it without --annotator\n"
    )


def test_view_without_annotator_serves_the_read_only_store(archive: Path) -> None:
    code, url, err = _view(archive)
    assert code is None and url.startswith("http://127.0.0.1:"), (code, url, err)

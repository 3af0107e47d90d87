"""The suite's own TMPDIR, and the check that nothing is left in it when the session ends (docs/design/temp-files.md).

Every test, and every process a test starts (p2w-rt, Chromium, Playwright's driver, Browser-Use, PostgreSQL, an
outside agent), keeps its temporary files in one folder of the session's instead of the machine's temp dir, which
other sessions share. Whatever is still in it once every fixture is torn down was left by code that does not clean
up after itself; it is named with the test after which it first appeared, then removed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

KEPT_BY_DESIGN = ("torchinductor_", "pytest-of-")
"""Folders kept in the temp dir on purpose, under one name per user that every later run reuses, so they never pile
up: torch's compiler cache (made when torch is imported) and the base of pytest's ``tmp_path`` folders (of a pytest a
test runs; pytest keeps its last three sessions). Not counted as left behind."""
SESSION_PREFIX = "p2w-s-"
"""The session's folder: a short name, since every socket a test's process makes in it (Chromium's, PostgreSQL's) has
a path of at most 107 bytes, and a suite run by ``tests/suite/test_suite_interrupts.py`` nests one more session in
it."""
KILLED_LEAVE = ("p2w-har-", "p2w-exec-", "p2w-agent-", "org.chromium.Chromium.")
"""What a recording ``p2w-rt`` killed with SIGKILL mid-episode leaves, since it runs no clean-up: the own agent's
episode HAR folder (empty: Playwright writes the HAR when the episode ends; its browser and Playwright's folders are
removed by Playwright's driver, which outlives it); ``record --exec``'s Chromium profile, the agent's TMPDIR and the
socket folder of that Chromium (killed with the recorder, ``setpriv --pdeathsig``). The next p2w-rt to make a
scratch folder in the same temp dir removes all but the last (``p2w_runtime.scratch``)."""


def left_behind(folder: Path) -> list[str]:
    """The names in ``folder`` that are not kept there by design."""
    return sorted(name for name in os.listdir(folder) if not name.startswith(KEPT_BY_DESIGN))


@contextmanager
def process_tmpdir() -> Iterator[Path]:
    """An empty folder to give a process as its TMPDIR, removed afterwards. In the session's temp dir, not under
    ``tmp_path``: Chromium makes its socket in its temp dir, a socket's path has at most 107 bytes, and a test's
    folder with ``org.chromium.Chromium.XXXXXX/SingletonSocket`` exceeds it (Chromium stops at start)."""
    folder = Path(tempfile.mkdtemp(prefix="p2w-t-"))
    try:
        yield folder
    finally:
        _remove(folder)


REMOVE_FOR = 60.0
"""Seconds a process folder's removal waits for the processes still given it: one killed a moment before (a
Chromium dying with a killed recorder, its helpers after it) can still write into it, and a write after ``rmtree``
makes the folder again with its parents (Chromium creates a missing profile path whole)."""


def _remove(folder: Path) -> None:
    deadline = time.monotonic() + REMOVE_FOR
    while holders(folder) and time.monotonic() < deadline:
        time.sleep(0.2)
    shutil.rmtree(folder, ignore_errors=True)
    while folder.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
        shutil.rmtree(folder, ignore_errors=True)


def holders(folder: Path) -> list[int]:
    """The live processes given ``folder``: as their TMPDIR, or named in their arguments (a profile under it)."""
    tmpdir, named = f"TMPDIR={folder}".encode(), str(folder).encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ, cmdline = (entry / "environ").read_bytes(), (entry / "cmdline").read_bytes()
        except OSError:  # gone, or another user's (PostgreSQL's)
            continue
        if tmpdir in environ.split(b"\0") or named in cmdline:
            found.append(int(entry.name))
    return found


class SuiteTmp:
    """The session's TMPDIR while ``active()``; ``look(nodeid)`` after each test notes what appeared during it.

    ``killing``: the test modules that kill a recording ``p2w-rt`` with SIGKILL on purpose; what such a process
    leaves (``KILLED_LEAVE``) during their tests is removed but not counted. By module, not by test: a module
    fixture that kills runs during whichever of its tests comes first (``-k``)."""

    def __init__(self, killing: frozenset[str]) -> None:
        self.killing = killing
        self.folder: Path | None = None
        self.running = "the first test"
        """The test running now (set when it starts): what appears in the session's teardown is named with it."""
        self._first_seen: dict[str, str] = {}

    @contextmanager
    def active(self) -> Iterator[list[str]]:
        """Make a fresh TMPDIR the session's (environment and ``tempfile``); on exit, fill the yielded list with
        what was left in it (each as ``name (after TEST)``) and remove it."""
        self.folder = Path(tempfile.mkdtemp(prefix=SESSION_PREFIX))
        self.folder.chmod(0o755)  # a PostgreSQL server run as ``postgres`` (a suite run by root) reaches its cluster
        patch = pytest.MonkeyPatch()
        patch.setenv("TMPDIR", str(self.folder))
        patch.setattr(tempfile, "tempdir", str(self.folder))
        left: list[str] = []
        try:
            yield left
        finally:
            patch.undo()
            for name in left_behind(self.folder):
                test = self._first_seen.get(name, self.running)
                if not (name.startswith(KILLED_LEAVE) and Path(test.split("::")[0]).stem in self.killing):
                    left.append(f"{name} (after {test})")
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def look(self, nodeid: str) -> None:
        if self.folder is not None:
            for name in os.listdir(self.folder):
                self._first_seen.setdefault(name, nodeid)

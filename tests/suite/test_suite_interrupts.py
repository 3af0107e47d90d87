"""Stopping the test suite: one Ctrl-C (or SIGTERM) ends the run, and the suite's PostgreSQL server stops however
the run ends. Each case runs `interrupt_support.py` in a pytest of its own, with its own TMPDIR holding the server's
cluster, and signals it while a command under test keeps it busy."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.paths import HELPERS, REPO
from tests.helpers.suite_tmp import SESSION_PREFIX

pytestmark = pytest.mark.slow

SUPPORT = HELPERS / "interrupt_support.py"
BOUND_S = 60


def _processes_in(folder: Path) -> list[int]:
    """Processes whose working directory is inside ``folder``: every PostgreSQL process runs in its data folder."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cwd = os.readlink(f"/proc/{entry}/cwd")
            except OSError:
                continue
            if cwd.startswith(f"{folder}/"):
                found.append(int(entry))
    return found


@pytest.fixture
def inner_tmp() -> Iterator[Path]:
    """The inner suite's TMPDIR. Not under ``tmp_path``: pytest makes that 0700, and a server run as the
    ``postgres`` user (this suite under root) must reach its cluster folder inside."""
    folder = Path(tempfile.mkdtemp(prefix="p2w-interrupt-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def _suite_busy_in_a_test(tmp_path: Path, tmp: Path) -> tuple[subprocess.Popen[str], Path]:
    """The inner pytest, once its first test holds the PostgreSQL server and runs a command."""
    mark = tmp_path / "started"
    env = {**os.environ, "TMPDIR": str(tmp), "P2W_TEST_STARTED_MARK": str(mark)}
    suite = subprocess.Popen(
        [sys.executable, "-m", "pytest", str(SUPPORT), "-q", "-p", "no:cacheprovider"],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,  # its own process group, as a shell gives a command: a terminal's Ctrl-C hits it all
    )  # fmt: skip
    deadline = time.monotonic() + 180
    while not mark.exists():
        assert suite.poll() is None, suite.communicate()[0]
        assert time.monotonic() < deadline, "the inner suite never started its test"
        time.sleep(0.2)
    assert _processes_in(tmp), "no PostgreSQL server runs for the inner suite"
    time.sleep(1)  # inside the command now
    return suite, tmp


def _ended(suite: subprocess.Popen[str]) -> str:
    try:
        return suite.communicate(timeout=BOUND_S)[0]
    except subprocess.TimeoutExpired:
        suite.kill()
        output = suite.communicate()[0]
        pytest.fail(f"the suite still ran {BOUND_S} s after the signal:\n{output[-2000:]}")


def _no_server_left(tmp: Path) -> None:
    deadline = time.monotonic() + BOUND_S  # after SIGKILL the watchdog stops the server, then removes the folder
    while (_processes_in(tmp) or _clusters(tmp)) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _processes_in(tmp) == []
    assert not _clusters(tmp), "the cluster folder was left behind"


def _clusters(tmp: Path) -> list[Path]:
    """The inner suite's cluster folders: in the TMPDIR it was given, or in the one it makes for itself there
    (``suite_tmp.py``)."""
    return [*tmp.glob("p2w-pg-*"), *tmp.glob(f"{SESSION_PREFIX}*/p2w-pg-*")]


def test_one_ctrl_c_stops_the_suite_and_its_postgres_server(tmp_path: Path, inner_tmp: Path) -> None:
    suite, tmp = _suite_busy_in_a_test(tmp_path, inner_tmp)
    os.killpg(suite.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
    output = _ended(suite)
    assert suite.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "Interrupted: interrupted by SIGINT" in output
    assert not (tmp_path / "started.reached").exists(), "the next test ran after the Ctrl-C"
    _no_server_left(tmp)


def test_sigterm_stops_the_suite_with_its_teardown(tmp_path: Path, inner_tmp: Path) -> None:
    suite, tmp = _suite_busy_in_a_test(tmp_path, inner_tmp)
    suite.send_signal(signal.SIGTERM)
    output = _ended(suite)
    assert suite.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "Interrupted: interrupted by SIGTERM" in output
    assert not (tmp_path / "started.reached").exists()
    _no_server_left(tmp)


def test_a_killed_suite_leaves_no_postgres_server(tmp_path: Path, inner_tmp: Path) -> None:
    """SIGKILL runs no teardown at all: the watchdog the server was started with stops it."""
    suite, tmp = _suite_busy_in_a_test(tmp_path, inner_tmp)
    suite.kill()
    _ended(suite)
    assert suite.returncode == -signal.SIGKILL
    _no_server_left(tmp)


@pytest.mark.parametrize("at", ["setup", "call"])
def test_a_ctrl_c_in_a_test_using_tmp_path_ends_in_pytest_s_short_report(at: str) -> None:
    """A Ctrl-C while ``tmp_path``'s test is set up used to end the session in ~70 lines of ``KeyError: StashKey``
    from pytest's own teardown of ``tmp_path`` (one try in two, depending on where the signal landed)."""
    support = HELPERS / "interrupt_tmp_support.py"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(support), "-q", "-p", "no:cacheprovider"],
        cwd=REPO, env={**os.environ, "P2W_INTERRUPT_AT": at}, capture_output=True, text=True,
        timeout=BOUND_S * 2,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "KeyError" not in output and "Traceback" not in output and "INTERNALERROR" not in output, output
    assert "KeyboardInterrupt" in output and len(output.splitlines()) <= 6, output

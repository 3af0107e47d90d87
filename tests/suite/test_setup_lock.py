"""`scripts/setup.sh` waits for the package lock instead of failing: its `wait_for_apt_locks` against a lock file
held the way apt and dpkg hold theirs (an fcntl record lock), in a temporary folder, never the system's."""

from __future__ import annotations

import fcntl
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.paths import REPO

HELPER = REPO / "scripts" / "apt_lock.sh"


@pytest.fixture
def held_lock(tmp_path: Path) -> Iterator[Path]:
    """A lock file this test process holds as apt does (``lockf`` is fcntl's F_SETLK) until the test releases it."""
    path = tmp_path / "lock-frontend"
    with path.open("w") as handle:
        fcntl.lockf(handle, fcntl.LOCK_EX)
        yield path


def _waiter(*locks: Path, timeout_s: int = 60) -> subprocess.Popen[str]:
    env = {**os.environ, "P2W_APT_LOCK_TIMEOUT": str(timeout_s), "P2W_APT_LOCK_REPORT_EVERY": "1"}
    script = f'. "{HELPER}"; wait_for_apt_locks "$@" && echo proceeding'
    return subprocess.Popen(
        ["bash", "-c", script, "wait", *map(str, locks)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def test_waits_while_the_lock_is_held_then_proceeds(held_lock: Path, tmp_path: Path) -> None:
    free = tmp_path / "lock"
    free.touch()
    waiter = _waiter(free, held_lock)
    assert waiter.stderr is not None
    said = [waiter.stderr.readline() for _ in range(2)]  # one message at once, another a second later
    assert all(line.startswith("setup: waiting for the package lock: ") for line in said), said
    assert f"{held_lock} (pid {os.getpid()}: " in said[0]
    assert waiter.poll() is None, "returned while the lock was held"
    with held_lock.open("r+") as again:  # fcntl locks are the process's: any descriptor releases them
        fcntl.lockf(again, fcntl.LOCK_UN)
    out, err = waiter.communicate(timeout=30)
    assert waiter.returncode == 0, err
    assert out.strip() == "proceeding"
    assert "setup: the package lock is free after" in err.splitlines()[-1]


def test_a_free_or_missing_lock_is_passed_at_once_and_silently(tmp_path: Path) -> None:
    free = tmp_path / "lock"
    free.touch()
    waiter = _waiter(free, tmp_path / "absent")
    out, err = waiter.communicate(timeout=30)
    assert (waiter.returncode, out.strip(), err) == (0, "proceeding", "")


def test_gives_up_after_the_timeout_naming_the_lock(held_lock: Path) -> None:
    waiter = _waiter(held_lock, timeout_s=2)
    out, err = waiter.communicate(timeout=30)
    assert waiter.returncode == 1
    assert out == ""
    assert err.splitlines()[-1].startswith(f"setup: error: {held_lock} (pid {os.getpid()}: ")
    assert "still holds the package lock after" in err


def test_setup_installs_through_the_waiting_apt_get() -> None:
    """Every apt-get of setup.sh goes through ``apt_get`` (probe, then apt-get with its own lock timeout)."""
    setup = (HELPER.parent / "setup.sh").read_text()
    assert ". scripts/apt_lock.sh" in setup
    calls = [line.strip() for line in setup.splitlines() if "apt-get" in line or "apt_get" in line]
    assert calls and all(line.startswith("apt_get ") for line in calls if not line.startswith(("#", ".")))
    assert 'apt-get -o DPkg::Lock::Timeout="$P2W_APT_LOCK_TIMEOUT"' in HELPER.read_text()

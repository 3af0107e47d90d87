"""A folder on a read-only mount that only one command sees: how tests running as root make a store read-only.

Root writes through ``chmod 444`` and a read-only folder, so those alone prove nothing; a read-only bind mount
refuses root as well (EROFS). The command runs in its own mount namespace (``unshare -m``), so nothing is mounted
outside it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

MOUNT_READ_ONLY = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
UNSHARE = ["unshare", "-m", "--propagation", "private"] if os.geteuid() == 0 else ["unshare", "-rm"]


def on_read_only(folder: Path, command: list[str]) -> list[str]:
    """``command`` run with ``folder`` on a read-only mount (the command replaces the shell that mounts it)."""
    return [*UNSHARE, "sh", "-c", MOUNT_READ_ONLY, "sh", str(folder), *command]


def skip_unless_read_only_mounts(probe: Path) -> None:
    """Skip the test where no private read-only mount of the folder ``probe`` (made if missing) can be made (no
    ``unshare``, no privilege)."""
    probe.mkdir(exist_ok=True)
    done = subprocess.run(
        on_read_only(probe, ["sh", "-c", 'touch "$0/x"', str(probe)]), capture_output=True, text=True, timeout=60
    )
    if "Read-only file system" not in done.stderr:
        pytest.skip(f"cannot make a private read-only mount here ({done.stderr.strip()[:200]})")

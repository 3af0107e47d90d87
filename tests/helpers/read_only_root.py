"""The filesystem root read-only for one command, but for one folder: a test of a command that must write nothing
into ``/`` cannot write there even if the command regresses. The command runs in its own mount namespace
(``unshare -m``); only its view of ``/`` is read-only (a bind remount), nothing outside it changes."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.helpers.read_only_mount import UNSHARE

_MOUNT = 'mount --bind "$1" "$1" && mount -o remount,bind,ro / && shift && exec "$@"'


def on_read_only_root(writable: Path, command: list[str]) -> list[str]:
    """``command`` run with ``/`` read-only and ``writable`` (a folder beneath it) a writable mount of its own."""
    return [*UNSHARE, "sh", "-c", _MOUNT, "sh", str(writable), *command]


def skip_unless_read_only_root(writable: Path) -> None:
    """Skip the test where ``/`` cannot be made read-only for one command (no ``unshare``, no privilege)."""
    probe = on_read_only_root(writable, ["sh", "-c", 'touch "$0/probe" && touch /', str(writable)])
    done = subprocess.run(probe, capture_output=True, text=True, timeout=60)
    if "Read-only file system" not in done.stderr or not (writable / "probe").exists():
        pytest.skip(f"cannot make / read-only for one command here ({done.stderr.strip()[:200]})")

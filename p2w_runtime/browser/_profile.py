"""Removing the profile of a Chromium p2w-rt starts itself, with the folder Chromium made for it in the temp dir.

Chromium puts its single-instance socket in a folder of its own in the temp dir (``org.chromium.Chromium.XXXXXX``)
and links it from the profile (``SingletonSocket``). It removes that folder when it shuts down by itself
(``Browser.close`` over CDP, Ctrl-C) but not when it is terminated (SIGTERM, what Browser-Use's ``kill()`` sends) or
killed, so each such browser left one folder behind in the user's temp dir (docs/design/temp-files.md). Its renderer,
GPU and network helpers outlive the browser process for a moment, on a loaded machine for seconds, and write into the
profile meanwhile: they are waited for first.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import time
from pathlib import Path

_WAIT_S = 10.0
"""How long the processes still running with a profile may take to exit by themselves, then once killed."""
_TRIES, _RETRY_S = 20, 0.1
"""How long a profile that reappears while it is removed is tried again (seconds: ``_TRIES * _RETRY_S``)."""
_SINGLETON_FILES = frozenset({"SingletonSocket", "SingletonCookie"})
"""What Chromium keeps in its socket folder: a folder holding anything else is not removed."""


async def close_profile(profile: str | Path) -> None:
    """Once no process runs with ``profile`` any more (killed after ``_WAIT_S``, given up on after twice that), remove
    it and the socket folder its ``SingletonSocket`` link points to, however the browser ended."""
    loop = asyncio.get_running_loop()
    killed, deadline = False, loop.time() + _WAIT_S
    while users := running_with(str(profile)):
        if loop.time() > deadline:
            if killed:
                break
            for pid in users:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            killed, deadline = True, loop.time() + _WAIT_S
        await asyncio.sleep(0.05)
    remove_profile(profile)


def running_with(text: str) -> list[int]:
    """Processes alive whose command line holds ``text`` (a Chromium's helpers carry its ``--user-data-dir``), read
    from ``/proc``: an orphaned helper that exited stays a zombie where the machine's init reaps nothing (a
    container's), and a zombie writes nothing. Empty without ``/proc``."""
    found, needle = [], text.encode()
    for proc in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError, IndexError):
            if needle in (proc / "cmdline").read_bytes() and _state(proc) != "Z":
                found.append(int(proc.name))
    return found


def _state(proc: Path) -> str:
    return (proc / "stat").read_text().rsplit(")", 1)[1].split()[0]


def remove_profile(profile: str | Path) -> None:
    """Remove ``profile`` and the socket folder its ``SingletonSocket`` link points to."""
    profile = Path(profile)
    with contextlib.suppress(OSError):
        socket_folder = (profile / os.readlink(profile / "SingletonSocket")).parent
        if {entry.name for entry in socket_folder.iterdir()} <= _SINGLETON_FILES:
            shutil.rmtree(socket_folder)
    for _ in range(_TRIES):  # a helper process of a browser that just exited may still write a file into it
        shutil.rmtree(profile, ignore_errors=True)
        if not profile.exists():
            return
        time.sleep(_RETRY_S)

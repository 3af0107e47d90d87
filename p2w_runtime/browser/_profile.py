"""Removing the profile of a Chromium p2w-rt starts itself, with the folder Chromium made for it in the temp dir.

Chromium puts its single-instance socket in a folder of its own in the temp dir (``org.chromium.Chromium.XXXXXX``)
and links it from the profile (``SingletonSocket``). It removes that folder when it shuts down by itself
(``Browser.close`` over CDP, Ctrl-C) but not when it is terminated (SIGTERM, what Browser-Use's ``kill()`` sends) or
killed, so each such browser left one folder behind in the user's temp dir (docs/design/temp-files.md).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from pathlib import Path

_TRIES, _RETRY_S = 20, 0.1
"""How long a profile that reappears while it is removed is tried again (seconds: ``_TRIES * _RETRY_S``)."""
_SINGLETON_FILES = frozenset({"SingletonSocket", "SingletonCookie"})
"""What Chromium keeps in its socket folder: a folder holding anything else is not removed."""


def remove_profile(profile: str | Path) -> None:
    """Remove ``profile`` and the socket folder its ``SingletonSocket`` link points to, however the browser ended."""
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

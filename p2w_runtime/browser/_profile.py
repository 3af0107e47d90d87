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
from pathlib import Path

_SINGLETON_FILES = frozenset({"SingletonSocket", "SingletonCookie"})
"""What Chromium keeps in its socket folder: a folder holding anything else is not removed."""


def remove_profile(profile: str | Path) -> None:
    """Remove ``profile`` and the socket folder its ``SingletonSocket`` link points to, however the browser ended."""
    profile = Path(profile)
    with contextlib.suppress(OSError):
        socket_folder = (profile / os.readlink(profile / "SingletonSocket")).parent
        if {entry.name for entry in socket_folder.iterdir()} <= _SINGLETON_FILES:
            shutil.rmtree(socket_folder)
    shutil.rmtree(profile, ignore_errors=True)

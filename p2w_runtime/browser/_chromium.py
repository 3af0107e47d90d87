"""Finding and launching Chromium: Playwright's own build if installed, else the system one."""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from p2w_runtime.browser._errors import BrowserUnavailable

LAUNCH_ARGS: tuple[str, ...] = (
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)
"""Quiet, reproducible Chromium: no background traffic that would end up in HARs, no QUIC, no sandbox (containers)."""

SYSTEM_CANDIDATES: tuple[str, ...] = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")
ENV_VAR = "P2W_CHROMIUM"


def find_chromium(
    explicit: str | None = None, *, bundled: str | None = None, system: Sequence[str] = SYSTEM_CANDIDATES
) -> str:
    """Return the Chromium executable to launch.

    Order: ``explicit`` (``--chromium``), then ``$P2W_CHROMIUM``, then Playwright's bundled Chromium (``bundled`` is
    ``playwright.chromium.executable_path``, passed in because asking for it needs a running Playwright driver),
    then the ``system`` candidates. An explicit choice that does not exist is an error, never silently replaced.
    """
    for origin, choice in (("--chromium", explicit), (f"${ENV_VAR}", os.environ.get(ENV_VAR))):
        if choice:
            found = _executable(choice)
            if found is None:
                raise BrowserUnavailable(f"{origin} {choice!r}: no such executable; pass the path of a Chromium binary")
            return found
    if bundled and _executable(bundled):
        return bundled
    for candidate in system:
        found = _executable(candidate)
        if found:
            return found
    tried = [f"Playwright's bundled Chromium ({bundled or 'not known'})", *system]
    raise BrowserUnavailable(
        "no Chromium found (tried " + ", ".join(tried) + "); install one with `playwright install chromium` or "
        "`apt-get install chromium`, or pass --chromium PATH / set P2W_CHROMIUM"
    )


def _executable(choice: str) -> str | None:
    path = Path(choice)
    if path.is_file() and os.access(path, os.X_OK):
        return str(path)
    return shutil.which(choice) if os.sep not in choice else None

"""Where a run's events came from: code version, git commit, package versions, host."""

from __future__ import annotations

import socket
import subprocess
from functools import cache
from pathlib import Path

_PACKAGES = ("p2w-rt", "pydantic", "sqlalchemy", "aiosqlite")


def package_versions() -> dict[str, str]:
    from importlib import metadata  # only a recording asks: every command that imports the domain would pay for it

    versions = {}
    for name in _PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


def code_version() -> str:
    return package_versions().get("p2w-rt", "unknown")


@cache
def git_sha() -> str | None:
    """The commit of the checkout this code runs from; None for an installed wheel or a repo without commits."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=Path(__file__).resolve().parent,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    sha = done.stdout.strip()
    return sha if done.returncode == 0 and len(sha) == 40 else None


def host() -> str:
    return socket.gethostname()

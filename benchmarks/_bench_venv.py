"""A virtual environment of a benchmark's own, for a peer it measures against that p2w-rt does not depend on
(inspect-ai, eventsourcing): made once under the user's cache folder, the peer installed at the version given."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "p2w-bench"


def peer_python(venv: Path, requirement: str) -> Path:
    """The interpreter of ``venv`` with ``requirement`` installed (the environment made and the package installed
    if it is not there yet)."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", requirement], check=True)
    return python

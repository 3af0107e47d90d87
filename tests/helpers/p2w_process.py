"""The installed ``p2w-rt`` command in its own process, run from beside the store it is given."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def p2w_rt(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``p2w-rt --db DB ARGS`` in DB's folder, its output captured as text."""
    command = [str(Path(sys.executable).with_name("p2w-rt")), "--db", str(db), *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=db.parent)

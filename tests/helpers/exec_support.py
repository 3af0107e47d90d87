"""`record --exec CMD` as a real ``p2w-rt`` process: the Python example agent, the grocery task the scripted model
drives it through, and the upstream key that must be stored nowhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.paths import REPO

P2W_RT = str(Path(sys.executable).with_name("p2w-rt"))
PYTHON_AGENT = f"{sys.executable} examples/exec_agent.py"
TASK = "Lena_Fischer_A2"
PENNE = "Meadow & Co Organic Gluten-Free Brown Rice Penne"
SEARCH = "http://basket.p2w.test/search?q=gluten-free+organic+penne"
ANSWER = f"Added two boxes of {PENNE} to the cart."
KEY = "sk-upstream-ECHOED-9c1e4a7b2d"


def p2w_rt(db: Path, *args: str, timeout: float = 600, tmp: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``p2w-rt --db DB ARGS``; with ``tmp`` as its TMPDIR when given."""
    log = db.with_suffix(".jsonl")
    return subprocess.run(
        [P2W_RT, "--db", str(db), "--log-file", str(log), *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=timeout,
        env=None if tmp is None else {**os.environ, "TMPDIR": str(tmp)},
    )


def record_exec(
    db: Path, command: str, base_url: str, label: str, *more: str, tmp: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return p2w_rt(
        db, "record", "--exec", command, "--base-url", base_url, "--api-key", KEY, "--model", "scripted-model",
        "--label", label, *more, tmp=tmp,
    )  # fmt: skip


def running(pid: int) -> bool:
    """Running, not a zombie waiting for its (dead) parent's reaper."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"

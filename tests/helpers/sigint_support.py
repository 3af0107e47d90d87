"""Not collected by the suite: `test_suite_signals.py` runs it in a pytest started with SIGINT ignored."""

from __future__ import annotations

import subprocess
import sys

CHILD = "import signal, sys; sys.exit(0 if signal.getsignal(signal.SIGINT) is signal.default_int_handler else 3)"


def test_a_process_this_suite_starts_handles_ctrl_c() -> None:
    assert subprocess.run([sys.executable, "-c", CHILD], timeout=60).returncode == 0

"""A command run with its stderr a terminal, as a person at a shell sees it (progress bars, notices)."""

from __future__ import annotations

import os
import pty
import select
import subprocess
from collections.abc import Mapping, Sequence


def run_on_terminal(command: Sequence[str], env: Mapping[str, str], timeout: float = 120) -> tuple[int, bytes, str]:
    """(exit code, what the command wrote to the terminal, its stdout): stderr a pty, stdout a pipe. The terminal is
    drained while the command runs, so a progress bar that redraws many times never fills it and blocks the child."""
    controller, terminal = pty.openpty()
    child = subprocess.Popen(command, stderr=terminal, stdout=subprocess.PIPE, text=True, env=env)
    os.close(terminal)  # the child holds the terminal now
    shown = b""
    try:
        while select.select([controller], [], [], timeout)[0]:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(controller)
    stdout, _ = child.communicate(timeout=timeout)
    return child.returncode, shown, stdout

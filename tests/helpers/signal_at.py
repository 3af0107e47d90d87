"""``p2w-rt`` run in a process that signals itself at the N-th file operation on a folder: a kill or a stop at an
exact point of a command, its own code running unchanged.

The operations are Python's audit events (``os.rename`` for renames and replaces, ``os.remove``, ``os.rmdir``,
``os.mkdir``, and ``ctypes.call_function``, which carries the paths a system call is given) whose arguments name a
path under the folder. Run as a script, this file installs the hook and then runs the command in its own process.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

EVENTS = ("os.rename", "os.remove", "os.rmdir", "os.mkdir", "ctypes.call_function")


def signal_at(folder: Path, nth: int, name: str, args: list[str]) -> list[str]:
    """The command line of ``p2w-rt ARGS`` sent signal ``name`` (``SIGKILL``) at its ``nth`` operation in ``folder``."""
    return [sys.executable, __file__, str(folder), str(nth), name, *args]


def _install(folder: str, nth: int, sig: signal.Signals) -> None:
    seen = 0

    def hook(event: str, args: tuple[object, ...]) -> None:
        nonlocal seen
        if event in EVENTS and folder in repr(args):  # a path as str, Path or bytes: its repr holds the folder
            seen += 1
            if seen == nth:
                os.kill(os.getpid(), sig)

    sys.addaudithook(hook)


if __name__ == "__main__":
    _install(sys.argv[1], int(sys.argv[2]), signal.Signals[sys.argv[3]])
    from p2w_rt.cli import main

    main(sys.argv[4:], prog_name="p2w-rt")

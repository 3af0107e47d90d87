"""An outside agent's first process: it runs the agent's command and kills the agent's whole process group when
p2w-rt dies, even by ``kill -9``.

The kernel tells only a direct child that its parent died (``PR_SET_PDEATHSIG``); the agent's own children (a
wrapper script's ``sleep``, a Node agent's driver) are told nothing and would run on. This process is that direct
child: it asks for SIGTERM when p2w-rt goes and answers it by killing its process group, which the agent and its
children share (p2w-rt starts it in a session of its own). Run by path as ``python -I -S _group_watch.py PID CMD...``
(``PID``: p2w-rt's), it imports nothing of p2w-rt, so it starts in tens of milliseconds (docs/design/exec.md).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys

PR_SET_PDEATHSIG = 1


def _kill_group(*_: object) -> None:
    os.killpg(0, signal.SIGKILL)


def main(recorder: int, command: list[str]) -> int:
    """The agent's exit status, or its death by the signal that killed it, for p2w-rt to read as the agent's own."""
    signal.signal(signal.SIGTERM, _kill_group)
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != recorder:  # p2w-rt died before the line above: no signal will come
        _kill_group()
    try:
        agent = subprocess.Popen(command)
    except OSError as exc:
        sys.stderr.write(f"cannot start {command[0]!r}: {exc.strerror or exc}\n")
        return 127
    status = agent.wait()
    if status < 0:
        if -status != signal.SIGKILL:  # SIGKILL has no handler to reset: signal.signal refuses it
            signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    return status if status >= 0 else 128 - status


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), sys.argv[2:]))

"""Stops a throwaway PostgreSQL cluster once the process that started it is gone, however it ended.

``PostgresServer`` starts this script (by path, so it imports nothing of the project) in a session of its own,
holding the read end of a pipe whose write end only the starting process has. The read returns at EOF: when that
process closes it after its own ``stop``, or when the kernel closes it because the process exited, was killed
(SIGKILL, ``os._exit``) or crashed. Then a still running cluster is stopped and its folder removed.

    python _pg_watchdog.py FD ROOT STOP_COMMAND...
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys


def main(argv: list[str]) -> None:
    fd, root, *stop = argv
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the starting process's to handle, then ours
    with os.fdopen(int(fd), "rb") as pipe:
        pipe.read()
    if os.path.exists(os.path.join(root, "data", "postmaster.pid")):
        subprocess.run(stop, capture_output=True, check=False)
    shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])

"""Turns between the processes of a suite run with ``pytest -n 2``: a test that changes what every test reads (the
package's own sample folders, renamed away by ``test_portable_run.py``) runs alone.

Each test holds a shared lock on one file from its setup to its teardown (higher-scoped fixtures set up or torn down
around it included); a test marked ``alone`` holds it exclusively, so it starts once the other processes' tests have
ended and they start their next one once it has. Run in one process, nothing is locked.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager

INPUT_KEY = "p2w_suite_lock"
"""The lock file's path, as the controlling process hands it to each worker (``workerinput``)."""


@contextmanager
def turn(path: str | None, *, alone: bool) -> Iterator[None]:
    """Hold the suite's lock, exclusively when ``alone``; nothing when the suite runs in one process (no path)."""
    if path is None:
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if alone else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # releases the lock

"""How a recording process ends on Ctrl-C: once its own cleanup is done, at once, without waiting for threads
nobody can cancel or for the interpreter's teardown."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any


class DaemonThreads(ThreadPoolExecutor):
    """The event loop's default executor for ``record``: each call on its own daemon thread, never joined.

    A model load or a memory bank's encoding cannot be cancelled, and ``asyncio.run`` joins the default executor
    before it returns, so Ctrl-C waited for them (minutes on a busy machine) after the episode had closed itself as
    aborted. Here the process exits once its own cleanup is done; a thread still working is dropped with it.
    """

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()

        def call() -> None:
            if not future.set_running_or_notify_cancel():
                return
            try:
                future.set_result(fn(*args, **kwargs))
            except BaseException as exc:
                future.set_exception(exc)

        threading.Thread(target=call, name="p2w-record", daemon=True).start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Nothing to join: every thread is a daemon."""


@contextlib.contextmanager
def exit_at_once_when_interrupted() -> Iterator[None]:
    """After Ctrl-C, once the run has cleaned up (episode closed as aborted, a worker's lease given back, browser
    and store closed), exit without the interpreter's teardown: it garbage-collects the whole heap, 4-5 s on a
    busy machine, which a stopped worker does not have (docs/design/postgres.md)."""
    try:
        yield
    except SystemExit as stop:
        if stop.code != 130:  # 130: interrupted (``fail_as_one_line``)
            raise
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)

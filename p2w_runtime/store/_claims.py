"""Claims: at most one process at a time does a piece of work on a database (an import under a label, a
judging pass over a run), so that the work is not done, or paid for, twice.

A claim is a row in the ``claims`` table, taken and released in short write transactions; whoever finds it
taken waits and tries again. A holder killed without releasing it is detected instead of waited on forever:
on the same host its process id is gone; from another host (no way to ask) the claim expires after
``STALE_AFTER_S``. See docs/design/concurrency.md.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Protocol

from p2w_rt.schemas import uuid7
from p2w_runtime.scratch import process_alive

STALE_AFTER_S = 6 * 3600.0
"""A claim held by a process on another host is taken over after this long (longer than any judging pass)."""
POLL_S = 0.2


@dataclass(frozen=True, slots=True)
class ClaimHolder:
    """A process holding claims: a fresh ``owner`` token per ``hold_claims``, its host and process id, and when it
    took the claim (what a holder on another host is judged stale by)."""

    owner: str
    host: str
    pid: int
    claimed_at: float

    def describe(self) -> str:
        return f"process {self.pid} on {self.host}"

    def is_stale(self, now: float) -> bool:
        """The holder died without releasing: its process is gone (same host) or the claim has expired."""
        if self.host == socket.gethostname():
            return not process_alive(self.pid)
        return now - self.claimed_at > STALE_AFTER_S


def this_process() -> ClaimHolder:
    return ClaimHolder(uuid7(), socket.gethostname(), os.getpid(), time.time())


class ClaimTable(Protocol):
    """What taking a claim needs of a store (every ``EventStore`` has it): the store's interface knows the
    ``ClaimHolder`` it is given, so claims know the store only through these two methods."""

    async def try_claim(self, key: str, me: ClaimHolder) -> ClaimHolder | None: ...

    async def release_claim(self, key: str, me: ClaimHolder) -> None: ...


@asynccontextmanager
async def hold_claims(
    store: ClaimTable, keys: Iterable[str], *, on_wait: Callable[[str, ClaimHolder], None] | None = None
) -> AsyncIterator[None]:
    """Take every claim in ``keys`` (waiting while another live process holds one), release them on exit.

    Keys are taken in sorted order, so two processes wanting overlapping sets cannot wait on each other.
    ``on_wait`` hears once per key that it is waited for, and on whom.
    """
    me = this_process()
    held: list[str] = []
    try:
        for key in sorted(set(keys)):
            told = False
            while (holder := await store.try_claim(key, replace(me, claimed_at=time.time()))) is not None:
                if on_wait is not None and not told:
                    on_wait(key, holder)
                    told = True
                await asyncio.sleep(POLL_S)
            held.append(key)
        yield
    finally:
        for key in reversed(held):
            await asyncio.shield(store.release_claim(key, me))

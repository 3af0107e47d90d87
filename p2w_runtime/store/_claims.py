"""Claims: at most one process at a time does a piece of work on a database (an import under a label, a
judging pass over a run), so that the work is not done, or paid for, twice.

A claim is a row in the ``claims`` table, taken and released in short write transactions; whoever finds it
taken waits and tries again. A holder killed without releasing it is detected instead of waited on forever:
on the same host its process id is gone; from another host (no way to ask) its holder renews it every ``RENEW_S``
while it holds it, and it expires once it has gone ``STALE_AFTER_S`` without a renewal, however long it was held.
See docs/design/concurrency.md.
"""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from typing import Protocol

from p2w_rt.schemas import uuid7
from p2w_runtime.errors import UserError
from p2w_runtime.logs import get_logger
from p2w_runtime.scratch import process_alive

log = get_logger(__name__)

RENEW_S = float(os.environ.get("P2W_CLAIM_RENEW_S", "60"))
"""How often a holder renews its claims. Env ``P2W_CLAIM_RENEW_S`` (tests shorten it)."""
STALE_AFTER_S = 10 * RENEW_S
"""A claim held on another host and not renewed for this long is taken over: ten renewals missed, so a holder
slowed by a loaded database is not taken for dead, while a killed one blocks the others for minutes, not hours.
The hosts' clocks must agree to well within it, as for work leases."""
POLL_S = 0.2


@dataclass(frozen=True, slots=True)
class ClaimHolder:
    """A process holding claims: a fresh ``owner`` token per ``hold_claims``, its host and process id, and when it
    took or last renewed the claim (what a holder on another host is judged stale by)."""

    owner: str
    host: str
    pid: int
    claimed_at: float

    def describe(self) -> str:
        return f"process {self.pid} on {self.host}"

    def is_stale(self, now: float) -> bool:
        """The holder died without releasing: its process is gone (same host) or it stopped renewing the claim."""
        if self.host == socket.gethostname():
            return not process_alive(self.pid)
        return now - self.claimed_at > STALE_AFTER_S


def this_process() -> ClaimHolder:
    return ClaimHolder(uuid7(), socket.gethostname(), os.getpid(), time.time())


class ClaimTable(Protocol):
    """What holding a claim needs of a store (every ``EventStore`` has it): the store's interface knows the
    ``ClaimHolder`` it is given, so claims know the store only through these three methods."""

    async def try_claim(self, key: str, me: ClaimHolder) -> ClaimHolder | None: ...

    async def renew_claim(self, key: str, me: ClaimHolder) -> bool: ...

    async def release_claim(self, key: str, me: ClaimHolder) -> None: ...


@asynccontextmanager
async def renewing_claims(store: ClaimTable, keys: Sequence[str], me: ClaimHolder) -> AsyncIterator[None]:
    """Renew ``me``'s claims ``keys`` every ``RENEW_S`` while the block runs, so that a holder on another host is
    not taken for dead however long it holds them. A claim found taken over (its renewals failed for
    ``STALE_AFTER_S``) is not this holder's any more, and a warning naming it says so."""

    async def keep() -> None:
        lost: set[str] = set()
        while True:
            await asyncio.sleep(RENEW_S)
            for key in [key for key in keys if key not in lost]:  # read each time: ``hold_claims`` adds to them
                try:
                    renewed = await store.renew_claim(key, me)
                except UserError as exc:  # the store unreachable (StoreError): tried again at the next period
                    log.info("claim not renewed", key=key, error=str(exc))
                    continue
                if not renewed:
                    lost.add(key)
                    log.warning("claim taken over by another process: this one's work is no longer its own", key=key)

    renewal = asyncio.ensure_future(keep())
    try:
        yield
    finally:
        renewal.cancel()
        await asyncio.wait([renewal])  # no renewal outlives the block (the claims are released next)


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
        async with renewing_claims(store, held, me):  # from the first taken, while the next ones are waited for
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

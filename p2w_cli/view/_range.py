"""One page of a long episode read without the rest of it: the seq range of a span of steps is found by the domain's
step search (``first_seq_of_step``), then read with one ranged read (``read_stream(after_seq=)``).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import cast

from p2w_rt.schemas import Event, StoredEvent
from p2w_runtime.store import EventStore


async def read_range(store: EventStore, stream: str, lo: int, hi: int) -> list[Event]:
    """The events of seq ``lo`` up to, not including, ``hi``; the read stops there."""
    events: list[Event] = []
    if lo >= hi:
        return events
    reading = cast(AsyncGenerator[StoredEvent, None], store.read_stream(stream, after_seq=lo - 1))
    async with aclosing(reading):  # stopping early cancels the page fetched ahead
        async for stored in reading:
            if stored.seq >= hi:
                break
            events.append(stored.decode())
    return events

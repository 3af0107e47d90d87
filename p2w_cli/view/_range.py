"""One page of a long episode read without the rest of it: the seq range of a span of steps is found by a binary
search over single-row reads (``read_event``), then read with one ranged read (``read_stream(after_seq=)``).

An episode's events are written step by step (the agent, the importers and the recording API all do), so "the
event's step is at least N" is false, then true along the stream; events without a step (an imported memory access)
are passed over to the next one that has one. The episode's tail (page captures, final state, end) has no step and
comes last (the grammar). Docs: docs/design/view.md, "Long episodes".
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import aclosing
from dataclasses import dataclass
from typing import cast

from p2w_rt.schemas import Event, StoredEvent
from p2w_runtime.store import EventStore, StreamHead

TAIL_TYPES = frozenset({"page.capture", "final_state", "episode.finished"})
"""The events after the last step (the grammar's ``page.capture* [final_state] episode.finished``)."""
PROBE_AHEAD = 64
"""Events without a step a probe passes over before it takes the span as ended (imported memory accesses come in
runs of a few)."""


@dataclass(frozen=True, slots=True)
class EpisodeShape:
    """What paging an episode needs, read from its two ends only."""

    head: StreamHead
    started: Event
    tail_from: int
    """The seq of the tail's first event (``head.last_seq + 1`` while the episode is still being recorded)."""
    last_step: int
    """The step of the last event before the tail (0 when no event has one)."""


def _step(event: StoredEvent) -> int | None:
    step = event.payload.get("step")
    return step if isinstance(step, int) and not isinstance(step, bool) else None


async def episode_shape(store: EventStore, stream: str) -> EpisodeShape | None:
    """None when ``stream`` is not an episode (empty, or not opened by ``episode.started``)."""
    head = await store.stream_head(stream)
    first = await store.read_event(stream, 1) if head is not None else None
    if head is None or first is None or first.type != "episode.started":
        return None
    seq = head.last_seq
    while seq > 1:
        event = await store.read_event(stream, seq)
        if event is None or event.type not in TAIL_TYPES:
            break
        seq -= 1
    tail_from, last_step = seq + 1, 0
    for back in range(seq, max(1, seq - PROBE_AHEAD), -1):
        event = await store.read_event(stream, back)
        if event is not None and (step := _step(event)) is not None:
            last_step = step
            break
    return EpisodeShape(head, first.decode(), tail_from, last_step)


async def _step_from(store: EventStore, stream: str, seq: int, end: int) -> int | None:
    """The step of the first event at or after ``seq`` (before ``end``) that has one; None when none does nearby."""
    for at in range(seq, min(end, seq + PROBE_AHEAD)):
        event = await store.read_event(stream, at)
        if event is not None and (step := _step(event)) is not None:
            return step
    return None


async def first_seq_of_step(store: EventStore, stream: str, step: int, lo: int, hi: int) -> int:
    """The first seq in ``[lo, hi)`` whose event is of step ``step`` or later (``hi`` when none): about
    log2(hi - lo) single-row reads."""
    while lo < hi:
        mid = (lo + hi) // 2
        found = await _step_from(store, stream, mid, hi)
        if found is None or found >= step:
            hi = mid
        else:
            lo = mid + 1
    return lo


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

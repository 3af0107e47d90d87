"""Where a step begins in an episode stream, found without reading the episode: a binary search over single-row
reads (``read_event``), so that a page of a 200,000-step episode (``show --from-step``, the viewer's step pages, its
prompt diff) costs about log2(events) reads.

An episode's events are written step by step (the agent, the importers and the recording API all do), so "the
event's step is at least N" is false, then true along the stream. Events without a step (an imported memory access,
a history query before the step's action) belong with the next event that has one: they are what that step did
first. The tail (``TAIL_TYPES``) has no step and comes last (the grammar). Docs: docs/design/view.md, "Long
episodes".
"""

from __future__ import annotations

from dataclasses import dataclass

from p2w_rt.schemas import Event, StoredEvent
from p2w_runtime.domain import TAIL_TYPES
from p2w_runtime.store import EventStore, StreamHead

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

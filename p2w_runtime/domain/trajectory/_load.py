"""Reading trajectories out of a store, one episode at a time; a run is read as its counted episodes."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Sequence

from p2w_rt.schemas import StoredEvent
from p2w_runtime.collector import collector_paused
from p2w_runtime.domain import TAIL_TYPES, episodes_of
from p2w_runtime.domain.trajectory._model import Trajectory
from p2w_runtime.domain.trajectory._project import ProjectionError, _Fold
from p2w_runtime.domain.trajectory._records import EpisodeRecord
from p2w_runtime.domain.trajectory._steps import first_seq_of_step
from p2w_runtime.store import EventStore

LOAD_CHUNK = 25
"""Episodes read together by ``load_trajectories``: a few queries for the lot, at most this many in memory."""


async def load_trajectory(store: EventStore, stream: str, *, detailed: bool = False) -> Trajectory:
    """The trajectory of one episode stream (``{run_id}/{episode_id}``); ``detailed`` also keeps when each event was
    recorded and each LLM call's request and latency (``Trajectory.recorded_at``, ``call_details``)."""
    fold = _Fold(detailed=detailed)
    async for stored in store.read_stream(stream):
        fold.apply_stored(stored)
    if fold.trajectory is None:
        raise ProjectionError(f"no episode stream {stream!r}")
    return fold.trajectory


async def load_trajectories(
    store: EventStore, run_id: str, *, streams: Sequence[str] | None = None
) -> AsyncGenerator[Trajectory, None]:
    """The run's counted episodes (or ``streams``), in that order, read ``LOAD_CHUNK`` episodes at a time.

    A chunk's events come from a few queries rather than one per episode, as ``ChainedEvent``s (only the
    columns the fold needs) folded into records decoded from their text, never as ``Event`` models; the cyclic
    collector is paused while a chunk is folded, and restored before its trajectories are yielded
    (docs/design/projection.md).
    """
    if streams is None:
        streams = [ref.stream for ref in await episodes_of(store, run_id)]
    for i in range(0, len(streams), LOAD_CHUNK):
        chunk = streams[i : i + LOAD_CHUNK]
        folds: dict[str, _Fold] = {}
        with collector_paused():
            async for stored in store.read_chained(chunk):
                fold = folds.get(stored.stream)
                if fold is None:
                    fold = folds[stored.stream] = _Fold()
                fold.apply_stored(stored)
        for stream in chunk:
            trajectory = folds[stream].trajectory if stream in folds else None
            if trajectory is None:
                raise ProjectionError(f"no episode stream {stream!r}")
            yield trajectory


EPISODE_CHUNK = 1000
"""Events of one episode folded, yielded and dropped together by ``EpisodeChunks``: what its memory is bounded by."""


class EpisodeChunks:
    """One episode read a chunk of events at a time, each event as its trajectory record: what a reader of a very
    long episode (``show RUN TASK`` on 200,000 steps) holds is a chunk, never the episode.

    ``header`` is the trajectory of ``episode.started`` alone (task, level, query); ``records(after_seq)``
    yields ``(seq, record)`` from there on, reading ``EPISODE_CHUNK`` events per page of the store and checking
    each event's chain link, from the stored event before the first one read. A record placed by the fold's
    cross-event state (a retrieval's history access) is the same record; the access itself is the chunk's.
    """

    def __init__(self, store: EventStore, first: StoredEvent, header: Trajectory, last_seq: int) -> None:
        self.store = store
        self.stream = first.stream
        self._first = first
        self.header = header
        self.last_seq = last_seq
        """The stream's last seq when it was opened (a running episode may have more by now)."""

    @classmethod
    async def open(cls, store: EventStore, stream: str) -> EpisodeChunks:
        """``ProjectionError`` when ``stream`` holds no episode."""
        first, head = await store.read_event(stream, 1), await store.stream_head(stream)
        if first is None or head is None:
            raise ProjectionError(f"no episode stream {stream!r}")
        fold = _Fold()
        fold.apply_stored(first)
        assert fold.trajectory is not None
        return cls(store, first, fold.trajectory, head.last_seq)

    async def records(
        self, after_seq: int = 1, until_seq: int | None = None
    ) -> AsyncIterator[tuple[int, EpisodeRecord]]:
        """The records of the events ``after_seq < seq <= until_seq`` (to the stream's end without it), in order."""
        after_seq = max(after_seq, 1)
        before = await self.store.read_event(self.stream, after_seq)
        if before is None:
            return
        fold = _Fold()
        fold.apply_stored(self._first)
        t = fold.trajectory
        assert t is not None
        t.hash = before.hash  # the chain continues from the event before the window
        async for stored in self.store.read_stream(self.stream, after_seq=after_seq):
            if until_seq is not None and stored.seq > until_seq:
                break
            fold.apply_stored(stored)
            yield stored.seq, t.records[-1]
            if len(t.records) >= EPISODE_CHUNK:
                fold.forget()

    async def seq_of_step(self, step: int) -> int:
        """The seq of the first event of step ``step`` or later (``first_seq_of_step``: a few rows read, wherever
        the step lies); past the last step, the last seq + 1, so that the tail goes with the last step's window."""
        seq = await first_seq_of_step(self.store, self.stream, step, 2, self.last_seq + 1)
        at = await self.store.read_event(self.stream, seq) if seq <= self.last_seq else None
        return self.last_seq + 1 if at is None or at.type in TAIL_TYPES else seq

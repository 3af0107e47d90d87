"""Reading trajectories out of a store, one episode at a time; a run is read as its counted episodes."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence

from p2w_runtime.collector import collector_paused
from p2w_runtime.domain import episodes_of
from p2w_runtime.domain.trajectory._model import Trajectory
from p2w_runtime.domain.trajectory._project import ProjectionError, _Fold
from p2w_runtime.store import EventStore

LOAD_CHUNK = 25
"""Episodes read together by ``load_trajectories``: a few queries for the lot, at most this many in memory."""


async def load_trajectory(store: EventStore, stream: str) -> Trajectory:
    """The trajectory of one episode stream (``{run_id}/{episode_id}``)."""
    fold = _Fold()
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

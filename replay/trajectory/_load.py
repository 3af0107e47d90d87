"""Reading trajectories out of a store, one episode at a time; a run is read as its counted episodes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from p2w_runtime.episode import episodes_of
from p2w_runtime.store import Recorder
from replay.trajectory._model import Trajectory
from replay.trajectory._project import ProjectionError, _Fold


async def load_trajectory(store: Recorder, stream: str) -> Trajectory:
    """The trajectory of one episode stream (``{run_id}/{episode_id}``)."""
    fold = _Fold()
    async for stored in store.read_stream(stream):
        fold.apply(stored.decode())
    if fold.trajectory is None:
        raise ProjectionError(f"no episode stream {stream!r}")
    return fold.trajectory


async def load_trajectories(
    store: Recorder, run_id: str, *, streams: Sequence[str] | None = None
) -> AsyncIterator[Trajectory]:
    """The run's counted episodes (or ``streams``), streamed: one episode's events in memory at a time."""
    if streams is None:
        streams = [ref.stream for ref in await episodes_of(store, run_id)]
    for stream in streams:
        yield await load_trajectory(store, stream)

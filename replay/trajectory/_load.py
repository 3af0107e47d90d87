"""Reading trajectories out of a store, one episode at a time."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from p2w_runtime.store import Recorder, episode_streams
from replay.trajectory._model import Trajectory
from replay.trajectory._project import ProjectionError, _Fold
from schemas import EpisodeStarted


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
    """Every episode of a run in the order they started, streamed: one episode's events in memory at a time."""
    for stream in streams if streams is not None else await episode_streams(store, run_id):
        yield await load_trajectory(store, stream)


@dataclass(frozen=True, slots=True)
class EpisodeRef:
    """An episode without its events: enough to check a judgment cache or label a metric row."""

    stream: str
    task_id: str
    level: int | None
    scheme: str | None
    hash: str
    """The hash of the episode's last event: the trajectory hash its judgments are keyed by."""


async def list_episodes(store: Recorder, run_id: str) -> list[EpisodeRef]:
    """Every episode of a run in start order, from ``episode.started`` events and stream heads only."""
    heads = {head.stream: head.last_hash for head in await store.list_streams(prefix=f"{run_id}/")}
    refs: list[EpisodeRef] = []
    async for stored in store.read_all(stream_prefix=f"{run_id}/", types=["episode.started"]):
        started = stored.decode().payload
        assert isinstance(started, EpisodeStarted)
        refs.append(EpisodeRef(stored.stream, started.task_id, started.level, started.scheme, heads[stored.stream]))
    return refs

"""Sealing an episode when it finishes: an ``episode.sealed`` in its run's stream commits to the finished stream.

Without it, nothing covered an episode until ``run.finished`` sealed the whole run, so deleting the newest events
of a run in flight (or of one whose recorder died) passed ``verify``. Now only the episodes still being recorded are
unsealed (docs/design/integrity.md). The seal is built from what the store returned for the episode's last append
(its seq and hash, assigned under the store's write lock), so it costs no read, and it is a second append: the
run's stream is shared by every episode of the run (several workers append to it at once), and the store gives
each append the next seq of it under that lock. Once sealed, the episode is compacted (``EventStore.compact``): a
third write, which leaves every read as it was and the store as small as an imported run.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Protocol

from p2w_rt.schemas import EpisodeSealed, NewEvent, StoredEvent, StreamSeal
from p2w_runtime.domain._streams import run_of


class Appender(Protocol):
    """What the writers need of a store (``EventStore.append``): the stored events back, for the seal."""

    async def append(
        self, events: Sequence[NewEvent], blobs: Mapping[str, bytes] | None = None
    ) -> Sequence[StoredEvent]: ...

    def append_now(self, events: Sequence[NewEvent]) -> Sequence[StoredEvent] | None:
        """``append`` at once when the store can do it without waiting, else None (``EventLog.append_now``)."""

    async def compact(self, streams: Sequence[str]) -> int: ...


def episode_seals(stored: Sequence[StoredEvent]) -> list[NewEvent]:
    """One ``episode.sealed`` per run for the episode streams that ``stored`` (one append's result) finished.

    A stream is finished when its last event in the batch is ``episode.finished``; it is sealed as that event
    left it, which is what it holds until someone changes it.
    """
    last: dict[str, StoredEvent] = {}
    for event in stored:
        last[event.stream] = event
    by_run: dict[str, list[StreamSeal]] = {}
    for stream, event in last.items():
        if event.type == "episode.finished":
            seal = StreamSeal(stream=stream, events=event.seq, head_hash=event.hash)
            by_run.setdefault(run_of(stream), []).append(seal)
    return [NewEvent(stream=run, payload=EpisodeSealed(seals=seals)) for run, seals in by_run.items()]


async def append_sealed(
    store: Appender, events: Sequence[NewEvent], blobs: Mapping[str, bytes] | None = None
) -> Sequence[StoredEvent]:
    """Append an episode's events (or several episodes' ends), then seal and compact each episode they finished."""
    stored = await store.append(events, blobs)
    await seal_finished(store, stored)
    return stored


def compacting() -> bool:
    """Whether recordings compact each episode once sealed: not with ``P2W_COMPACT=off``, which keeps a recorded
    episode's events one row each, for SQL over the ``events`` table (``p2w-rt compact`` compacts them later)."""
    return os.environ.get("P2W_COMPACT", "on").strip().lower() not in ("off", "0", "no", "false")


async def seal_finished(store: Appender, stored: Sequence[StoredEvent]) -> None:
    """Seal, then compact, each episode stream that ``stored`` (one append's result) finished."""
    if seals := episode_seals(stored):
        await store.append(seals)
        if compacting():
            await store.compact([event.stream for event in stored if event.type == "episode.finished"])

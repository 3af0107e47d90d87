"""Where the log ended at a writer's last commit: ``max(position)`` and its streams' heads, kept between appends.

Every append takes the write lock, then needs the log's last position and the heads of the streams it appends
to. A writer appending alone would read back what it wrote itself. So the store keeps the end it committed
(``LogEnd``) and uses it in two ways (docs/design/postgres.md, third round):

- Always: ``max(position)`` is read under the lock; when it is where this writer left it, nobody appended since
  (events are never deleted, and every append moves the position), so the kept heads hold and are not read again.
- Optimistic (``append`` on a backend that reports collisions as ``LogMoved``, after an append found the end
  unchanged): not even ``max(position)`` is read. If another writer appended meanwhile, the first row's position
  is taken and the primary key refuses it (or a stream's ``(stream, seq)``): nothing is written, and the append
  is done again from the end read afresh. Gap-free positions and chains rest on the same constraints as before.
  A small batch with nothing else to read or write (no blobs, no label) then goes in as one statement that takes
  the lock itself, without a transaction of its own (PostgreSQL's ``_insert_alone``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from p2w_rt.schemas import GENESIS_HASH, StoredEvent
from p2w_runtime.store._event_store import IntegrityError, StreamHead
from p2w_runtime.store._seal import STREAM_END_TYPES

S = TypeVar("S")
"""The backend's session: ``Heads`` only hands it back to the function that reads a head."""

MAX_KEPT_HEADS = 1024
"""A writer that touched more streams keeps only the position (heads are then read when needed)."""


class LogMoved(IntegrityError):
    """An append's rows collided with rows committed after this writer last saw the end of the log."""


class StreamEnded(IntegrityError):
    """An append to a stream whose last event ends it (``episode.finished``): nothing may follow (a writer that lost
    its episode to another, which closed it meanwhile)."""


@dataclass(frozen=True, slots=True)
class LogEnd:
    """The end of the log as a writer's last commit left it. ``heads`` is never changed once built."""

    position: int
    heads: Mapping[str, tuple[int, str]]


class Heads(Generic[S]):
    """Each stream's (last seq, last hash) during one append: known from the kept end, or read once (with
    ``read_head``, in the append's session), then advanced."""

    def __init__(
        self, read_head: Callable[[S, str], Awaitable[StreamHead | None]], known: Mapping[str, tuple[int, str]]
    ) -> None:
        self._read_head = read_head
        self._heads = dict(known)
        self._ended: dict[str, tuple[str, int]] = {}

    async def get(self, session: S, stream: str) -> tuple[int, str]:
        if stream not in self._heads:
            head = await self._read_head(session, stream)
            self._heads[stream] = (head.last_seq, head.last_hash) if head else (0, GENESIS_HASH)
            if head is not None and head.last_type in STREAM_END_TYPES:
                self._ended[stream] = (head.last_type, head.last_seq)
        return self._heads[stream]

    def refuse_ended(self, streams: Iterable[str]) -> None:
        """``StreamEnded`` when a stream read here ends with ``episode.finished``: new events may not follow it. A
        head kept from this writer's own commit is not checked (its episode writer never appends after an end);
        an import (``append_stored``) does not ask, since re-importing a finished episode adds nothing to it."""
        for stream in streams:
            if (end := self._ended.get(stream)) is not None:
                raise StreamEnded(
                    f"stream {stream!r} ended with {end[0]} (seq {end[1]}): nothing may be appended after the end "
                    "of an episode"
                )

    async def load(self, session: S, streams: Iterable[str]) -> None:
        """Read the heads of ``streams`` now, so that sealing can run without awaiting (``known``)."""
        for stream in streams:
            await self.get(session, stream)

    def known(self, stream: str) -> tuple[int, str]:
        return self._heads[stream]

    def advance(self, event: StoredEvent) -> None:
        self._heads[event.stream] = (event.seq, event.hash)

    def kept(self) -> Mapping[str, tuple[int, str]]:
        """What to keep after the commit (the dict is not used by this object again)."""
        return self._heads if len(self._heads) <= MAX_KEPT_HEADS else {}

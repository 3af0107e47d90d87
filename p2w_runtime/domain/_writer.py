"""``EpisodeWriter``: the one way an episode's events are written, by the agent, the importers and the builders.

Every event passes the episode grammar (``_grammar``) when it is added, so an out-of-order event or a
wrong cause is refused before it is staged, let alone stored. What was added since the last ``take`` or
``flush`` is staged together with its blobs: a builder hands them to ``append_sealed`` (or seals them
itself), the agent flushes once per step and the write runs behind the next step. A flush that stores
``episode.finished`` also seals the episode in its run's stream (``_seal``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from p2w_rt.schemas import AnyPayload, LlmCall, NewEvent, blob_hash
from p2w_runtime.domain._grammar import EpisodeGrammar
from p2w_runtime.domain._seal import Appender, append_sealed, episode_seals, seal_finished
from p2w_runtime.domain._streams import episode_stream


class EpisodeWriter:
    """Stages one episode stream's events in grammar order; ``flush`` stores them, behind the caller if need be.

    A write that has to wait (for the database's lock, blob compression, the network) runs while the agent
    observes and plans the next step, and ``settle`` waits for it: the episode settles before the browser acts
    again and before it ends, so a step is stored before anything it led to happens on a website
    (docs/design/recording.md). One write is in flight at a time, so the stream keeps its order. Event ids are
    assigned when an event is added, so a later event of the same step can name an earlier one as its cause
    before either is stored.
    """

    def __init__(
        self, stream: str, store: Appender | None = None, *, opened: bool = False, sources: frozenset[str] = frozenset()
    ) -> None:
        self.stream = stream
        self.store = store
        self.grammar = EpisodeGrammar(stream, opened=opened, sources=sources)
        self.events: list[NewEvent] = []
        """Staged since the last ``take`` / ``flush``, in order."""
        self.blobs: dict[str, bytes] = {}
        self._writing: asyncio.Task[object] | None = None
        self._failed: Exception | None = None
        """A write done at once in ``flush`` that failed: raised by the next ``flush`` or ``settle``."""

    @classmethod
    def of(cls, run_id: str, episode_id: str, store: Appender | None = None) -> EpisodeWriter:
        return cls(episode_stream(run_id, episode_id), store)

    @classmethod
    def copying(cls, run_id: str, episode_id: str, sources: frozenset[str]) -> EpisodeWriter:
        """A writer for an episode re-executed from another whose events (ids ``sources``) it may name as causes."""
        return cls(episode_stream(run_id, episode_id), sources=sources)

    @classmethod
    def closing(cls, stream: str) -> EpisodeWriter:
        """A writer for the end of a stream written earlier whose recorder died (no ``episode.finished``)."""
        return cls(stream, opened=True)

    def add(self, payload: AnyPayload, causation_id: str | None = None) -> NewEvent:
        """Stage one event; ``EpisodeGrammarError`` (nothing staged) when the grammar refuses it here."""
        event = NewEvent(stream=self.stream, payload=payload, causation_id=causation_id)
        self.grammar.admit(event)
        self.events.append(event)
        return event

    def extend(self, events: Iterable[NewEvent]) -> None:
        """Stage events built elsewhere (e.g. a retrieval pair), keeping their ids and causation."""
        for event in events:
            self.grammar.admit(event)
            self.events.append(event)

    def blob(self, data: bytes) -> str:
        """Stage a blob and return its content address for a payload to reference."""
        sha = blob_hash(data)
        self.blobs[sha] = data
        return sha

    def take(self) -> tuple[list[NewEvent], dict[str, bytes]]:
        """What was staged (events, blobs), for one ``store.append``; the writer starts a new batch."""
        events, blobs = self.events, self.blobs
        self.events, self.blobs = [], {}
        return events, blobs

    async def record_llm_call(self, call: LlmCall) -> None:
        """The LLM client's sink: calls join the current step's batch."""
        self.add(call)

    async def flush(self) -> None:
        """Store what was staged, once the previous write is done; a failed write raises here.

        A write the store can do without waiting (``append_now``: an idle SQLite writer, no blobs) is done right
        here, sparing a task and a turn of the event loop per step; it would have run on this thread at the
        caller's next await anyway. Any other write runs behind the caller in a task. Either way its failure is
        raised by the next ``flush`` or ``settle``.
        """
        await self.settle()
        if not self.events and not self.blobs:
            return
        if self.store is None:
            raise RuntimeError(f"episode writer for {self.stream} has no store to flush to")
        events, blobs = self.take()
        try:
            stored = None if blobs else self.store.append_now(events)
        except Exception as exc:
            self._failed = exc
            return
        if stored is None:
            self._writing = asyncio.create_task(append_sealed(self.store, events, blobs))
        elif episode_seals(stored):
            self._writing = asyncio.create_task(seal_finished(self.store, stored))

    async def settle(self) -> None:
        """Wait until everything flushed is stored; a failed write raises here."""
        failed, self._failed = self._failed, None
        if failed is not None:
            raise failed
        writing, self._writing = self._writing, None
        if writing is not None:
            await writing

"""Per-step event batching: what an episode produced since the last flush goes in one transaction."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from p2w_runtime.store import Recorder
from schemas import AnyPayload, LlmCall, NewEvent, blob_hash


class EpisodeLog:
    """Buffers one step's events and blobs; ``flush`` hands them to the store as one transaction.

    The write runs while the agent observes and plans the next step, and ``settle`` waits for it: the
    episode settles before the browser acts again and before it ends, so a step is stored before anything
    it led to happens on a website (docs/design/recording.md). One write is in flight at a time, so the
    stream keeps its order. Event ids are assigned when an event is added, so a later event of the same
    step can name an earlier one as its cause before either is stored.
    """

    def __init__(self, store: Recorder, stream: str) -> None:
        self.store = store
        self.stream = stream
        self._events: list[NewEvent] = []
        self._blobs: dict[str, bytes] = {}
        self._writing: asyncio.Task[object] | None = None

    def add(self, payload: AnyPayload, causation_id: str | None = None) -> NewEvent:
        event = NewEvent(stream=self.stream, payload=payload, causation_id=causation_id)
        self._events.append(event)
        return event

    def extend(self, events: Iterable[NewEvent]) -> None:
        """Stage events built elsewhere (e.g. a retrieval pair), keeping their ids and causation."""
        for event in events:
            if event.stream != self.stream:
                raise ValueError(f"event for stream {event.stream} staged in {self.stream}")
            self._events.append(event)

    def blob(self, data: bytes) -> str:
        """Stage a blob and return its content address for a payload to reference."""
        sha = blob_hash(data)
        self._blobs[sha] = data
        return sha

    async def record_llm_call(self, call: LlmCall) -> None:
        """The LLM client's sink: calls join the current step's batch."""
        self.add(call)

    async def flush(self) -> None:
        """Start storing what was staged, once the previous write is done; a failed write raises here."""
        await self.settle()
        if not self._events and not self._blobs:
            return
        events, blobs = self._events, self._blobs
        self._events, self._blobs = [], {}
        self._writing = asyncio.create_task(self.store.append(events, blobs))

    async def settle(self) -> None:
        """Wait until everything flushed is stored; a failed write raises here."""
        writing, self._writing = self._writing, None
        if writing is not None:
            await writing

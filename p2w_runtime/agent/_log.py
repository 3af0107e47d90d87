"""Per-step event batching: what an episode produced since the last flush goes in one transaction."""

from __future__ import annotations

from collections.abc import Iterable

from p2w_runtime.store import Recorder
from schemas import AnyPayload, LlmCall, NewEvent, blob_hash


class EpisodeLog:
    """Buffers one step's events and blobs; ``flush`` appends them before the next step starts.

    Event ids are assigned when an event is added, so a later event of the same step can
    name an earlier one as its cause before either is stored.
    """

    def __init__(self, store: Recorder, stream: str) -> None:
        self.store = store
        self.stream = stream
        self._events: list[NewEvent] = []
        self._blobs: dict[str, bytes] = {}
        self.appended = 0

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
        if not self._events and not self._blobs:
            return
        events, blobs = self._events, self._blobs
        self._events, self._blobs = [], {}
        await self.store.append(events, blobs)
        self.appended += len(events)

"""One recorded episode read back for re-execution: what it saw, what it was answered, what it decided."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from p2w_runtime.data import Task
from p2w_runtime.store import EventStore, StoreError
from schemas import (
    Action,
    AnyPayload,
    EpisodeFinished,
    EpisodeStarted,
    Event,
    FinalState,
    HistoryQuery,
    HistoryRetrieval,
    LlmCall,
    Observation,
    PageCapture,
    TaskFile,
)


@dataclass(frozen=True, slots=True)
class Recorded:
    """One event of the source episode: its id (what a re-executed event's causation points to) and payload."""

    event_id: str
    payload: AnyPayload
    causation_id: str | None = None


@dataclass
class RecordedEpisode:
    stream: str
    started: EpisodeStarted
    events: list[Recorded]
    observations: dict[int, Observation] = field(default_factory=dict)
    actions: dict[int, Action] = field(default_factory=dict)
    attempts: dict[tuple[str, int], list[LlmCall]] = field(default_factory=dict)
    """Every attempt of a call by (fingerprint, ordinal): the answer a re-executed request gets."""
    answered: list[LlmCall] = field(default_factory=list)
    """The calls that got an answer, in order: what a changed prompt is diffed against."""
    retrievals: list[HistoryRetrieval] = field(default_factory=list)
    captures: list[PageCapture] = field(default_factory=list)
    final: FinalState | None = None
    finished: EpisodeFinished | None = None

    @property
    def episode_id(self) -> str:
        return self.started.episode_id

    def queries(self) -> list[HistoryQuery]:
        return [e.payload for e in self.events if isinstance(e.payload, HistoryQuery)]

    def task(self) -> Task:
        """The task as the episode started it (the recorded one, so a moved task folder changes nothing)."""
        s = self.started
        file = TaskFile(sites=[], task_id=s.task_id, start_url=s.start_url, intent=s.query)
        return Task(
            task_id=s.task_id,
            persona=s.persona,
            query_set=s.query_set,
            level=s.level if s.level is not None else 0,
            intent=s.query,
            start_url=s.start_url,
            file=file,
            ground_truth=s.ground_truth,
        )


async def load_episode(store: EventStore, stream: str) -> RecordedEpisode:
    """Read one episode stream; ``StoreError`` when it does not start with ``episode.started``."""
    events = [Recorded(e.event_id, e.payload, e.causation_id) async for e in _decoded(store, stream)]
    if not events or not isinstance(events[0].payload, EpisodeStarted):
        raise StoreError(f"stream {stream!r} is not an episode (no episode.started)")
    episode = RecordedEpisode(stream, events[0].payload, events)
    for event in events:
        payload = event.payload
        if isinstance(payload, Observation):
            episode.observations[payload.step] = payload
        elif isinstance(payload, Action):
            episode.actions[payload.step] = payload
        elif isinstance(payload, LlmCall):
            episode.attempts.setdefault((payload.fingerprint, payload.ordinal), []).append(payload)
            if payload.error is None and payload.response is not None:
                episode.answered.append(payload)
        elif isinstance(payload, HistoryRetrieval):
            episode.retrievals.append(payload)
        elif isinstance(payload, PageCapture):
            episode.captures.append(payload)
        elif isinstance(payload, FinalState):
            episode.final = payload
        elif isinstance(payload, EpisodeFinished):
            episode.finished = payload
    return episode


async def _decoded(store: EventStore, stream: str) -> AsyncIterator[Event]:
    async for stored in store.read_stream(stream):
        yield stored.decode()

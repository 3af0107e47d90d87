"""One recorded episode read back for re-execution: what it saw, what it was answered, what it decided.

Built on the episode's ``Trajectory`` (the one read model, ``p2w_runtime.domain.trajectory``), indexed the way
the seams ask: observations and actions by step, LLM attempts by (fingerprint, ordinal). The one thing it reads
beyond the projection is a recorded call's request, from the store, when a changed prompt is diffed against it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p2w_rt.schemas import LlmCall, ParsedAction, TaskFile
from p2w_runtime.data import Task
from p2w_runtime.domain.trajectory import (
    ActionCommand,
    ActionRecord,
    CaptureRecord,
    EpisodeRecord,
    FinalStateRecord,
    FinishedRecord,
    HistoryAccess,
    LlmCallRecord,
    ObservationRecord,
    RetrievalRecord,
    Trajectory,
    load_trajectory,
)
from p2w_runtime.store import EventStore, StoreError


@dataclass
class RecordedEpisode:
    trajectory: Trajectory
    store: EventStore
    """The store the episode was read from: its blobs, and the requests of its LLM calls."""
    observations: dict[int, ObservationRecord] = field(default_factory=dict)
    actions: dict[int, ActionRecord] = field(default_factory=dict)
    attempts: dict[tuple[str, int], list[LlmCallRecord]] = field(default_factory=dict)
    """Every attempt of a call by (fingerprint, ordinal): the answer a re-executed request gets."""
    answered: list[LlmCallRecord] = field(default_factory=list)
    """The calls that got an answer, in order: what a changed prompt is diffed against."""
    retrievals: list[RetrievalRecord] = field(default_factory=list)

    @classmethod
    def of(cls, trajectory: Trajectory, store: EventStore) -> RecordedEpisode:
        episode = cls(trajectory, store)
        for record in trajectory.records:
            if type(record) is ObservationRecord:
                episode.observations[record.step] = record
            elif type(record) is ActionRecord:
                episode.actions[record.step] = record
            elif type(record) is RetrievalRecord:
                episode.retrievals.append(record)
        for call in trajectory.calls:
            episode.attempts.setdefault((call.fingerprint, call.ordinal), []).append(call)
            if call.answered:
                episode.answered.append(call)
        return episode

    @property
    def stream(self) -> str:
        return self.trajectory.stream

    @property
    def episode_id(self) -> str:
        return self.trajectory.episode_id

    @property
    def start_url(self) -> str:
        return self.trajectory.start_url

    @property
    def events(self) -> list[EpisodeRecord]:
        """Every event after ``episode.started``, as its record, in order."""
        return self.trajectory.records

    @property
    def captures(self) -> list[CaptureRecord]:
        return self.trajectory.captures

    @property
    def final(self) -> FinalStateRecord | None:
        return self.trajectory.final_state

    @property
    def finished(self) -> FinishedRecord | None:
        return self.trajectory.end

    def queries(self) -> list[HistoryAccess]:
        """The recorded ``history.query`` events (an access opened by a retrieval alone is not one)."""
        return [access for access in self.trajectory.history if access.query_event_id is not None]

    def task(self) -> Task:
        """The task as the episode started it (the recorded one, so a moved task folder changes nothing)."""
        t = self.trajectory
        file = TaskFile(sites=[], task_id=t.task_id, start_url=t.start_url, intent=t.query)
        return Task(
            task_id=t.task_id,
            persona=t.persona,
            query_set=t.query_set,
            level=t.level if t.level is not None else 0,
            intent=t.query,
            start_url=t.start_url,
            file=file,
            ground_truth=t.ground_truth,
        )

    async def request(self, call: LlmCallRecord) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The messages and params of a recorded call: the trajectory keeps no prompt, so its one event is read."""
        payload = await self.call_event(call)
        return payload.messages, payload.params

    async def call_event(self, call: LlmCallRecord) -> LlmCall:
        """A recorded call's whole payload (its request, every choice of its answer), read from its one event."""
        seq = next(i for i, record in enumerate(self.trajectory.records, start=2) if record is call)
        stored = await self.store.read_event(self.stream, seq)
        payload = stored.decode_payload() if stored is not None else None
        if not isinstance(payload, LlmCall) or stored is None or stored.event_id != call.event_id:
            raise StoreError(f"stream {self.stream!r}: event seq {seq} is not the llm.call {call.event_id}")
        return payload


def parsed_action(command: ActionCommand) -> ParsedAction:
    """A recorded action's command as the agent's environment takes it."""
    return ParsedAction(name=command.name, args=list(command.args))


async def load_episode(store: EventStore, stream: str) -> RecordedEpisode:
    """Read one episode stream; ``ProjectionError`` (a ``StoreError``) when its events do not form an episode."""
    return RecordedEpisode.of(await load_trajectory(store, stream), store)

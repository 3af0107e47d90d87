"""Fold one episode's events into a ``Trajectory``: a pure function of the events, nothing else."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from p2w_runtime.episode import run_of
from replay.trajectory._model import (
    ActionRecord,
    CaptureRecord,
    FinalStateRecord,
    HistoryAccess,
    ObservationRecord,
    RationaleRecord,
    RetrievalRecord,
    Trajectory,
)
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
    Rationale,
)


class ProjectionError(ValueError):
    """The events do not form an episode (no ``episode.started`` first, or events of several streams)."""


class Envelope(Protocol):
    """What the fold reads of an event besides its payload: a decoded ``Event`` or a ``StoredEvent`` has it.

    Readers fold stored events with their decoded payload and never build an ``Event``: pydantic's
    ``model_construct`` cost more than the rest of projection (docs/design/projection.md).
    """

    @property
    def event_id(self) -> str: ...
    @property
    def stream(self) -> str: ...
    @property
    def seq(self) -> int: ...
    @property
    def type(self) -> str: ...
    @property
    def causation_id(self) -> str | None: ...
    @property
    def prev_hash(self) -> str: ...
    @property
    def hash(self) -> str: ...


class _Fold:
    """Applies events one at a time, so a reader can stream an episode without holding its raw events."""

    def __init__(self) -> None:
        self.trajectory: Trajectory | None = None
        self._by_event: dict[str, HistoryAccess] = {}

    def apply(self, event: Envelope, payload: AnyPayload) -> None:
        """Fold the next event of the stream; its ``payload`` decoded (``StoredEvent.decode_payload``)."""
        if self.trajectory is None:
            if not isinstance(payload, EpisodeStarted):
                raise ProjectionError(f"stream {event.stream}: first event is {event.type}, not episode.started")
            self.trajectory = _start(event, payload)
        elif event.stream != self.trajectory.stream:
            raise ProjectionError(f"event {event.event_id} belongs to {event.stream}, not {self.trajectory.stream}")
        elif event.prev_hash != self.trajectory.hash:
            raise ProjectionError(
                f"stream {event.stream}: event seq {event.seq} does not follow the one before it (its prev_hash "
                f"differs): events are missing or out of order; run p2w-rt verify"
            )
        else:
            self._apply(event, payload, self.trajectory)
        self.trajectory.hash = event.hash
        self.trajectory.last_event_id = event.event_id
        self.trajectory.event_count += 1

    def _apply(self, event: Envelope, p: AnyPayload, t: Trajectory) -> None:
        # ``type(p) is``, not ``isinstance``: payload models are ABCs to pydantic, and each isinstance miss
        # takes its slow path (~0.3 us; a rationale missed four times before matching)
        if type(p) is Observation:
            obs = ObservationRecord(event.event_id, p.step, p.url, p.title, p.description, p.ax_tree)
            t.observations.append(obs)
            t.timeline.append(obs)
        elif type(p) is Action:
            action = ActionRecord(event.event_id, p.step, p.raw, p.parsed, p.status, p.error)
            t.actions.append(action)
            t.timeline.append(action)
        elif type(p) is HistoryQuery:
            access = HistoryAccess(event.event_id, p.step, p.phase, p.query, p.reason)
            t.history.append(access)
            t.timeline.append(access)
            self._by_event[event.event_id] = access
        elif type(p) is HistoryRetrieval:
            retrieval = RetrievalRecord(event.event_id, p.step, p.query, tuple(p.hits), p.k, p.threshold)
            access = self._retrieval_access(event, p, t)
            access.retrievals.append(retrieval)
            t.timeline.append(retrieval)
            self._by_event[event.event_id] = access
        elif type(p) is Rationale:
            rationale = RationaleRecord(event.event_id, p.step, p.source, p.text, tuple(p.cited_entry_ids))
            if p.source == "planner":
                t.planner_rationales.append(rationale)
            else:
                self._answer_access(event, p, t).answers.append(rationale)
            t.timeline.append(rationale)
        elif type(p) is LlmCall:
            t.llm_calls += 1
            t.llm_cost_usd += p.cost_usd or 0.0
        elif type(p) is FinalState:
            t.final_state = FinalStateRecord(
                event.event_id, p.url, p.title, p.dom_html, p.ax_tree, p.screenshot, p.har, p.stylesheets
            )
        elif type(p) is PageCapture:
            t.captures.append(
                CaptureRecord(
                    event.event_id,
                    p.index,
                    p.requested_url,
                    p.final_url,
                    p.status,
                    p.title,
                    p.dom_html,
                    p.screenshot,
                    p.error,
                )
            )
        elif type(p) is EpisodeFinished:
            t.end_reason, t.answer, t.final_url, t.end_detail = p.end_reason, p.answer, p.final_url, p.detail
            t.finished_event_id = event.event_id

    def _retrieval_access(self, event: Envelope, p: HistoryRetrieval, t: Trajectory) -> HistoryAccess:
        """The query this retrieval answers: by causation, else the latest query with the same text."""
        if event.causation_id in self._by_event:
            return self._by_event[event.causation_id]
        for access in reversed(t.history):
            if access.query == p.query and not access.retrievals:
                return access
        access = HistoryAccess(None, p.step, None, p.query)
        t.history.append(access)
        return access

    def _answer_access(self, event: Envelope, p: Rationale, t: Trajectory) -> HistoryAccess:
        """The access a memory answer belongs to: by causation (retrieval or query), else the latest one."""
        if event.causation_id in self._by_event:
            return self._by_event[event.causation_id]
        if t.history:
            return t.history[-1]
        access = HistoryAccess(None, p.step, None, "")
        t.history.append(access)
        return access


def _start(event: Envelope, p: EpisodeStarted) -> Trajectory:
    run_id = run_of(event.stream)
    return Trajectory(
        stream=event.stream,
        run_id=run_id,
        episode_id=p.episode_id,
        task_id=p.task_id,
        persona=p.persona,
        query_set=p.query_set,
        level=p.level,
        scheme=p.scheme,
        query=p.query,
        start_url=p.start_url,
        ground_truth=p.ground_truth,
        started_event_id=event.event_id,
        fork=p.fork,
    )


def project(events: Iterable[Event]) -> Trajectory:
    """The trajectory of one episode from its events in stream order."""
    fold = _Fold()
    for event in events:
        fold.apply(event, event.payload)
    if fold.trajectory is None:
        raise ProjectionError("no events: an episode starts with episode.started")
    return fold.trajectory

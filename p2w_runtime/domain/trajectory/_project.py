"""Fold one episode's events into a ``Trajectory``: a pure function of the events, nothing else."""

from __future__ import annotations

from collections.abc import Iterable

from p2w_rt.schemas import (
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
    RetrievalHit,
)
from p2w_runtime.domain import run_of
from p2w_runtime.domain.trajectory._decode import FastRecord, decode_record
from p2w_runtime.domain.trajectory._detail import call_detail, recorded_at, retrieved_entries
from p2w_runtime.domain.trajectory._envelope import Envelope, StoredEnvelope
from p2w_runtime.domain.trajectory._model import Trajectory
from p2w_runtime.domain.trajectory._records import (
    ActionCommand,
    ActionRecord,
    CaptureRecord,
    FinalStateRecord,
    FinishedRecord,
    HistoryAccess,
    HitRecord,
    LlmCallDetail,
    LlmCallRecord,
    LlmUsageRecord,
    ObservationRecord,
    RationaleRecord,
    RetrievalRecord,
    RetrievedEntry,
)
from p2w_runtime.store import StoreError, after_end_problem


class ProjectionError(StoreError, ValueError):
    """The events do not form an episode (no ``episode.started`` first, a broken chain, events of several streams):
    a command names the stream in one line (a ``StoreError``)."""


class _Fold:
    """Applies events one at a time, so a reader can stream an episode without holding its raw events.

    ``detailed`` also keeps when each event was recorded, each LLM call's request and latency, and each retrieval's
    entries as recorded (``Trajectory.recorded_at``, ``call_details``, ``retrieved_entries``): its events must carry
    their time (a ``StoredEvent``, an ``Event``), which the chained events of ``load_trajectories`` do not.
    """

    def __init__(self, *, detailed: bool = False) -> None:
        self.trajectory: Trajectory | None = None
        self.detailed = detailed
        self._by_event: dict[str, HistoryAccess] = {}

    def apply_stored(self, event: StoredEnvelope) -> None:
        """Fold the next stored event of the stream, its record decoded from the text where it can be."""
        t = self.trajectory
        record = decode_record(event) if t is not None else None
        if t is None or record is None:
            self.apply(event, event.decode_payload())
            return
        self._follow(event, t)
        self._place(event, record, t)
        if self.detailed and type(record) is LlmCallRecord:
            t.call_details[record.event_id] = call_detail(event)
        elif self.detailed and type(record) is RetrievalRecord:
            payload = event.decode_payload()  # a bank's extra keys: the payload model keeps them, the record not
            assert isinstance(payload, HistoryRetrieval)
            t.retrieved_entries[record.event_id] = retrieved_entries(payload)
        self._advance(event, t)

    def apply(self, event: Envelope, payload: AnyPayload) -> None:
        """Fold the next event of the stream; its ``payload`` decoded (``StoredEvent.decode_payload``)."""
        t = self.trajectory
        if t is None:
            if not isinstance(payload, EpisodeStarted):
                raise ProjectionError(f"stream {event.stream}: first event is {event.type}, not episode.started")
            t = self.trajectory = _start(event, payload)
        else:
            self._follow(event, t)
            self._apply(event, payload, t)
        self._advance(event, t)

    def forget(self) -> None:
        """Drop what the events folded so far left in the trajectory (their records were read), keeping its
        header and chain position: how ``EpisodeChunks`` reads an episode of any length in bounded memory."""
        t = self.trajectory
        if t is not None:
            for kept in (t.records, t.observations, t.history, t.planner_rationales, t.actions, t.calls, t.captures):
                kept.clear()
            t.timeline.clear()
            t.recorded_at.clear()
            t.call_details.clear()
            t.retrieved_entries.clear()
        self._by_event.clear()

    def _follow(self, event: Envelope, t: Trajectory) -> None:
        if event.stream != t.stream:
            raise ProjectionError(f"event {event.event_id} belongs to {event.stream}, not {t.stream}")
        if event.prev_hash != t.hash:
            raise ProjectionError(
                f"stream {event.stream}: event seq {event.seq} does not follow the one before it (its prev_hash "
                f"differs): events are missing or out of order; run p2w-rt verify"
            )
        if t.end is not None:
            ended = after_end_problem("episode.finished", t.event_count)
            raise ProjectionError(f"stream {event.stream} seq {event.seq}: {event.type} {ended}; run p2w-rt verify")

    def _advance(self, event: Envelope, t: Trajectory) -> None:
        if self.detailed:
            at = recorded_at(event)
            if t.event_count:
                t.recorded_at.append(at)
            else:
                t.started_at = at
        t.hash = event.hash
        t.last_event_id = event.event_id
        t.event_count += 1

    def _apply(self, event: Envelope, p: AnyPayload, t: Trajectory) -> None:
        # ``type(p) is``, not ``isinstance``: payload models are ABCs to pydantic, and each isinstance miss
        # takes its slow path, and a late type in the chain misses several times before matching
        eid = event.event_id
        if type(p) is Observation:
            record = ObservationRecord(
                eid, p.step, p.url, p.title, p.description, p.ax_tree, tuple(p.tabs), p.screenshot
            )
            self._place(event, record, t)
        elif type(p) is Action:
            parsed = ActionCommand(p.parsed.name, tuple(p.parsed.args)) if p.parsed else None
            self._place(event, ActionRecord(eid, p.step, p.raw, parsed, p.status, p.error, p.duration_s), t)
        elif type(p) is Rationale:
            self._place(event, RationaleRecord(eid, p.step, p.source, p.text, tuple(p.cited_entry_ids)), t)
        elif type(p) is LlmCall:
            self._place(event, _llm_record(eid, p), t)
            if self.detailed:
                t.call_details[eid] = LlmCallDetail(p.messages, p.latency_s, p.params)
        elif type(p) is HistoryQuery:
            access = HistoryAccess(eid, p.step, p.phase, p.query, p.reason)
            t.history.append(access)
            t.timeline.append(access)
            t.records.append(access)
            self._by_event[eid] = access
        elif type(p) is HistoryRetrieval:
            hits = tuple(_hit_record(hit) for hit in p.hits)
            retrieval = RetrievalRecord(eid, p.step, p.query, hits, p.k, p.threshold, p.model_id, p.index_hash)
            self._place(event, retrieval, t)
            if self.detailed:
                t.retrieved_entries[eid] = retrieved_entries(p)
        elif type(p) is FinalState:
            t.final_state = FinalStateRecord(
                eid, p.url, p.title, p.dom_html, p.ax_tree, p.screenshot, p.har, p.stylesheets
            )
            t.records.append(t.final_state)
        elif type(p) is PageCapture:
            capture = CaptureRecord(
                eid, p.index, p.requested_url, p.final_url, p.status, p.title, p.dom_html, p.screenshot, p.error
            )
            t.captures.append(capture)
            t.records.append(capture)
        elif type(p) is EpisodeFinished:
            t.end = FinishedRecord(eid, p.end_reason, p.answer, p.final_url, p.steps, p.detail, p.cost_usd)
            t.records.append(t.end)

    def _place(self, event: Envelope, record: FastRecord, t: Trajectory) -> None:
        """Put a record where the trajectory keeps it: the same for a record decoded from text or from a payload."""
        t.records.append(record)
        if type(record) is ObservationRecord:
            t.observations.append(record)
            t.timeline.append(record)
        elif type(record) is RationaleRecord:
            if record.source == "planner":
                t.planner_rationales.append(record)
            else:
                self._answer_access(event, record, t).answers.append(record)
            t.timeline.append(record)
        elif type(record) is ActionRecord:
            t.actions.append(record)
            t.timeline.append(record)
        elif type(record) is RetrievalRecord:
            access = self._retrieval_access(event, record, t)
            access.retrievals.append(record)
            t.timeline.append(record)
            self._by_event[event.event_id] = access
        elif type(record) is LlmCallRecord:
            t.calls.append(record)
            t.llm_calls += 1
            t.llm_cost_usd += record.cost_usd or 0.0

    def _retrieval_access(self, event: Envelope, p: RetrievalRecord, t: Trajectory) -> HistoryAccess:
        """The query this retrieval answers: by causation, else the latest query with the same text."""
        if event.causation_id in self._by_event:
            return self._by_event[event.causation_id]
        for access in reversed(t.history):
            if access.query == p.query and not access.retrievals:
                return access
        access = HistoryAccess(None, p.step, None, p.query)
        t.history.append(access)
        return access

    def _answer_access(self, event: Envelope, p: RationaleRecord, t: Trajectory) -> HistoryAccess:
        """The access a memory answer belongs to: by causation (retrieval or query), else the latest one."""
        if event.causation_id in self._by_event:
            return self._by_event[event.causation_id]
        if t.history:
            return t.history[-1]
        access = HistoryAccess(None, p.step, None, "")
        t.history.append(access)
        return access


def _llm_record(eid: str, p: LlmCall) -> LlmCallRecord:
    u = p.usage
    usage = LlmUsageRecord(u.prompt_tokens, u.completion_tokens, u.total_tokens) if u is not None else None
    return LlmCallRecord(
        eid, p.role, p.model, p.fingerprint, p.ordinal, p.step, p.response, p.finish_reason, usage, p.attempt,
        p.error, p.cost_usd,
    )  # fmt: skip


def _hit_record(hit: RetrievalHit) -> HitRecord:
    e = hit.entry
    return HitRecord(hit.entry_id, hit.rank, hit.score, RetrievedEntry(e.timestamp, e.type, e.object, e.website))


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


def project(events: Iterable[Event], *, detailed: bool = False) -> Trajectory:
    """The trajectory of one episode from its events in stream order (``detailed``: see ``_Fold``)."""
    fold = _Fold(detailed=detailed)
    for event in events:
        fold.apply(event, event.payload)
    if fold.trajectory is None:
        raise ProjectionError("no events: an episode starts with episode.started")
    return fold.trajectory


def project_slice(started: Event, events: Iterable[Event]) -> Trajectory:
    """A contiguous part of one episode folded as ``project`` folds the whole: ``started`` (its first event), then
    ``events`` from any seq on, the chain checked from the first of them. What it counts (records, LLM calls and
    cost, ``event_count``) is the slice's, and ``records[0]`` is the slice's first event: a reader that shows one
    page of a long episode projects only that page (the viewer, docs/design/view.md)."""
    fold = _Fold()
    fold.apply(started, started.payload)
    t = fold.trajectory
    assert t is not None
    first = True
    for event in events:
        if first:
            t.hash, first = event.prev_hash, False
        fold.apply(event, event.payload)
    return t

"""The trajectory read model: what one episode did, folded from its events.

Records are frozen ``msgspec`` structs rather than pydantic models or dataclasses: the hot ones are decoded
straight from the stored payload text, fields checked, in one pass (``_decode.py``), and judges read thousands
of trajectories a second (docs/design/projection.md). Immutable, since judges share one trajectory; ``gc=False``
(never tracked by the cyclic collector) wherever a record holds only scalars, strings and tuples of them, which
cannot form a cycle. The two aggregates the fold fills, ``HistoryAccess`` and
``Trajectory``, are plain dataclasses. Every record keeps the id of the event it came from, so judgments can
cite evidence, and names its event type (``EVENT_TYPE``), so a reader of ``Trajectory.records`` (the timeline,
``rerun``) needs no second reading of the events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar, Literal

import msgspec

from p2w_rt.schemas import NOT_CARRIED_OUT, EndReason, ForkPoint, GroundTruth, LlmRole, entry_key_text, render_action

NON_BROWSER_ACTIONS = frozenset({"memory_access", "note", "branch", "prune"})
"""Actions that do not act on the page: asking the history, planning, note taking."""


class ObservationRecord(msgspec.Struct, frozen=True, gc=False):
    EVENT_TYPE: ClassVar[str] = "observation"

    event_id: str
    step: int
    url: str
    title: str = ""
    description: str | None = None
    ax_tree: str | None = None
    tabs: tuple[str, ...] = ()
    screenshot: str | None = None


class RationaleRecord(msgspec.Struct, frozen=True, gc=False):
    EVENT_TYPE: ClassVar[str] = "rationale"

    event_id: str
    step: int | None
    source: Literal["planner", "generator"]
    text: str
    cited_entry_ids: tuple[int, ...] = ()


class RetrievedEntry(msgspec.Struct, frozen=True, gc=False):
    """A history entry as a hit carries it: ``MemoryEntry``'s four fields (extra keys of a bank are not kept)."""

    timestamp: Annotated[str, msgspec.Meta(min_length=1)]
    type: Annotated[str, msgspec.Meta(min_length=1)]
    object: Annotated[str, msgspec.Meta(min_length=1)]
    website: str = ""

    def key_text(self) -> str:
        return entry_key_text(self.type, self.object)


class HitRecord(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """One entry a retrieval returned: ``RetrievalHit``'s fields, read-only."""

    entry_id: int
    rank: Annotated[int, msgspec.Meta(ge=1)]
    score: float | None
    entry: RetrievedEntry


class RetrievalRecord(msgspec.Struct, frozen=True, gc=False):
    EVENT_TYPE: ClassVar[str] = "history.retrieval"

    event_id: str
    step: int | None
    query: str
    hits: tuple[HitRecord, ...]
    k: int
    threshold: float
    model_id: str
    index_hash: str


@dataclass(slots=True)
class HistoryAccess:
    """One question to the user history: the query, what the retriever returned, what the generator answered.

    Joined by ``causation_id`` (retrieval -> query, answer -> retrieval or query). ``query_event_id``
    is None for a retrieval whose query was not recorded. The record of a ``history.query`` event.
    """

    EVENT_TYPE: ClassVar[str] = "history.query"

    query_event_id: str | None
    step: int | None
    phase: str | None
    query: str
    reason: str | None = None
    retrievals: list[RetrievalRecord] = field(default_factory=list)
    answers: list[RationaleRecord] = field(default_factory=list)

    @property
    def event_id(self) -> str:
        """The query event's id, as every record has one ("" for an access no recorded query opened)."""
        return self.query_event_id or ""

    @property
    def hits(self) -> list[HitRecord]:
        return [hit for retrieval in self.retrievals for hit in retrieval.hits]


class ActionCommand(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """An action's parsed command as a trajectory keeps it: ``ParsedAction``'s fields, read-only."""

    name: str
    args: tuple[str, ...] = ()

    def render(self) -> str:
        return render_action(self.name, self.args)


class ActionRecord(msgspec.Struct, frozen=True, gc=False):
    EVENT_TYPE: ClassVar[str] = "action"

    event_id: str
    step: int
    raw: str
    parsed: ActionCommand | None
    status: Literal["executed", "invalid", "blocked"]
    error: str | None = None
    duration_s: Annotated[float, msgspec.Meta(ge=0)] | None = None
    """How long carrying the action out took, when the recorder timed it (``action`` v2)."""

    @property
    def name(self) -> str | None:
        return self.parsed.name if self.parsed else None

    @property
    def is_browser_action(self) -> bool:
        return self.parsed is not None and self.parsed.name not in NON_BROWSER_ACTIONS

    @property
    def not_carried_out(self) -> bool:
        """Logged by the runner but never executed (not a refusal by the site): see ``schemas.NOT_CARRIED_OUT``."""
        return self.status == "blocked" and (self.error or "").startswith(NOT_CARRIED_OUT)


class FinalStateRecord(msgspec.Struct, frozen=True, gc=False):
    EVENT_TYPE: ClassVar[str] = "final_state"

    event_id: str
    url: str
    title: str = ""
    dom_html: str | None = None
    ax_tree: str | None = None
    screenshot: str | None = None
    har: str | None = None
    stylesheets: str | None = None


class CaptureRecord(msgspec.Struct, frozen=True, gc=False):
    """A page the answer linked to, as fetched at the end of the episode (``page.capture``)."""

    EVENT_TYPE: ClassVar[str] = "page.capture"

    event_id: str
    index: int
    requested_url: str
    final_url: str | None
    status: int | None
    title: str = ""
    dom_html: str | None = None
    screenshot: str | None = None
    error: str | None = None


class LlmUsageRecord(msgspec.Struct, frozen=True, gc=False, forbid_unknown_fields=True):
    """An LLM call's token counts: ``LlmUsage``'s fields, read-only."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


class LlmCallRecord(msgspec.Struct, frozen=True, gc=False):
    """One attempt of an LLM call: who asked, under which key, and what came back (``llm.call``).

    The request itself (``messages``, ``params``) is not kept here: it is most of a run's bytes, and only a reader
    that asks for it gets it (``Trajectory.call_details``; a rerun whose prompt changed reads its one event instead).
    """

    EVENT_TYPE: ClassVar[str] = "llm.call"

    event_id: str
    role: LlmRole
    model: str
    fingerprint: str
    ordinal: Annotated[int, msgspec.Meta(ge=0)]
    step: int | None = None
    response: str | None = None
    finish_reason: str | None = None
    usage: LlmUsageRecord | None = None
    attempt: int = 1
    error: str | None = None
    cost_usd: float | None = None

    @property
    def answered(self) -> bool:
        """The attempt that got an answer (a failed attempt has an error and no response)."""
        return self.error is None and self.response is not None


class LlmCallDetail(msgspec.Struct, frozen=True):
    """What an ``llm.call`` holds beyond its ``LlmCallRecord``: the request sent and how long it took. Kept by a
    trajectory read ``detailed`` (an OpenTelemetry export shows prompts, settings and durations; judges never read
    them, and the messages are most of a run's bytes)."""

    messages: list[dict[str, Any]]
    latency_s: float
    params: dict[str, Any] = msgspec.field(default_factory=dict)


class FinishedRecord(msgspec.Struct, frozen=True, gc=False):
    """How the episode ended (``episode.finished``)."""

    EVENT_TYPE: ClassVar[str] = "episode.finished"

    event_id: str
    end_reason: EndReason
    answer: str | None = None
    final_url: str | None = None
    steps: int = 0
    detail: str | None = None
    cost_usd: float | None = None


TimelineItem = ObservationRecord | HistoryAccess | RetrievalRecord | RationaleRecord | ActionRecord
"""One entry of a trajectory's timeline; a ``HistoryAccess`` stands for its query event."""

EpisodeRecord = TimelineItem | LlmCallRecord | CaptureRecord | FinalStateRecord | FinishedRecord
"""The record of one event after ``episode.started``: every event of an episode has one."""


@dataclass(slots=True)
class Trajectory:
    """One episode as a judge sees it. ``hash`` is the hash of the episode's last event: it names
    exactly what was judged, and judgments live in another stream so they never change it."""

    stream: str
    run_id: str
    episode_id: str
    task_id: str
    persona: str
    query_set: str
    level: int | None
    scheme: str | None
    query: str
    start_url: str
    ground_truth: GroundTruth | None
    started_event_id: str
    fork: ForkPoint | None = None
    """Where the episode branched off its source (``p2w-rt fork``); None for an episode recorded from its start."""
    hash: str = ""
    last_event_id: str = ""
    event_count: int = 0
    observations: list[ObservationRecord] = field(default_factory=list)
    history: list[HistoryAccess] = field(default_factory=list)
    planner_rationales: list[RationaleRecord] = field(default_factory=list)
    actions: list[ActionRecord] = field(default_factory=list)
    llm_calls: int = 0
    llm_cost_usd: float = 0.0
    calls: list[LlmCallRecord] = field(default_factory=list)
    """Every ``llm.call`` attempt, in event order."""
    end: FinishedRecord | None = None
    """The ``episode.finished`` record; None while the episode runs (or its recorder died)."""
    final_state: FinalStateRecord | None = None
    captures: list[CaptureRecord] = field(default_factory=list)
    """Pages the answer's product links led to, in the answer's order (AgenticShop curation)."""
    timeline: list[TimelineItem] = field(default_factory=list)
    """Observations, history queries, retrievals, rationales and actions in event order (what an LLM judge reads)."""
    records: list[EpisodeRecord] = field(default_factory=list)
    """Every event after ``episode.started`` as its record, in stream order: ``records[i]`` is the event of seq
    ``i + 2`` (the fold checks the hash chain, so none is missing)."""
    started_at: str | None = None
    """When ``episode.started`` was recorded (its ``recorded_at``); None unless the trajectory was read
    ``detailed``."""
    recorded_at: list[str] = field(default_factory=list)
    """When each of ``records`` was recorded, ``recorded_at[i]`` of ``records[i]``; empty unless read ``detailed``
    (``load_trajectories`` reads a run's events without their times)."""
    call_details: dict[str, LlmCallDetail] = field(default_factory=dict)
    """Each LLM call's request and latency, by the call's event id; empty unless read ``detailed``."""
    retrieved_entries: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    """Each retrieval's hit entries as recorded (``RetrievedEntry`` keeps four fields; a bank's extra keys are here
    too), by the retrieval's event id; empty unless read ``detailed``."""

    @property
    def finished(self) -> bool:
        return self.end is not None

    @property
    def end_reason(self) -> str | None:
        return self.end.end_reason if self.end is not None else None

    @property
    def answer(self) -> str | None:
        return self.end.answer if self.end is not None else None

    @property
    def final_url(self) -> str | None:
        return self.end.final_url if self.end is not None else None

    @property
    def end_detail(self) -> str | None:
        return self.end.detail if self.end is not None else None

    @property
    def finished_event_id(self) -> str | None:
        return self.end.event_id if self.end is not None else None

    @property
    def steps(self) -> list[int]:
        """Every step number seen, in order (observations, actions and step-tagged reasoning)."""
        seen = {o.step for o in self.observations} | {a.step for a in self.actions}
        seen |= {r.step for r in self.planner_rationales if r.step is not None}
        return sorted(seen)

    @property
    def urls(self) -> list[tuple[str, str]]:
        """(event id, URL) of every page the agent was on, final page included."""
        found = [(o.event_id, o.url) for o in self.observations]
        if self.final_state is not None:
            found.append((self.final_state.event_id, self.final_state.url))
        elif self.final_url and self.finished_event_id:
            found.append((self.finished_event_id, self.final_url))
        return found

    @property
    def last_url(self) -> str | None:
        if self.final_state is not None:
            return self.final_state.url
        if self.final_url:
            return self.final_url
        return self.observations[-1].url if self.observations else None

    def rationales_at(self, step: int) -> list[RationaleRecord]:
        return [r for r in self.planner_rationales if r.step == step]

    @property
    def final_action(self) -> ActionRecord | None:
        return self.actions[-1] if self.actions else None

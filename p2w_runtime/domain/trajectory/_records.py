"""The records a trajectory is folded into: one per event of an episode (``Trajectory`` in ``_model.py``).

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

from p2w_rt.schemas import NOT_CARRIED_OUT, EndReason, LlmRole, entry_key_text, render_action

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

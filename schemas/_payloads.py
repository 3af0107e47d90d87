"""One payload model per event type (DESIGN.md section 2): an episode's here, a run's own stream's in
``_run_payloads.py``, the derived and the store's in theirs; every type in ``PAYLOAD_TYPES`` and ``AnyPayload``.

Each payload carries its ``type`` literal, which is the discriminator of the
event union, and a ``SCHEMA_VERSION`` class constant. A payload shape change
bumps the constant and registers an upcaster (see ``_upcast.py``) so that old
events keep loading.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from p2w_rt.schemas._dataset import GroundTruth, MemoryEntry
from p2w_rt.schemas._derived_payloads import ErrorClassified, Judgment, RetrievalCounterfactual
from p2w_rt.schemas._llm_payloads import LlmCall
from p2w_rt.schemas._payload_base import BlobHash, EndReason, Payload, Scheme
from p2w_rt.schemas._run_payloads import (
    EpisodeSealed,
    RunDatasetAttached,
    RunFinished,
    RunStarted,
    StreamsSealed,
)
from p2w_rt.schemas._store_payloads import StoreVerified
from p2w_rt.schemas._upcast import register_upcaster


class ForkPoint(BaseModel):
    """Where a forked episode branched off: its source episode and the step it continued live from."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    source_stream: str
    at_step: int = Field(ge=1)
    source_event_id: str | None = Field(default=None, description="The source's observation of step ``at_step``.")


class EpisodeStarted(Payload):
    SCHEMA_VERSION: ClassVar[int] = 3

    type: Literal["episode.started"] = "episode.started"
    episode_id: str
    task_id: str
    persona: str
    query_set: str = Field(description="Task id without its level digit, e.g. Alex_Garcia_A.")
    level: int | None = Field(default=None, ge=0, le=2)
    scheme: Scheme | None = None
    query: str
    start_url: str
    ground_truth: GroundTruth | None = None
    source_file: str | None = None
    fork: ForkPoint | None = Field(default=None, description="Set on an episode made by ``p2w-rt fork``.")
    objective: str | None = Field(
        default=None,
        description="v3: the agent's whole instruction as an imported runner recorded it (AgentOccam: the system "
        "instruction plus the query, rewritten under pre-execution); None when the source did not record one.",
    )


@register_upcaster("episode.started", 1)
def _episode_started_unforked(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 had no ``fork``: every such episode was recorded from its start."""
    return {**payload, "fork": None}


@register_upcaster("episode.started", 2)
def _episode_started_no_objective(payload: dict[str, Any]) -> dict[str, Any]:
    """v2 kept no runner objective: its episodes were recorded by us or imported before v3."""
    return {**payload, "objective": None}


class EpisodeFinished(Payload):
    type: Literal["episode.finished"] = "episode.finished"
    end_reason: EndReason
    answer: str | None = None
    final_url: str | None = None
    steps: int = 0
    detail: str | None = None
    cost_usd: float | None = None


class Observation(Payload):
    type: Literal["observation"] = "observation"
    step: int
    url: str
    title: str = ""
    tabs: list[str] = Field(default_factory=list)
    description: str | None = Field(default=None, description="Short text summary (imported runs).")
    ax_tree: BlobHash | None = None
    screenshot: BlobHash | None = None

    def blob_hashes(self) -> list[BlobHash]:
        return [h for h in (self.ax_tree, self.screenshot) if h]


class HistoryQuery(Payload):
    type: Literal["history.query"] = "history.query"
    step: int | None = Field(description="None when the source did not record it.")
    phase: Literal["pre-execution", "on-demand"]
    query: str
    reason: str | None = None


class RetrievalHit(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    entry_id: int = Field(description="Index of the entry in the persona's memory bank.")
    rank: int = Field(ge=1)
    score: float | None = None
    entry: MemoryEntry


class HistoryRetrieval(Payload):
    type: Literal["history.retrieval"] = "history.retrieval"
    step: int | None
    query: str
    model_id: str
    index_hash: str
    k: int
    threshold: float
    hits: list[RetrievalHit]


class Rationale(Payload):
    type: Literal["rationale"] = "rationale"
    step: int | None
    source: Literal["planner", "generator"]
    text: str
    cited_entry_ids: list[int] = Field(default_factory=list)


def render_action(name: str, args: Sequence[str]) -> str:
    """An action's canonical text form, ``name [a] [b]``: of a payload's ``ParsedAction`` and a trajectory's record."""
    return " ".join([name, *(f"[{a}]" for a in args)])


class ParsedAction(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    name: str
    args: list[str] = Field(default_factory=list)

    def render(self) -> str:
        return render_action(self.name, self.args)


class Action(Payload):
    SCHEMA_VERSION: ClassVar[int] = 2

    type: Literal["action"] = "action"
    step: int
    raw: str
    parsed: ParsedAction | None = None
    status: Literal["executed", "invalid", "blocked"]
    error: str | None = None
    duration_s: float | None = Field(default=None, ge=0)
    """v2: how long carrying the action out took, when the recorder timed it (recorded after it ran)."""


@register_upcaster("action", 1)
def _action_untimed(payload: dict[str, Any]) -> dict[str, Any]:
    """Version 1 carried no duration."""
    return {**payload, "duration_s": None}


class FinalState(Payload):
    SCHEMA_VERSION: ClassVar[int] = 2

    type: Literal["final_state"] = "final_state"
    url: str
    title: str = ""
    dom_html: BlobHash | None = None
    ax_tree: BlobHash | None = None
    screenshot: BlobHash | None = None
    har: BlobHash | None = None
    stylesheets: BlobHash | None = None
    """v2: JSON ``{stylesheet URL: CSS text}`` of the final page, so offline ``outerText`` hides what CSS hides."""

    def blob_hashes(self) -> list[BlobHash]:
        return [h for h in (self.dom_html, self.ax_tree, self.screenshot, self.har, self.stylesheets) if h]


@register_upcaster("final_state", 1)
def _final_state_v1(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 recorded no stylesheets: ``stylesheets`` stays None (offline checks then see the page unstyled)."""
    return payload


class PageCapture(Payload):
    """A page the agent's answer links to, fetched and kept at the end of the episode (AgenticShop curation).

    Judging the curated products then never needs the web: the status code and final URL say whether the
    link was a product at all, the DOM and screenshot are what the extractor reads.
    """

    type: Literal["page.capture"] = "page.capture"
    index: int = Field(ge=0, description="Position of the link in the answer's product list.")
    requested_url: str
    final_url: str | None = None
    status: int | None = Field(default=None, description="HTTP status of the main document; None: no response.")
    title: str = ""
    dom_html: BlobHash | None = None
    screenshot: BlobHash | None = None
    error: str | None = Field(default=None, description="Why nothing was fetched (DNS, timeout...).")

    def blob_hashes(self) -> list[BlobHash]:
        return [h for h in (self.dom_html, self.screenshot) if h]


PAYLOAD_TYPES: tuple[type[Payload], ...] = (
    RunStarted,
    RunFinished,
    RunDatasetAttached,
    EpisodeStarted,
    EpisodeFinished,
    Observation,
    HistoryQuery,
    HistoryRetrieval,
    Rationale,
    LlmCall,
    Action,
    FinalState,
    PageCapture,
    Judgment,
    ErrorClassified,
    StreamsSealed,
    EpisodeSealed,
    RetrievalCounterfactual,
    StoreVerified,
)

AnyPayload = Annotated[
    RunStarted
    | RunFinished
    | RunDatasetAttached
    | EpisodeStarted
    | EpisodeFinished
    | Observation
    | HistoryQuery
    | HistoryRetrieval
    | Rationale
    | LlmCall
    | Action
    | FinalState
    | PageCapture
    | Judgment
    | ErrorClassified
    | StreamsSealed
    | EpisodeSealed
    | RetrievalCounterfactual
    | StoreVerified,
    Field(discriminator="type"),
]
"""Discriminated union of every payload model, keyed on ``type``."""

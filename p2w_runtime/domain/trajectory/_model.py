"""The trajectory read model: what one episode did, folded from its events into records (``_records.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from p2w_rt.schemas import ForkPoint, GroundTruth
from p2w_runtime.domain.trajectory._records import (
    ActionRecord,
    CaptureRecord,
    EpisodeRecord,
    FinalStateRecord,
    FinishedRecord,
    HistoryAccess,
    LlmCallDetail,
    LlmCallRecord,
    ObservationRecord,
    RationaleRecord,
    TimelineItem,
)


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

"""The episode page's read model: the one projection (``Trajectory``) regrouped by step.

The stream is read once and projected; from the same events the page takes only what the projection does not
keep: an observation's screenshot and tabs, each LLM call's messages, tokens and latency (the trajectory counts
calls and their cost), and the ids of every event (which evidence ids link to this page).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from p2w_cli.view._blobs import BlobProblem, read_blob
from p2w_runtime.domain import RunInfo, episode_stream
from p2w_runtime.domain.trajectory import (
    ActionRecord,
    HistoryAccess,
    ObservationRecord,
    RationaleRecord,
    Trajectory,
    project,
)
from p2w_runtime.store import EventStore
from replay.classify import ClassificationRecord
from replay.judges import JudgmentRecord
from schemas import Event, LlmCall, Observation

HAR_ROWS = 200
"""HAR entries listed on the page; the rest are counted."""


class UnknownEpisode(LookupError):
    pass


@dataclass(frozen=True, slots=True)
class ShownObservation:
    """An observation as the page shows it: the projection's record, with the screenshot and tabs it leaves out."""

    record: ObservationRecord
    screenshot: str | None = None
    tabs: list[str] = field(default_factory=list)
    same_as_step: int | None = None
    """The step whose screenshot is this same blob, when the page did not change since (a ``memory_access``
    step sees the page it asked from): the page links to it rather than showing the image again."""


Item = ShownObservation | HistoryAccess | RationaleRecord | ActionRecord | tuple[str, LlmCall]
KINDS: dict[type, str] = {
    ShownObservation: "observation",
    HistoryAccess: "history",
    RationaleRecord: "reasoning",
    ActionRecord: "action",
    tuple: "llm",
}


@dataclass(slots=True)
class Step:
    """Everything that happened at one step, in the order the agent saw and did it."""

    number: int | None
    observations: list[ShownObservation] = field(default_factory=list)
    history: list[HistoryAccess] = field(default_factory=list)
    reasoning: list[RationaleRecord] = field(default_factory=list)
    actions: list[ActionRecord] = field(default_factory=list)
    llm_calls: list[tuple[str, LlmCall]] = field(default_factory=list)
    entries: list[tuple[str, Item]] = field(default_factory=list)
    """(kind, item) of everything above in recorded order, as the page shows it: the reasoning before the
    history query or action it led to."""

    @property
    def event_ids(self) -> list[str]:
        ids = [o.record.event_id for o in self.observations] + [r.event_id for r in self.reasoning]
        ids += [a.event_id for a in self.actions] + [i for i, _ in self.llm_calls]
        for access in self.history:
            ids += [i for i in [access.query_event_id] if i] + [r.event_id for r in access.retrievals]
            ids += [r.event_id for r in access.answers]
        return ids


@dataclass(frozen=True, slots=True)
class HarEntry:
    method: str
    url: str
    status: int | None
    mime: str
    size: int | None


@dataclass(frozen=True, slots=True)
class HarSummary:
    entries: list[HarEntry]
    total: int
    error: str | None = None


@dataclass(slots=True)
class EpisodePage:
    run_id: str
    run_label: str
    trajectory: Trajectory
    """The final state (``trajectory.final_state``) is the projection's too."""
    steps: list[Step]
    har: HarSummary | None
    judgments: list[tuple[JudgmentRecord, bool]]
    """Every judgment, newest first, with whether it judged the episode as it is now."""
    classifications: list[tuple[ClassificationRecord, bool]]
    event_ids: set[str]
    llm_totals: dict[str, float]
    final_same_as_step: int | None = None
    """The step that shows the final state's screenshot already (the page did not change after it)."""


async def episode_page(
    store: EventStore,
    run: RunInfo,
    episode_id: str,
    judgments: Sequence[JudgmentRecord],
    classifications: Sequence[ClassificationRecord],
) -> EpisodePage:
    """``judgments`` and ``classifications`` are the run's (all of them), read once for all its episode pages."""
    stream = episode_stream(run.run_id, episode_id)
    events = [stored.decode() async for stored in store.read_stream(stream)]
    if not events or events[0].type != "episode.started":
        raise UnknownEpisode(f"run {run.run_id} has no episode {episode_id!r}")
    trajectory = project(events)
    final = trajectory.final_state
    har = await har_summary(store, final.har) if final and final.har else None
    judged = [
        (r, r.judgment.trajectory_hash == trajectory.hash) for r in judgments if r.judgment.episode_stream == stream
    ]
    classified = [
        (r, r.classification.trajectory_hash == trajectory.hash)
        for r in classifications
        if r.classification.episode_stream == stream
    ]
    calls = [e.payload for e in events if isinstance(e.payload, LlmCall)]
    totals = {
        "calls": trajectory.llm_calls,
        "tokens": sum(c.usage.total_tokens for c in calls if c.usage),
        "cost": trajectory.llm_cost_usd,
        "latency": sum(c.latency_s for c in calls),
    }
    steps = _steps(trajectory, events)
    ids = {e.event_id for e in events}
    shown = [o for step in steps for o in step.observations if o.screenshot]
    same = None
    if final and final.screenshot and shown and shown[-1].screenshot == final.screenshot:
        last = shown[-1]
        same = last.record.step if last.same_as_step is None else last.same_as_step
    return EpisodePage(run.run_id, run.label, trajectory, steps, har, judged[::-1], classified[::-1], ids, totals, same)


def _steps(t: Trajectory, events: list[Event]) -> list[Step]:
    """Group the trajectory by step number; history asked before the first step (pre-execution) is step None,
    shown first. ``events`` are the ones ``t`` was projected from, for what it leaves out."""
    steps: dict[int | None, Step] = {}

    def at(number: int | None) -> Step:
        return steps.setdefault(number, Step(number))

    position = {e.event_id: i for i, e in enumerate(events)}
    placed: dict[int | None, list[tuple[int, Item]]] = {}

    def put(step: int | None, event_id: str, item: Item) -> None:
        placed.setdefault(step, []).append((position.get(event_id, len(position)), item))

    seen = {e.event_id: e.payload for e in events if isinstance(e.payload, Observation)}
    last: tuple[str | None, int | None] = (None, None)
    for record in t.observations:
        o = seen.get(record.event_id)
        shot = o.screenshot if o else None
        same = last[1] if shot and shot == last[0] else None
        shown = ShownObservation(record, shot, o.tabs if o else [], same)
        last = (shot, record.step) if same is None else last
        at(record.step).observations.append(shown)
        put(record.step, record.event_id, shown)
    for access in t.history:
        at(access.step).history.append(access)
        ids = [r.event_id for r in access.retrievals] + [a.event_id for a in access.answers]
        put(access.step, access.query_event_id or (ids[0] if ids else ""), access)
    for rationale in t.planner_rationales:
        at(rationale.step).reasoning.append(rationale)
        put(rationale.step, rationale.event_id, rationale)
    for action in t.actions:
        at(action.step).actions.append(action)
        put(action.step, action.event_id, action)
    for event in events:
        if isinstance(event.payload, LlmCall):
            call = (event.event_id, event.payload)
            at(event.payload.step).llm_calls.append(call)
            put(event.payload.step, event.event_id, call)
    for number, items in placed.items():
        steps[number].entries = [(KINDS[type(item)], item) for _, item in sorted(items, key=lambda x: x[0])]
    return sorted(steps.values(), key=lambda s: -1 if s.number is None else s.number)


async def har_summary(store: EventStore, sha: str) -> HarSummary:
    """Method, URL, status, type and size of each request in the recorded HAR."""
    try:
        log = json.loads(await read_blob(store, sha)).get("log", {})
        raw: list[dict[str, Any]] = log.get("entries", [])
        entries = [
            HarEntry(
                str(e.get("request", {}).get("method", "")),
                str(e.get("request", {}).get("url", "")),
                e.get("response", {}).get("status"),
                str(e.get("response", {}).get("content", {}).get("mimeType", "")),
                e.get("response", {}).get("content", {}).get("size"),
            )
            for e in raw[:HAR_ROWS]
        ]
        return HarSummary(entries, len(raw))
    except BlobProblem as exc:
        return HarSummary([], 0, str(exc))
    except (ValueError, AttributeError, TypeError) as exc:
        return HarSummary([], 0, f"HAR blob {sha} is unreadable: {type(exc).__name__}")

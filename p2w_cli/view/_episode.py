"""The episode page's read model: the trajectory regrouped by step, with what the projection leaves out
(screenshots, AX trees, every LLM call) taken from the raw events beside it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from p2w_cli.view._blobs import BlobProblem, read_blob
from p2w_runtime.domain import episode_stream
from p2w_runtime.domain.trajectory import ActionRecord, HistoryAccess, RationaleRecord, Trajectory, project
from p2w_runtime.store import EventStore
from replay.classify import ClassificationRecord
from replay.judging import JudgmentRecord
from schemas import Event, FinalState, LlmCall, Observation

HAR_ROWS = 200
"""HAR entries listed on the page; the rest are counted."""


class UnknownEpisode(LookupError):
    pass


@dataclass(slots=True)
class Step:
    """Everything that happened at one step, in the order the agent saw and did it."""

    number: int | None
    observations: list[tuple[str, Observation]] = field(default_factory=list)
    history: list[HistoryAccess] = field(default_factory=list)
    reasoning: list[RationaleRecord] = field(default_factory=list)
    actions: list[ActionRecord] = field(default_factory=list)
    llm_calls: list[tuple[str, LlmCall]] = field(default_factory=list)

    @property
    def event_ids(self) -> list[str]:
        ids = [i for i, _ in self.observations] + [r.event_id for r in self.reasoning]
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
    trajectory: Trajectory
    steps: list[Step]
    final_state: tuple[str, FinalState] | None
    har: HarSummary | None
    judgments: list[tuple[JudgmentRecord, bool]]
    """Every judgment, newest first, with whether it judged the episode as it is now."""
    classifications: list[tuple[ClassificationRecord, bool]]
    event_ids: set[str]
    llm_totals: dict[str, float]


async def episode_page(
    store: EventStore,
    run_id: str,
    episode_id: str,
    judgments: Sequence[JudgmentRecord],
    classifications: Sequence[ClassificationRecord],
) -> EpisodePage:
    """``judgments`` and ``classifications`` are the run's (all of them), read once for all its episode pages."""
    stream = episode_stream(run_id, episode_id)
    events = [stored.decode() async for stored in store.read_stream(stream)]
    if not events or events[0].type != "episode.started":
        raise UnknownEpisode(f"run {run_id} has no episode {episode_id!r}")
    trajectory = project(events)
    steps = _steps(trajectory, events)
    final = next(((e.event_id, e.payload) for e in events if isinstance(e.payload, FinalState)), None)
    har = await har_summary(store, final[1].har) if final and final[1].har else None
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
        "calls": len(calls),
        "tokens": sum(c.usage.total_tokens for c in calls if c.usage),
        "cost": sum(c.cost_usd or 0.0 for c in calls),
        "latency": sum(c.latency_s for c in calls),
    }
    return EpisodePage(
        run_id,
        trajectory,
        steps,
        final,
        har,
        judged[::-1],
        classified[::-1],
        {e.event_id for e in events},
        totals,
    )


def _steps(t: Trajectory, events: list[Event]) -> list[Step]:
    """Group by step number; history asked before the first step (pre-execution) is step None, shown first."""
    steps: dict[int | None, Step] = {}

    def at(number: int | None) -> Step:
        return steps.setdefault(number, Step(number))

    for event in events:
        if isinstance(event.payload, Observation):
            at(event.payload.step).observations.append((event.event_id, event.payload))
        elif isinstance(event.payload, LlmCall):
            at(event.payload.step).llm_calls.append((event.event_id, event.payload))
    for access in t.history:
        at(access.step).history.append(access)
    for rationale in t.planner_rationales:
        at(rationale.step).reasoning.append(rationale)
    for action in t.actions:
        at(action.step).actions.append(action)
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

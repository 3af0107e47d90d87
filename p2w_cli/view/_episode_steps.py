"""An episode page's steps: the projection (``Trajectory``) regrouped by step number, each step's records in the
order they were recorded, with what the projection leaves out (an observation's screenshot and tabs, each LLM
call's messages, tokens, latency and price) and what the step took (its duration, tokens, cost)."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from p2w_rt.schemas import Event, LlmCall, Observation
from p2w_runtime.domain.trajectory import (
    ActionRecord,
    HistoryAccess,
    ObservationRecord,
    RationaleRecord,
    Trajectory,
)
from p2w_runtime.llm import PriceTable


@dataclass(frozen=True, slots=True)
class ShownObservation:
    """An observation as the page shows it: the projection's record, with the screenshot and tabs it leaves out."""

    record: ObservationRecord
    screenshot: str | None = None
    tabs: list[str] = field(default_factory=list)
    same_as_step: int | None = None
    """The step whose screenshot is this same blob, when the page did not change since (a ``memory_access``
    step sees the page it asked from): the page links to it rather than showing the image again."""


@dataclass(frozen=True, slots=True)
class ShownCall:
    """An LLM call as the page shows it: the recorded call, its anchor and what it cost."""

    event_id: str
    call: LlmCall
    anchor: str
    """``llm-STEP-K``: the K-th call of the step (``llm-pre-K`` before the first step), a permalink."""
    cost: float | None
    """The recorded cost, else the price table's; None when the model has no price, no usage was recorded, or the
    attempt got no answer (``call.response`` is None: not priced, as ``UsageTotals`` counts calls)."""


Item = ShownObservation | HistoryAccess | RationaleRecord | ActionRecord | ShownCall
KINDS: dict[type, str] = {
    ShownObservation: "observation",
    HistoryAccess: "history",
    RationaleRecord: "reasoning",
    ActionRecord: "action",
    ShownCall: "llm",
}


@dataclass(slots=True)
class Step:
    """Everything that happened at one step, in the order the agent saw and did it, and what it took."""

    number: int | None
    observations: list[ShownObservation] = field(default_factory=list)
    history: list[HistoryAccess] = field(default_factory=list)
    reasoning: list[RationaleRecord] = field(default_factory=list)
    actions: list[ActionRecord] = field(default_factory=list)
    llm_calls: list[ShownCall] = field(default_factory=list)
    entries: list[tuple[str, Item]] = field(default_factory=list)
    """(kind, item) of everything above in recorded order, as the page shows it: the reasoning before the
    history query or action it led to."""
    seconds: float | None = None
    """From the step's first event to the next step's first (or the episode's end): what the step took."""
    tokens: int = 0
    cost: float = 0.0
    """What the step's priced calls cost; ``unpriced`` names the models whose calls could not be priced."""
    unpriced: list[str] = field(default_factory=list)
    latency: float = 0.0

    @property
    def anchor(self) -> str:
        return f"step-{self.number if self.number is not None else 'pre'}"

    @property
    def event_ids(self) -> list[str]:
        ids = [o.record.event_id for o in self.observations] + [r.event_id for r in self.reasoning]
        ids += [a.event_id for a in self.actions] + [c.event_id for c in self.llm_calls]
        for access in self.history:
            ids += [i for i in [access.query_event_id] if i] + [r.event_id for r in access.retrievals]
            ids += [r.event_id for r in access.answers]
        return ids


def steps_of(t: Trajectory, events: list[Event], prices: PriceTable, after: datetime | None) -> list[Step]:
    """Group the trajectory by step number; history asked before the first step (pre-execution) is step None,
    shown first. ``events`` are the ones ``t`` was projected from, for what it leaves out; ``after`` is the time of
    the first event after them (the next page's), which ends the last step's duration."""
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
            c = event.payload
            step = at(c.step)
            cost = prices.call_cost(c)
            shown_call = ShownCall(event.event_id, c, f"llm-{step.anchor[5:]}-{len(step.llm_calls) + 1}", cost)
            step.llm_calls.append(shown_call)
            step.tokens += c.usage.total_tokens if c.usage else 0
            step.latency += c.latency_s
            if c.response is None:  # a failed attempt: nothing answered, nothing priced (as ``UsageTotals`` counts)
                pass
            elif cost is None:
                step.unpriced = sorted({*step.unpriced, c.model})
            else:
                step.cost += cost
            put(c.step, event.event_id, shown_call)
    for number, items in placed.items():
        steps[number].entries = [(KINDS[type(item)], item) for _, item in sorted(items, key=lambda x: x[0])]
    ordered = sorted(steps.values(), key=lambda s: -1 if s.number is None else s.number)
    _durations(ordered, events, position, after)
    return ordered


def _durations(steps: list[Step], events: list[Event], position: dict[str, int], after: datetime | None) -> None:
    """Each step's time: from its first event to the first event of whichever step comes next in the stream, the
    last one's to ``after`` or to the episode's last event."""
    starts = [min((position[i] for i in step.event_ids if i in position), default=None) for step in steps]
    ordered = sorted(s for s in starts if s is not None)
    end = after or (events[-1].recorded_at if events else None)
    for step, start in zip(steps, starts, strict=True):
        if start is None:
            continue
        later = ordered[bisect_right(ordered, start)] if bisect_right(ordered, start) < len(ordered) else None
        until = events[later].recorded_at if later is not None else end
        if until is not None:
            step.seconds = max(0.0, (until - events[start].recorded_at).total_seconds())


def llm_totals(steps: list[Step]) -> dict[str, Any]:
    """Calls, tokens, cost (of the priced calls), unpriced models and latency of ``steps``."""
    return {
        "calls": sum(len(step.llm_calls) for step in steps),
        "tokens": sum(step.tokens for step in steps),
        "cost": sum(step.cost for step in steps),
        "unpriced": sorted({m for step in steps for m in step.unpriced}),
        "latency": sum(step.latency for step in steps),
    }

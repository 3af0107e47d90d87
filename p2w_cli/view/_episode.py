"""The episode page's read model: the one projection (``Trajectory``) regrouped by step, a page of steps at a time.

An episode of up to ``PAGE_STEPS`` steps is read whole and projected, as it always was. A longer one is shown
``PAGE_STEPS`` steps a page: only that page's events are read (``_range``: two binary searches over single-row
reads, one ranged read) and projected (``project_slice``), with the episode's start and tail (final state, end),
so a page of a 200,000-step episode costs what a page of a short one does (docs/design/view.md, "Long episodes").
From the same events the page takes only what the projection does not keep: an observation's screenshot and tabs,
each LLM call's messages, tokens and latency, each event's time (a step's duration), and the ids of its events
(which evidence ids link to this page).
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from p2w_cli.view._blobs import BlobProblem, read_blob
from p2w_cli.view._problems import BadRequest
from p2w_cli.view._prompt_diff import PromptDiff
from p2w_cli.view._range import read_range
from p2w_cli.view._run_page import headline_judge
from p2w_rt.replay.classify import ClassificationRecord, entry_text, targets
from p2w_rt.replay.judges import JudgmentRecord
from p2w_rt.replay.persona2web import SiteSettings
from p2w_rt.schemas import Event, LlmCall, Observation
from p2w_runtime.domain import RunInfo, episode_stream
from p2w_runtime.domain.trajectory import (
    ActionRecord,
    HistoryAccess,
    ObservationRecord,
    RationaleRecord,
    Trajectory,
    episode_shape,
    first_seq_of_step,
    project,
    project_slice,
)
from p2w_runtime.llm import PriceTable
from p2w_runtime.store import EventStore

HAR_ROWS = 200
"""HAR entries listed on the page; the rest are counted."""
PAGE_STEPS = 100
"""Steps per episode page: a 200,000-step episode is 2,000 pages of about 60 KB each."""


class UnknownEpisode(LookupError):
    pass


def page_of_step(step: int | None) -> int:
    """The page that shows ``step`` (history asked before the first step is on page 1)."""
    return 1 if step is None or step < 1 else (step - 1) // PAGE_STEPS + 1


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
    episode_id: str
    trajectory: Trajectory
    """The projection of what this page shows (the whole episode when it has one page); its final state
    (``trajectory.final_state``) is on the last page, its end (``trajectory.end``) on every page."""
    steps: list[Step]
    har: HarSummary | None
    judgments: list[tuple[JudgmentRecord, bool]]
    """Every judgment, newest first, with whether it judged the episode as it is now."""
    classifications: list[tuple[ClassificationRecord, bool]]
    event_ids: set[str]
    llm_totals: dict[str, Any]
    """Calls, tokens, cost (of the priced calls), unpriced models and latency: of the episode when it has one
    page, else of this page (``totals_of``)."""
    final_same_as_step: int | None = None
    """The step that shows the final state's screenshot already (the page did not change after it)."""
    page: int = 1
    pages: int = 1
    last_step: int = 0
    """The episode's last step (the pages cover 1..``last_step``)."""
    totals_of: str = "episode"
    """``episode`` or ``page``: what ``llm_totals`` add up."""
    truth: dict[str, list[str]] = field(default_factory=dict)
    """Ground-truth values each retrieved entry (``RETRIEVAL_EVENT#RANK``) or memory answer (its event id) states,
    by the classifiers' own targets (``replay.classify.targets``)."""
    truth_targets: list[str] = field(default_factory=list)
    """Every ground-truth value of the task as the classifiers name it (empty without ground truth)."""
    prompt_diff: PromptDiff | None = None
    """Set when the page is asked ``?against=RUN``."""

    page_steps: int = PAGE_STEPS

    def step_page(self, step: int | None) -> int:
        return page_of_step(step)

    @property
    def outcome(self) -> bool | None:
        """The success verdict of the episode's headline judge (``headline_judge`` of its current judgments), None
        when unjudged: what the end badge's colour says (an ``answered`` episode can have failed)."""
        current = {r.judgment.judge_id: r.judgment for r, ok in self.judgments if ok and r.judgment.status == "ok"}
        chosen = current.get(headline_judge(sorted(current)))
        value = chosen.metrics.get("success") if chosen is not None else None
        return None if value is None else value == 1.0


async def episode_page(
    store: EventStore,
    run: RunInfo,
    episode_id: str,
    judgments: Sequence[JudgmentRecord],
    classifications: Sequence[ClassificationRecord],
    *,
    page: int = 1,
    prices: PriceTable | None = None,
) -> EpisodePage:
    """``judgments`` and ``classifications`` are the run's (all of them), read once for all its episode pages;
    ``prices`` prices calls recorded without a cost (default: ``PriceTable.default()``)."""
    stream = episode_stream(run.run_id, episode_id)
    shape = await episode_shape(store, stream)
    if shape is None:
        raise UnknownEpisode(f"run {run.run_id} has no episode {episode_id!r}")
    pages = max(1, -(-shape.last_step // PAGE_STEPS))
    if not 1 <= page <= pages:
        raise BadRequest("No such page", f"?page={page}: episode {episode_id!r} has {pages} page(s) of steps")
    after: datetime | None = None
    if pages == 1:
        events = [shape.started, *await read_range(store, stream, 2, shape.head.last_seq + 1)]
        trajectory = project(events)
    else:
        first, last = (page - 1) * PAGE_STEPS + 1, page * PAGE_STEPS
        lo = 2 if page == 1 else await first_seq_of_step(store, stream, first, 2, shape.tail_from)
        hi = shape.tail_from if page == pages else await first_seq_of_step(store, stream, last + 1, lo, shape.tail_from)
        body = await read_range(store, stream, lo, hi)
        tail = await read_range(store, stream, shape.tail_from, shape.head.last_seq + 1)
        if page == pages:
            trajectory = project_slice(shape.started, body + tail)
        else:
            trajectory = project_slice(shape.started, body)
            trajectory.end = project_slice(shape.started, tail).end if tail else None
            trajectory.hash = shape.head.last_hash
            boundary = await store.read_event(stream, hi)
            after = boundary.decode().recorded_at if boundary is not None else None
        events = [shape.started, *body, *(tail if page == pages else [])]  # the end is shown on the last page
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
    steps = _steps(trajectory, events, prices or PriceTable.default(), after)
    calls = [c for step in steps for c in step.llm_calls]
    totals = {
        "calls": len(calls),
        "tokens": sum(step.tokens for step in steps),
        "cost": sum(step.cost for step in steps),
        "unpriced": sorted({m for step in steps for m in step.unpriced}),
        "latency": sum(step.latency for step in steps),
    }
    ids = {e.event_id for e in events}
    shown = [o for step in steps for o in step.observations if o.screenshot]
    same = None
    if final and final.screenshot and shown and shown[-1].screenshot == final.screenshot:
        last_shown = shown[-1]
        same = last_shown.record.step if last_shown.same_as_step is None else last_shown.same_as_step
    truth, names = _truth_marks(trajectory)
    return EpisodePage(
        run.run_id,
        run.label,
        episode_id,
        trajectory,
        steps,
        har,
        judged[::-1],
        classified[::-1],
        ids,
        totals,
        same,
        page=page,
        pages=pages,
        last_step=shape.last_step,
        totals_of="episode" if pages == 1 else "page",
        truth=truth,
        truth_targets=names,
    )


def _truth_marks(t: Trajectory) -> tuple[dict[str, list[str]], list[str]]:
    """Which retrieved entries and memory answers state a ground-truth value: the classifiers' targets (the
    rubric's website, preferences and location, with the default site lists) searched in the text they search."""
    wanted = targets(t, SiteSettings())
    if not wanted:
        return {}, []
    marks: dict[str, list[str]] = {}
    for access in t.history:
        for retrieval in access.retrievals:
            for hit in retrieval.hits:
                text = entry_text(hit.entry)
                found = [target.name for target in wanted if target.in_text(text) is not None]
                if found:
                    marks[f"{retrieval.event_id}#{hit.rank}"] = found
        for answer in access.answers:
            found = [target.name for target in wanted if target.in_text(answer.text) is not None]
            if found:
                marks[answer.event_id] = found
    return marks, [target.name for target in wanted]


def _steps(t: Trajectory, events: list[Event], prices: PriceTable, after: datetime | None) -> list[Step]:
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

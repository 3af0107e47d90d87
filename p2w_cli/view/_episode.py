"""The episode page's read model: the one projection (``Trajectory``) regrouped by step, a page of steps at a time.

An episode of up to ``PAGE_STEPS`` steps is read whole and projected, as it always was. A longer one is shown
``PAGE_STEPS`` steps a page: only that page's events are read (``_range``: two binary searches over single-row
reads, one ranged read) and projected (``project_slice``), with the episode's start and tail (final state, end),
so a page of a 200,000-step episode costs what a page of a short one does (docs/design/view.md, "Long episodes").
From the same events the page's steps (``_episode_steps.py``) take only what the projection does not keep: an
observation's screenshot and tabs, each LLM call's messages, tokens and latency, each event's time (a step's
duration); the page keeps the ids of its events (which evidence ids link to this page).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from p2w_cli.view._episode_steps import Step, llm_totals, steps_of
from p2w_cli.view._har import HarSummary, har_summary
from p2w_cli.view._problems import BadRequest
from p2w_cli.view._prompt_diff import PromptDiff
from p2w_cli.view._range import read_range
from p2w_cli.view._run_page import headline_judge
from p2w_rt.replay.classify import ClassificationRecord, entry_text, targets
from p2w_rt.replay.judges import JudgmentRecord
from p2w_rt.replay.persona2web import SiteSettings
from p2w_rt.schemas import Event
from p2w_runtime.domain import RunInfo, episode_stream
from p2w_runtime.domain.trajectory import (
    EpisodeShape,
    Trajectory,
    episode_shape,
    first_seq_of_step,
    project,
    project_slice,
)
from p2w_runtime.llm import PriceTable
from p2w_runtime.store import EventStore

PAGE_STEPS = 100
"""Steps per episode page: a 200,000-step episode is 2,000 pages of about 60 KB each."""


class UnknownEpisode(LookupError):
    pass


def page_of_step(step: int | None) -> int:
    """The page that shows ``step`` (history asked before the first step is on page 1)."""
    return 1 if step is None or step < 1 else (step - 1) // PAGE_STEPS + 1


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
    trajectory, events, after = await _read_page(store, stream, shape, page, pages)
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
    steps = steps_of(trajectory, events, prices or PriceTable.default(), after)
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
        llm_totals(steps),
        same,
        page=page,
        pages=pages,
        last_step=shape.last_step,
        totals_of="episode" if pages == 1 else "page",
        truth=truth,
        truth_targets=names,
    )


async def _read_page(
    store: EventStore, stream: str, shape: EpisodeShape, page: int, pages: int
) -> tuple[Trajectory, list[Event], datetime | None]:
    """Page ``page`` of ``pages``: its projection, the events it was projected from, and the time of the first event
    after them (None on the last page). A one-page episode is read whole; a longer one only its page's steps, with
    the episode's tail (its final state and end)."""
    if pages == 1:
        events = [shape.started, *await read_range(store, stream, 2, shape.head.last_seq + 1)]
        return project(events), events, None
    first, last = (page - 1) * PAGE_STEPS + 1, page * PAGE_STEPS
    lo = 2 if page == 1 else await first_seq_of_step(store, stream, first, 2, shape.tail_from)
    hi = shape.tail_from if page == pages else await first_seq_of_step(store, stream, last + 1, lo, shape.tail_from)
    body = await read_range(store, stream, lo, hi)
    tail = await read_range(store, stream, shape.tail_from, shape.head.last_seq + 1)
    if page == pages:  # the end is shown on the last page
        return project_slice(shape.started, body + tail), [shape.started, *body, *tail], None
    trajectory = project_slice(shape.started, body)
    trajectory.end = project_slice(shape.started, tail).end if tail else None
    trajectory.hash = shape.head.last_hash
    boundary = await store.read_event(stream, hi)
    return trajectory, [shape.started, *body], boundary.decode().recorded_at if boundary is not None else None


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

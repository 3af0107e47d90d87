"""A run's first page kept beside the log, so a fresh viewer's first open of a run reads one summary row, not the
run's episodes, judgments, classifications and ``llm.call`` events (docs/design/view.md, "The first open").

The first page is what a run's link opens: the default filter, page 1. Its figures (counts, filter choices, metric
tables, usage totals) are folds of the whole run and its rows need the run's judgments and labels, so building it costs
the run; stored, it costs one row however large the run and the store. It is a read model kept by position, as the run
and episode summaries are (docs/design/summaries.md): the row's ordinal is the log end it was built at, and it is
current while no event of the run's tree (the run's stream and every stream under it: its episodes, judgments,
classifications) lies after that position. When the log has not moved that is known without a read; otherwise the events
after the ordinal are read by position for one of the run's (the gap, never the run; beyond ``GAP`` events the row is
rebuilt instead). A command that appended to the run rebuilds its row as it ends (``_refresh.py``); a row still missing
or stale is rebuilt by the open that finds it so (the whole read, as before) and written back; an open that finds it
current after unrelated appends moves its ordinal to the log end. A run being recorded is not kept (its page changes
with each step), nor is a store that cannot keep summary rows; the price table the usage was priced with is part of the
row, so another ``$P2W_PRICES`` rebuilds it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from pydantic import TypeAdapter, ValidationError

from p2w_cli.view._episode_rows import EpisodeFilter, EpisodeRow
from p2w_cli.view._kept_rows import FIRST_PAGE as MODEL
from p2w_cli.view._kept_rows import write_row
from p2w_cli.view._live import run_live
from p2w_cli.view._run_page import RunPage
from p2w_cli.view._run_read import RunFacets
from p2w_cli.view._usage import EpisodeUsage, RunUsageSummary
from p2w_cli.view._usage_kept import prices_key
from p2w_rt.replay.judges import JudgmentScores, ScoresRecord
from p2w_runtime.domain import EpisodeRef, RunInfo, under
from p2w_runtime.store import EventStore, Summary

GAP = 20_000
"""Events appended after a row beyond which it is rebuilt rather than the events read for one of its run's."""


@dataclass(slots=True)
class _Row:
    """One shown episode: its ``EpisodeRow`` (each judgment as its event id, time and payload) and its usage."""

    ref: EpisodeRef
    index: int
    website: str
    judgments: dict[str, tuple[str, str, JudgmentScores]]
    labels: list[str]
    usage: EpisodeUsage | None


@dataclass(slots=True)
class _Stored:
    """What the first page shows besides the run's own ``RunInfo`` (read from the run summaries on every open)."""

    prices: str
    judge: str
    matched: int
    total: int
    pages: int
    facets: RunFacets
    rows: list[_Row]
    usage: RunUsageSummary | None


@cache
def _adapter() -> TypeAdapter[_Stored]:
    return TypeAdapter(_Stored)


def is_first(wanted: EpisodeFilter, page: int) -> bool:
    return wanted == EpisodeFilter() and page == 1


async def stored_page(store: EventStore, info: RunInfo, end: int) -> RunPage | None:
    """The run's first page from its stored row at log end ``end``, or None when there is none or it is stale."""
    if info.finished is None or await store.summary_mark(MODEL) is None:
        return None
    found = await store.read_summaries(MODEL, group=info.run_id)  # a statement compiled ahead: no SQLAlchemy import
    if not found or found[0].ordinal > end:
        return None
    row = found[0]
    if row.ordinal < end:
        if await _touched(store, info.run_id, row.ordinal, end):
            return None
        await write_row(store, MODEL, Summary(MODEL, info.run_id, info.run_id, end, row.body), end)
    try:
        stored = _adapter().validate_json(row.body)
    except ValidationError:  # a row that no longer reads (cut short, edited by hand) is rebuilt as a stale one is
        return None
    if stored.prices != prices_key():
        return None
    return _page(stored, info, end)


async def keep_page(store: EventStore, page: RunPage, end: int) -> None:
    """Store a first page built from the whole run at log end ``end`` (not a run being recorded)."""
    if page.info.finished is not None and not page.in_flight:
        body = _adapter().dump_json(_stored(page)).decode()
        await write_row(store, MODEL, Summary(MODEL, page.info.run_id, page.info.run_id, end, body), end)


async def _touched(store: EventStore, run_id: str, after: int, end: int) -> bool:
    """Whether an event of the run's tree may lie in ``(after, end]``. The events there are read by position (the
    statement the run summaries use, compiled ahead: a read by stream prefix would build its SQL, importing
    SQLAlchemy on a fresh viewer's first open); past ``GAP`` events the row is rebuilt instead."""
    if end - after > GAP:
        return True
    prefix = under(run_id)
    async for event in store.read_all(after_position=after):
        if event.position is not None and event.position > end:
            break
        if event.stream == run_id or event.stream.startswith(prefix):
            return True
    return False


def _stored(page: RunPage) -> _Stored:
    rows = [
        _Row(
            row.ref,
            row.index,
            row.website,
            {judge: (r.event_id, r.recorded_at, r.judgment) for judge, r in row.judgments.items()},
            row.labels,
            usage,
        )
        for row, usage in zip(page.shown, page.shown_usage, strict=True)
    ]
    return _Stored(
        prices_key(),
        page.filter.judge,
        page.matched,
        page.total,
        page.pages,
        RunFacets(
            page.judges,
            page.versions,
            page.outdated,
            page.levels,
            page.websites,
            page.labels,
            page.metrics,
            page.metrics_by_level,
            page.classifiers,
        ),
        rows,
        page.usage,
    )


def _page(s: _Stored, info: RunInfo, end: int) -> RunPage:
    shown = [
        EpisodeRow(
            row.ref,
            row.index,
            row.ref.finished,
            row.website,
            {judge: ScoresRecord(*record) for judge, record in row.judgments.items()},
            row.labels,
        )
        for row in s.rows
    ]
    return RunPage(
        info=info,
        filter=EpisodeFilter(judge=s.judge),
        matched=s.matched,
        total=s.total,
        judges=s.facets.judges,
        versions=s.facets.versions,
        outdated=s.facets.outdated,
        levels=s.facets.levels,
        websites=s.facets.websites,
        labels=s.facets.labels,
        metrics=s.facets.metrics,
        metrics_by_level=s.facets.metrics_by_level,
        classifiers=s.facets.classifiers,
        page=1,
        pages=s.pages,
        shown=shown,
        usage=s.usage,
        shown_usage=[row.usage for row in s.rows],
        live=run_live(info, end),
        in_flight=[],
        in_flight_usage=[],
    )

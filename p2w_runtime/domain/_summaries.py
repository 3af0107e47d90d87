"""Run and episode summaries: one row per run and per episode attempt, kept beside the log by position.

``list_runs`` and ``episodes_of`` read these rows instead of scanning every run's started and finished events, so
``runs``, ``show RUN``, ``metrics`` and the viewer's run page cost what they show, not what the store holds
(docs/design/summaries.md). The rows are a read model: any reader first folds the summary events appended since
the rows' mark (an index range of the log) into them and moves the mark in the same transaction, so they are
built the first time a store is read (old databases included) and kept current by whoever reads next. They can be
dropped and rebuilt from the log at any time (``rebuild_summaries``), and ``check_summaries`` compares them with a
fold of the whole log (``p2w-rt verify``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import orjson

from p2w_rt.schemas import ChainedEvent, EpisodeFinished, EpisodeStarted, StoredEvent
from p2w_runtime.collector import collector_paused
from p2w_runtime.domain._streams import run_of
from p2w_runtime.domain._summary_rows import EPISODES, MODEL, RUNS, EpisodeSummary, RunSummary, counts
from p2w_runtime.store import LIFECYCLE_TYPES, ReadOnlyStore, Summary

if TYPE_CHECKING:
    from p2w_runtime.store import EventStore

SUMMARY_TYPES = LIFECYCLE_TYPES
"""What the rows fold: a run's and an episode's start and end (what a full ``verify`` hands ``check_summaries``)."""
BY_TYPE_GAP = 20_000
"""Past the mark by more events than this, the events are read by type (the type index); closer, every event after
the mark is read by position (the primary key), which costs only the events appended since."""


@dataclass(frozen=True, slots=True)
class Met:
    """The summary events (``SUMMARY_TYPES``) of positions 1 to ``through``, in log order, as a pass over the whole
    log met them (``verify``'s collected events)."""

    through: int
    events: Sequence[StoredEvent]


@dataclass(slots=True)
class Fold:
    """Summary rows changed by the events after a mark (or every row, folded from the whole log)."""

    episodes: dict[str, EpisodeSummary] = field(default_factory=dict)
    runs: dict[str, RunSummary] = field(default_factory=dict)

    def rows(self) -> list[Summary]:
        return [e.row() for e in self.episodes.values()] + [r.row() for r in self.runs.values()]


async def _fold(store: EventStore, since: int, end: int, *, whole: bool, met: Met | None = None) -> Fold:
    """The rows the summary events in ``(since, end]`` change, started from the stored rows they continue
    (``whole``: nothing is stored, fold the log from its start); ``met``: those a pass from the log's start read."""
    fold = Fold()
    late_ends: list[StoredEvent] = []
    late_runs: list[StoredEvent] = []
    async for stored in _summary_events(store, since, end, met):
        if stored.position is not None and stored.position > end:
            break
        kind = stored.type
        if kind == "episode.started":
            started = stored.decode_payload()
            assert isinstance(started, EpisodeStarted)
            position = stored.position or 0
            fold.episodes[stored.stream] = EpisodeSummary(
                stored.stream, position, started.task_id, started.level, started.scheme
            )
        elif kind == "episode.finished":
            if stored.stream in fold.episodes:
                _finish(fold.episodes, stored)
            else:
                late_ends.append(stored)
        elif kind == "run.started":
            fold.runs[stored.stream] = RunSummary(
                stored.stream, stored.position or 0, ChainedEvent.of(stored), stored.recorded_at
            )
        elif kind == "run.finished":
            if stored.stream in fold.runs:
                fold.runs[stored.stream].finished = ChainedEvent.of(stored)
            else:
                late_runs.append(stored)
    if not whole:
        await _continue_stored(store, fold, late_ends, late_runs)
    return fold


async def _summary_events(store: EventStore, since: int, end: int, met: Met | None) -> AsyncIterator[StoredEvent]:
    """The summary events after ``since`` in log order: what ``met`` holds when it starts where they do, then the
    log's from where it ends."""
    if met is not None and since == 0:
        for stored in met.events:
            yield stored
        since = met.through
    types = SUMMARY_TYPES if end - since > BY_TYPE_GAP else None  # a first build of a small store by position too
    if since < end:
        async for stored in store.read_all(after_position=since, types=types):
            yield stored


def _finish(episodes: dict[str, EpisodeSummary], stored: StoredEvent) -> None:
    """The first ``episode.finished`` of an attempt is its end (a stream has one; an imported log is not trusted)."""
    current = episodes[stored.stream]
    if current.finished is None:
        finished = stored.decode_payload()  # upcast like every reader of it
        assert isinstance(finished, EpisodeFinished)
        episodes[stored.stream] = replace(current, finished=ChainedEvent.of(stored), end_reason=finished.end_reason)


async def _continue_stored(
    store: EventStore, fold: Fold, late_ends: Sequence[StoredEvent], late_runs: Sequence[StoredEvent]
) -> None:
    """Fold events whose run or attempt started before the mark into their stored rows, and count the attempts
    of every run touched again (a run's counts come from all its attempts, stored and new)."""
    if late_ends:
        for row in await store.read_summaries(EPISODES, keys=[e.stream for e in late_ends]):
            fold.episodes[row.key] = EpisodeSummary.of(row)
        for stored in late_ends:
            if stored.stream in fold.episodes:
                _finish(fold.episodes, stored)
    touched = {run_of(stream) for stream in fold.episodes} | {e.stream for e in late_runs}
    missing = touched - fold.runs.keys()
    if missing:
        for row in await store.read_summaries(RUNS, keys=sorted(missing)):
            fold.runs[row.key] = RunSummary.of(row)
    for stored in late_runs:
        if stored.stream in fold.runs:
            fold.runs[stored.stream].finished = ChainedEvent.of(stored)
    for run_id in touched & fold.runs.keys():
        attempts = {row.key: EpisodeSummary.of(row) for row in await store.read_summaries(EPISODES, group=run_id)}
        attempts.update((s, e) for s, e in fold.episodes.items() if run_of(s) == run_id)
        fold.runs[run_id].episodes, fold.runs[run_id].attempts = counts(attempts.values())


def _count_all(fold: Fold) -> None:
    by_run: dict[str, list[EpisodeSummary]] = {}
    for stream, attempt in fold.episodes.items():
        by_run.setdefault(run_of(stream), []).append(attempt)
    for run_id, run in fold.runs.items():
        run.episodes, run.attempts = counts(by_run.get(run_id, ()))


@dataclass(frozen=True, slots=True)
class Current:
    """What a reader sees: the stored rows (when the store keeps them) overlaid with ``fold``'s."""

    stored: bool
    fold: Fold


async def bring_up_to_date(store: EventStore) -> Current:
    """Fold the summary events appended since the rows' mark into them and store them with the new mark.

    When another process moved the mark first, or the store is read-only, the rows folded here still answer
    this reader (overlaid on the stored ones); a store that cannot keep rows at all is folded whole each time.
    """
    mark = await store.summary_mark(MODEL)
    end = await store.log_end()
    if mark is not None and mark > end:
        mark = await _log_shrank(store)
    if mark is not None and mark >= end:
        return Current(True, Fold())
    whole = not mark
    fold = await _fold(store, mark or 0, end, whole=whole)
    if whole:
        _count_all(fold)
    if mark is None:
        return Current(False, fold)
    try:
        if not await store.write_summaries(MODEL, fold.rows(), since=mark, until=end):
            return Current(True, Fold())  # another reader stored them first, as far as this one read or further
    except ReadOnlyStore:
        pass
    return Current(True, fold)


async def _log_shrank(store: EventStore) -> int | None:
    """The log ends before the rows' mark: events were deleted behind the store's back (the triggers dropped; what
    ``verify``'s seals are for). The rows may name what is gone, so they are dropped and built again from the log
    as it is (a read-only store folds it in memory): the listings show what the log holds, and ``verify`` judges
    the deletion by the seals."""
    try:
        await store.clear_summaries(MODEL, [RUNS, EPISODES])
    except ReadOnlyStore:
        return None
    return 0


async def episode_summaries(store: EventStore, run_id: str | None = None) -> list[EpisodeSummary]:
    """Every attempt (of run ``run_id``, or of every run) in start order, current to the log's end."""
    current = await bring_up_to_date(store)
    rows: dict[str, EpisodeSummary] = {}
    if current.stored:
        with collector_paused():  # every row is kept, as ``DerivedStream.read``'s results are
            found = await store.read_summaries(EPISODES, group=run_id)
            rows = {row.key: EpisodeSummary.of(row) for row in found}
    rows.update((s, e) for s, e in current.fold.episodes.items() if run_id is None or run_of(s) == run_id)
    return sorted(rows.values(), key=lambda e: e.position)


async def run_summaries(store: EventStore) -> list[RunSummary]:
    """Every run in start order, current to the log's end."""
    current = await bring_up_to_date(store)
    rows: dict[str, RunSummary] = {}
    if current.stored:
        rows = {row.key: RunSummary.of(row) for row in await store.read_summaries(RUNS)}
    rows.update(current.fold.runs)
    return sorted(rows.values(), key=lambda r: r.position)


async def rebuild_summaries(store: EventStore) -> int:
    """Drop the summary rows and build them again from the whole log; returns how many rows were written."""
    await store.clear_summaries(MODEL, [RUNS, EPISODES])
    current = await bring_up_to_date(store)
    return len(current.fold.rows())


async def check_summaries(
    store: EventStore, run_id: str | None = None, met: Met | None = None
) -> list[tuple[str, str]]:
    """Where the stored summary rows (of run ``run_id``, or all) disagree with a fold of the whole log: (the run
    or episode stream, what is wrong) for each row changed, missing or naming nothing; none when they agree.

    The stored rows are brought up to date first, as any reader would, so what is checked is what readers see.
    ``met``: the summary events a full ``verify`` read, so that only the log after them is read here.
    """
    if await store.summary_mark(MODEL) is None:
        return []  # nothing stored to disagree with (a read-only file from before summaries)
    await bring_up_to_date(store)
    mark = await store.summary_mark(MODEL) or 0
    truth = await _fold(store, 0, mark, whole=True, met=met)
    _count_all(truth)
    problems: list[tuple[str, str]] = []
    expected = {
        EPISODES: {e.stream: e.row() for e in truth.episodes.values()},
        RUNS: {r.run_id: r.row() for r in truth.runs.values()},
    }
    for kind, want_rows in expected.items():
        name = "episode" if kind == EPISODES else "run"
        stored = {row.key: row for row in await store.read_summaries(kind, group=run_id if kind == EPISODES else None)}
        keys = want_rows.keys() | stored.keys()
        for key in sorted(k for k in keys if run_id is None or (run_of(k) if kind == EPISODES else k) == run_id):
            want, have = want_rows.get(key), stored.get(key)
            if have is None:
                problems.append((key, f"the {name} summary is missing (p2w-rt verify --rebuild-summaries)"))
            elif want is None:
                problems.append((key, f"a {name} summary names nothing in the log (p2w-rt verify --rebuild-summaries)"))
            elif (_body(want), want.ordinal, want.group) != (_body(have), have.ordinal, have.group):
                problems.append((key, f"the {name} summary disagrees with the log (p2w-rt verify --rebuild-summaries)"))
    return problems


def _body(row: Summary) -> Any:
    return orjson.loads(row.body)

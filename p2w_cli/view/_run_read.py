"""What the run page and its episodes need of one run, read once from the store's public read functions
(episodes, current judgments and labels, the episodes in flight), and the reads kept while the store is unchanged
(``RunCache``). Nothing here appends: the viewer never judges or classifies behind the user's back."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from p2w_cli.view._episode_rows import EpisodeFilter, EpisodeRow
from p2w_rt.replay.classify import ClassificationRecord, read_classifications
from p2w_rt.replay.derived import latest_current
from p2w_rt.replay.judges import JudgmentRecord, current_scores, read_judgments
from p2w_rt.replay.matching import host_of
from p2w_rt.replay.metrics import EpisodeScore, MetricRow, aggregate
from p2w_runtime.domain import EpisodeRef, RunInfo, counted, episodes_of
from p2w_runtime.domain.trajectory import episode_shape
from p2w_runtime.store import EventStore


@dataclass(frozen=True, slots=True)
class InFlight:
    """An attempt of a run being recorded with no ``episode.finished`` yet, the latest of its task: what the run
    page shows of it while it runs (its steps so far; its tokens are in the run's usage, ``in_flight``)."""

    ref: EpisodeRef
    steps: int
    """The step of its last event with one: how far the agent got."""
    last_event: str
    """The type of its last event (what it is doing: an ``llm.call``, an ``observation``...)."""
    last_at: str
    """When that event was recorded."""

    @property
    def episode_id(self) -> str:
        return self.ref.episode_id


@dataclass(slots=True)
class RunRead:
    """What the run page and its episodes need of one run, read once: episodes, current judgments and labels."""

    info: RunInfo
    rows: dict[str, EpisodeRow]
    classifications: list[ClassificationRecord]
    """Every classification of the run, stale ones too."""
    scores: list[EpisodeScore]
    judgments: list[JudgmentRecord] | None = None
    """Every judgment of the run (stale ones too), read when an episode page first needs them."""
    facets: RunFacets | None = None
    """What every page of the run shows whatever its filter, computed by its first page (``run_page``)."""
    kept: dict[EpisodeFilter, list[EpisodeRow]] = field(default_factory=dict)
    """The rows each filter asked so far keeps: the next page of a filter is a slice."""
    in_flight: list[InFlight] = field(default_factory=list)
    end: int | None = None
    """The log end this read was made at (``RunCache``): the live token of the page it renders."""


@dataclass(frozen=True, slots=True)
class RunFacets:
    """A run's filter choices and metric tables: the same for every page of it, so built once per ``RunRead``
    (a warm page then costs its 100 rows, not the run's 10,000: docs/design/summaries.md)."""

    judges: list[str]
    levels: list[int]
    websites: list[str]
    labels: list[str]
    metrics: list[MetricRow]
    metrics_by_level: list[MetricRow]
    classifiers: list[str]

    @classmethod
    def of(cls, read: RunRead) -> RunFacets:
        rows = read.rows.values()
        return cls(
            judges=sorted({j for row in rows for j in row.judgments}),
            levels=sorted({r.ref.level for r in rows if r.ref.level is not None}),
            websites=sorted({r.website for r in rows if r.website}),
            labels=sorted({label for r in rows for label in r.labels}),
            metrics=aggregate(read.scores, by=("judge",)) if read.scores else [],
            metrics_by_level=aggregate(read.scores, by=("judge", "level")) if read.scores else [],
            classifiers=sorted({r.classification.classifier_id for r in read.classifications}),
        )


async def read_run(store: EventStore, info: RunInfo) -> RunRead:
    """One scan per event kind; the scores are built from the same judgments rather than read again by
    ``collect_scores``, which halves the decoding a 1,000-episode run page costs (docs/design/view.md)."""
    attempts = await episodes_of(store, info.run_id, every_attempt=True)
    rows = {ref.stream: _row(ref, i) for i, ref in enumerate(counted(attempts))}
    for (stream, judge), record in (await current_scores(store, info.run_id)).items():
        if stream in rows:
            rows[stream].judgments[judge] = record
    classified = await read_classifications(store, info.run_id)
    for labelled in current_classifications(classified, rows):
        row = rows[labelled.classification.episode_stream]
        row.labels.extend(x.label for x in labelled.classification.labels if x.label not in row.labels)
    read = RunRead(info, rows, classified, _scores(info, rows.values()))
    if info.finished is None:
        read.in_flight = await in_flight(store, attempts)
    return read


async def in_flight(store: EventStore, attempts: Sequence[EpisodeRef]) -> list[InFlight]:
    """The attempts still being recorded: unfinished, and the latest attempt of their task (an unfinished attempt
    a later one replaced was left by a recorder that died). Each costs the few single-row reads of its tail."""
    latest = {ref.task_id: ref for ref in attempts}
    out = []
    for ref in attempts:
        if ref.finished is None and latest[ref.task_id] is ref:
            shape = await episode_shape(store, ref.stream)
            if shape is not None:
                last = await store.read_event(ref.stream, shape.head.last_seq)
                at = last.recorded_at if last is not None else ""
                out.append(InFlight(ref, shape.last_step, shape.head.last_type, at))
    return out


def _row(ref: EpisodeRef, index: int) -> EpisodeRow:
    url = ref.finished.final_url if ref.finished else None
    return EpisodeRow(ref, index, ref.finished, host_of(url) if url else "")


def _scores(info: RunInfo, rows: Iterable[EpisodeRow]) -> list[EpisodeScore]:
    """``replay.metrics.collect_scores``'s rows from judgments already read: one per (episode, judge), with
    ``metrics=None`` where that judge has not judged the episode."""
    s = info.started
    rows = list(rows)
    judges = sorted({judge for row in rows for judge in row.judgments})
    return [
        EpisodeScore(
            info.run_id,
            info.label,
            s.agent,
            s.backbone_model,
            row.ref.scheme or s.scheme or "-",
            row.ref.level,
            row.ref.task_id,
            judge,
            dict(row.judgments[judge].judgment.metrics) if judge in row.judgments else None,
        )
        for row in rows
        for judge in judges
    ]


def current_classifications(
    records: Sequence[ClassificationRecord], rows: dict[str, EpisodeRow]
) -> list[ClassificationRecord]:
    """The latest successful classification per (episode, classifier) of the episode as it is now."""
    return list(latest_current(records, {stream: row.ref.hash for stream, row in rows.items()}).values())


class RunCache:
    """``RunRead``s kept while the store is unchanged: ``end`` is the log's last position when the caller found
    the run (``RunIndex``); the log is append-only, so a page after a new append reads again, any other page is
    served from memory. The least recently read runs go first beyond ``size``."""

    def __init__(self, size: int = 16) -> None:
        self.size = size
        self.entries: dict[str, tuple[int, RunRead]] = {}

    def holds(self, run_id: str, end: int) -> bool:
        """Whether the run's read at log end ``end`` is kept."""
        cached = self.entries.get(run_id)
        return cached is not None and cached[0] == end

    async def get(self, store: EventStore, info: RunInfo, end: int) -> RunRead:
        cached = self.entries.pop(info.run_id, None)
        read = cached[1] if cached is not None and cached[0] == end else await read_run(store, info)
        read.end = end
        self.entries[info.run_id] = (end, read)
        while len(self.entries) > self.size:
            self.entries.pop(next(iter(self.entries)))
        return read

    async def judgments(self, store: EventStore, info: RunInfo, end: int) -> list[JudgmentRecord]:
        read = await self.get(store, info, end)
        if read.judgments is None:
            read.judgments = await read_judgments(store, info.run_id)
        return read.judgments

"""What the run page and its episodes need of one run, read once from the store's public read functions
(episodes, current judgments and labels, the episodes in flight; ``_run_cache.py`` keeps the reads). Nothing here
appends: the viewer never judges or classifies behind the user's back.

A judge's figures are those of one version of it, by ``metrics``' rule and functions (``replay.metrics``: the newest
version among the run's current judgments); an episode judged only by another version shows as unjudged by it, so two
versions of one judge are never averaged as one (docs/design/view.md, "One version of each judge")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from p2w_cli.view._episode_rows import EpisodeFilter, EpisodeRow
from p2w_rt.replay.classify import ClassificationRecord, LabelsRecord, read_classifications, read_labels
from p2w_rt.replay.derived import DerivedRecord, current_of, latest_current
from p2w_rt.replay.judges import JudgmentRecord, ScoresRecord, read_scores
from p2w_rt.replay.matching import host_of
from p2w_rt.replay.metrics import (
    EpisodeScore,
    MetricRow,
    Outdated,
    Versions,
    aggregate,
    newest_by_judge,
    other_versions,
    outdated_of,
    versions_of,
)
from p2w_runtime.collector import collector_paused
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
    labels: list[LabelsRecord]
    """Every classification of the run as its labels' names, stale ones too."""
    scores: list[EpisodeScore] = field(default_factory=list)
    versions: Versions = field(default_factory=dict)
    """Every current judgment of the shown episodes, each version of a judge apart (``score_rows``)."""
    version_of: dict[str, str] = field(default_factory=dict)
    """Each judge's version the run's figures and rows are from: the newest in ``versions``."""
    judgments: list[JudgmentRecord] | None = None
    """Every judgment of the run (stale ones too), read when an episode page first needs them."""
    classifications: list[ClassificationRecord] | None = None
    """Every classification of the run whole (stale ones too), read when a page first shows their explanations."""
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
    versions: dict[str, str]
    """Each judge's version its figures are from (``RunRead.version_of``)."""
    outdated: list[Outdated]
    """Episodes judged by a judge only at other versions, left out of its figures: the page says how to judge them."""
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
            judges=sorted(read.version_of),
            versions=dict(sorted(read.version_of.items())),
            outdated=outdated_of(read.scores),
            levels=sorted({r.ref.level for r in rows if r.ref.level is not None}),
            websites=sorted({r.website for r in rows if r.website}),
            labels=sorted({label for r in rows for label in r.labels}),
            metrics=aggregate(read.scores, by=("judge",)) if read.scores else [],
            metrics_by_level=aggregate(read.scores, by=("judge", "level")) if read.scores else [],
            classifiers=sorted({r.classification.classifier_id for r in read.labels}),
        )


async def read_run(store: EventStore, info: RunInfo) -> RunRead:
    """One scan per event kind, each read as the fields a row shows (scores, label names); the scores are built from
    the same judgments rather than read again by ``collect_scores``, and what is current is judged by the episodes'
    own hashes rather than by a listing of the run's streams (docs/design/view.md).

    The collector is paused meanwhile: everything made here is kept (the viewer's ``RunCache``), so the collections
    its allocations would set off only rescan it (docs/design/view.md, round 14)."""
    with collector_paused():
        attempts = await episodes_of(store, info.run_id, every_attempt=True)
        rows = {ref.stream: _row(ref, i) for i, ref in enumerate(counted(attempts))}
        labels = await read_labels(store, info.run_id)
        label_rows(rows, labels)
        read = RunRead(info, rows, labels)
        score_rows(read, await read_scores(store, info.run_id))
    if info.finished is None:
        read.in_flight = await in_flight(store, attempts)
    return read


def score_rows(read: RunRead, records: Sequence[ScoresRecord]) -> None:
    """Add ``records`` (oldest first, later than those already added) to the read's current judgments, then give
    each row, per judge, its latest current judgment at the judge's newest version: a newer version appended makes
    the rows judged only by older ones unjudged by that judge. The read's scores follow."""
    heads = {stream: row.ref.hash for stream, row in read.rows.items()}
    for key, versions in versions_of(current_of(records, heads)).items():
        read.versions.setdefault(key, {}).update(versions)
    read.version_of = newest_by_judge([read.versions])
    for (stream, judge), versions in read.versions.items():
        record = versions.get(read.version_of[judge])
        if record is None:
            read.rows[stream].judgments.pop(judge, None)
        else:
            read.rows[stream].judgments[judge] = record
    read.scores = episode_scores(read)


def label_rows(rows: dict[str, EpisodeRow], labels: Sequence[LabelsRecord]) -> None:
    """Each row's labels from its episode's every classification in ``labels`` (oldest first): those of the latest
    current one per classifier, in the order the classifiers first labelled it."""
    for labelled in current_results(labels, rows):
        row = rows[labelled.classification.episode_stream]
        row.labels.extend(x.label for x in labelled.classification.labels if x.label not in row.labels)


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


def episode_scores(read: RunRead) -> list[EpisodeScore]:
    """``replay.metrics.collect_scores``'s rows from judgments already read: one per (episode, judge) at the judge's
    version, with ``metrics=None`` where that version has not judged the episode (and the versions that did)."""
    info, s = read.info, read.info.started
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
            version,
            other_versions(read.versions.get((row.ref.stream, judge), {}), version),
        )
        for row in read.rows.values()
        for judge, version in sorted(read.version_of.items())
    ]


R = TypeVar("R", bound=DerivedRecord[Any])


def current_results(records: Sequence[R], rows: dict[str, EpisodeRow]) -> list[R]:
    """The latest successful result per (episode, producer) of the shown episodes as they are now."""
    return list(latest_current(records, {stream: row.ref.hash for stream, row in rows.items()}).values())


async def classifications_of(store: EventStore, read: RunRead) -> list[ClassificationRecord]:
    """``read.classifications``, read on first use."""
    if read.classifications is None:
        read.classifications = await read_classifications(store, read.info.run_id)
    return read.classifications

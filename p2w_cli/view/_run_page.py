"""The runs page's rows and a run page: the headline judge, the rows a filter keeps in the order asked, a page of
them. Built from a ``RunRead``; the store is not read here."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from p2w_cli.view._episode_rows import EpisodeFilter, EpisodeRow
from p2w_cli.view._live import RunLive, run_live
from p2w_cli.view._order import ordered
from p2w_cli.view._problems import BadRequest, known
from p2w_cli.view._run_read import InFlight, RunFacets, RunRead
from p2w_cli.view._usage import EpisodeUsage, RunUsage, RunUsageSummary
from p2w_rt.replay.agreement import HUMAN_PREFIX
from p2w_rt.replay.diff import DEFAULT_JUDGE
from p2w_rt.replay.metrics import MetricRow, judge_label
from p2w_runtime.domain import RunInfo

PAGE_SIZE = 100
"""Episodes per run page: a 1,000-episode run renders in ten pages."""
KEPT_FILTERS = 16
"""Filters of a run whose rows a ``RunRead`` keeps (the oldest asked goes first): a viewer open for days is not a
list per URL ever typed."""


@dataclass(frozen=True, slots=True)
class RunRow:
    """One line of the runs page."""

    info: RunInfo
    metrics: list[MetricRow]
    """One row per judge that judged the run (current judgments only, each at one version, named as ``metrics``
    names it: ``rubric-rules@5``), the headline judge's first."""
    headline: str = ""
    """The judge whose figures head the run (``headline_judge``); empty when none judged it."""
    versions: dict[str, str] = field(default_factory=dict)
    """Each judge's version its row is from."""

    def judge_id(self, row: MetricRow) -> str:
        """The judge of one of ``metrics`` (its column names it with its version): what ``?judge=`` takes."""
        return id_of(row, self.versions)

    @property
    def cost(self) -> float | None:
        return self.info.finished.cost_usd if self.info.finished else None

    @property
    def shown(self) -> list[MetricRow | None]:
        """The rows the runs page shows: the headline judge's (None: it did not judge this run), then the others."""
        if not self.headline:
            return [None]
        first = self.metrics[0] if self.metrics and self.judge_id(self.metrics[0]) == self.headline else None
        return [first, *(m for m in self.metrics if m is not first)]


def headline_judge(judges: Sequence[str], chosen: str = "") -> str:
    """The judge a run's figures are headed by: the one chosen (``?judge=``), else the default judge
    (``rubric-rules``) when it judged the run, else the first judge that is not a person: a few human labels are a
    sample to check judges with, not the run's score. Empty when nothing judged the run."""
    if chosen:
        return chosen
    if DEFAULT_JUDGE in judges:
        return DEFAULT_JUDGE
    return next((j for j in judges if not j.startswith(HUMAN_PREFIX)), judges[0] if judges else "")


def id_of(row: MetricRow, versions: dict[str, str]) -> str:
    """The judge whose figures a metric row holds (its judge column names it with its version, ``rubric-rules@5``),
    given each judge's version."""
    named = str(dict(row.group).get("judge", ""))
    return next((judge for judge, v in versions.items() if judge_label(judge, v) == named), named)


def run_row(read: RunRead, judge: str = "") -> RunRow:
    read.facets = read.facets or RunFacets.of(read)
    return facets_row(read.info, read.facets, judge)


def facets_row(info: RunInfo, facets: RunFacets, judge: str = "") -> RunRow:
    """The runs page's line of a run from its facets: a run's first page (``RunPage``) carries them, so a stored
    first page makes the line without reading the run."""
    headline = headline_judge(facets.judges, judge)
    metrics = sorted(facets.metrics, key=lambda row: id_of(row, facets.versions) != headline)
    return RunRow(info, metrics, headline, facets.versions)


@dataclass(frozen=True, slots=True)
class RunPage(RunFacets):
    """A page of a run's episodes: the run's facets (the same on every page), then the rows the filter keeps here."""

    info: RunInfo
    filter: EpisodeFilter
    """The filter applied (its judge, when none was asked for, the run's ``headline_judge``)."""
    matched: int
    """Episodes the filter keeps; the page shows ``shown`` of them."""
    total: int
    page: int = 1
    pages: int = 1
    shown: list[EpisodeRow] = field(default_factory=list)
    usage: RunUsageSummary | None = None
    """The run's time, tokens and cost (the per-episode series: ``/api/run/RUN/usage``)."""
    shown_usage: list[EpisodeUsage | None] = field(default_factory=list)
    """The usage of each ``shown`` episode, in order."""
    live: RunLive | None = None
    in_flight: list[InFlight] = field(default_factory=list)
    """Episodes being recorded (no ``episode.finished`` yet) while the run records, in start order."""
    in_flight_usage: list[EpisodeUsage | None] = field(default_factory=list)
    """Their tokens and cost so far, in the same order."""


def run_page(read: RunRead, wanted: EpisodeFilter, page: int, per_page: int, usage: RunUsage | None = None) -> RunPage:
    facets = read.facets = read.facets or RunFacets.of(read)
    judges, levels, websites, labels = facets.judges, facets.levels, facets.websites, facets.labels
    _check(wanted, read.info.label, {"level": levels, "website": websites, "label": labels, "judge": judges})
    if not wanted.judge and judges:
        wanted = replace(wanted, judge=headline_judge(judges))
    by_stream = usage.by_stream() if usage is not None else {}
    kept = read.kept.get(wanted)  # a read is of one log end, and so is its usage: the order is kept with it
    if kept is None:
        if len(read.kept) >= KEPT_FILTERS:
            read.kept.pop(next(iter(read.kept)))
        rows = [row for row in read.rows.values() if wanted.keeps(row)]
        kept = read.kept[wanted] = ordered(rows, wanted.sort, wanted.descending, wanted.judge, by_stream)
    pages = max(1, -(-len(kept) // per_page))
    if not 1 <= page <= pages:
        raise BadRequest("Bad filter", f"?page={page}: run {read.info.label!r} has {pages} page(s) of episodes here")
    shown = kept[(page - 1) * per_page : page * per_page]
    return RunPage(
        info=read.info,
        filter=wanted,
        matched=len(kept),
        total=len(read.rows),
        judges=judges,
        versions=facets.versions,
        outdated=facets.outdated,
        levels=levels,
        websites=websites,
        labels=labels,
        metrics=facets.metrics,
        metrics_by_level=facets.metrics_by_level,
        classifiers=facets.classifiers,
        page=page,
        pages=pages,
        shown=shown,
        usage=usage.summary if usage is not None else None,
        shown_usage=[by_stream.get(row.ref.stream) for row in shown],
        live=run_live(read.info, read.end),
        in_flight=read.in_flight,
        in_flight_usage=[usage.in_flight.get(f.ref.stream) if usage is not None else None for f in read.in_flight],
    )


def _check(wanted: EpisodeFilter, run: str, present: dict[str, Sequence[object]]) -> None:
    """Each filter value names something of the run: a label or website it never shows would match nothing and
    read as "no such failure"."""
    for name, values in present.items():
        value = getattr(wanted, name)
        if value not in (None, "") and value not in values:
            raise BadRequest("Bad filter", f"?{name}={value!r}: run {run!r} has none; known: {known(values)}")

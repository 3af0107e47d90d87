"""The read models behind the viewer's pages, built only from the public read functions of the store,
trajectory, judging, classification and metrics packages. Nothing here appends: the viewer never
judges or classifies behind the user's back, it shows what the store holds."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace

from p2w_cli.view._order import ordered
from p2w_cli.view._problems import BadRequest, known
from p2w_cli.view._usage import EpisodeUsage, RunUsage, RunUsageSummary
from p2w_rt.replay.agreement import HUMAN_PREFIX
from p2w_rt.replay.classify import ClassificationRecord, read_classifications
from p2w_rt.replay.derived import latest_current
from p2w_rt.replay.diff import DEFAULT_JUDGE
from p2w_rt.replay.judges import JudgmentRecord, current_judgments, read_judgments
from p2w_rt.replay.matching import host_of
from p2w_rt.replay.metrics import EpisodeScore, MetricRow, aggregate
from p2w_rt.schemas import EpisodeFinished
from p2w_runtime.domain import EpisodeRef, RunInfo, counted, episodes_of
from p2w_runtime.domain.trajectory import episode_shape
from p2w_runtime.store import EventStore

PAGE_SIZE = 100
"""Episodes per run page: a 1,000-episode run renders in ten pages."""
SUCCESS_VALUES = ("", "yes", "no", "unjudged")
KEPT_FILTERS = 16
"""Filters of a run whose rows a ``RunRead`` keeps (the oldest asked goes first): a viewer open for days is not a
list per URL ever typed."""


@dataclass(frozen=True, slots=True)
class RunRow:
    """One line of the runs page."""

    info: RunInfo
    metrics: list[MetricRow]
    """One row per judge that judged the run (current judgments only), the headline judge's first."""
    headline: str = ""
    """The judge whose figures head the run (``headline_judge``); empty when none judged it."""

    @property
    def cost(self) -> float | None:
        return self.info.finished.cost_usd if self.info.finished else None

    @property
    def shown(self) -> list[MetricRow | None]:
        """The rows the runs page shows: the headline judge's (None: it did not judge this run), then the others."""
        if not self.headline:
            return [None]
        first = self.metrics[0] if self.metrics and judge_of(self.metrics[0]) == self.headline else None
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


def judge_of(row: MetricRow) -> str:
    return str(dict(row.group).get("judge", ""))


def run_row(read: RunRead, judge: str = "") -> RunRow:
    read.facets = read.facets or RunFacets.of(read)
    headline = headline_judge(read.facets.judges, judge)
    metrics = sorted(read.facets.metrics, key=lambda row: judge_of(row) != headline)
    return RunRow(read.info, metrics, headline)


@dataclass(slots=True)
class EpisodeRow:
    """One episode on a run page: where it ended, its current judgments and error labels."""

    ref: EpisodeRef
    index: int
    finished: EpisodeFinished | None
    website: str = ""
    """The host the episode ended on."""
    judgments: dict[str, JudgmentRecord] = field(default_factory=dict)
    labels: list[str] = field(default_factory=list)

    @property
    def episode_id(self) -> str:
        return self.ref.episode_id

    def success(self, judge: str | None) -> bool | None:
        record = self.judgments.get(judge or "")
        if record is None or "success" not in record.judgment.metrics:
            return None
        return record.judgment.metrics["success"] == 1.0


@dataclass(frozen=True, slots=True)
class EpisodeFilter:
    level: int | None = None
    website: str = ""
    label: str = ""
    success: str = ""
    """``yes``, ``no``, ``unjudged`` or empty (any), by ``judge``."""
    judge: str = ""
    end: str = ""
    """An end reason, ``unfinished``, or empty (any)."""
    sort: str = ""
    """A key of ``SORT_KEYS`` (by ``judge`` for a metric), or empty: recording order."""
    descending: bool = False

    def keeps(self, row: EpisodeRow) -> bool:
        if self.level is not None and row.ref.level != self.level:
            return False
        if self.website and row.website != self.website:
            return False
        if self.label and self.label not in row.labels:
            return False
        if self.end and (row.finished.end_reason if row.finished else "unfinished") != self.end:
            return False
        if self.success:
            won = row.success(self.judge)
            wanted = {"yes": True, "no": False, "unjudged": None}.get(self.success, won)
            return won is wanted
        return True


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


@dataclass(frozen=True, slots=True)
class RunLive:
    """A run's state as its page polls it: while ``recording`` (no ``run.finished`` yet) the page reloads when
    ``token`` changes (anything appended to the store, so an episode in flight shows its steps as they come; the
    run finished) and stops polling once it finishes."""

    run_id: str
    status: str
    """``recording`` or how the run finished (``completed``, ``interrupted``, ``failed``)."""
    recording: bool
    episodes: int
    attempts: int
    token: str


def run_live(info: RunInfo, end: int | None = None) -> RunLive:
    """``end``: the log's last position the page was read at; while the run records it is part of the token, so
    the next step of an episode in flight reloads the run page (the runs page, which shows no steps, leaves it out).
    """
    status = info.finished.status if info.finished is not None else "recording"
    token = f"{info.attempts}.{info.episodes}.{status}"
    if info.finished is None and end is not None:
        token += f".{end}"
    return RunLive(info.run_id, status, info.finished is None, info.episodes, info.attempts, token)


@dataclass(frozen=True, slots=True)
class RunsLive:
    """The runs list's state as its page polls it, the run page's ``RunLive`` for every listed run: while any is
    ``recording`` the page reloads when ``token`` changes (a run started, an episode of one started or finished, a
    run finished) and stops polling once none is recording."""

    recording: list[str]
    """The ids of the runs without ``run.finished``."""
    token: str


def runs_live(infos: Sequence[RunInfo]) -> RunsLive:
    lives = [run_live(info) for info in infos]
    token = " ".join(f"{live.run_id}:{live.token}" for live in lives)
    return RunsLive([live.run_id for live in lives if live.recording], token)


@dataclass(slots=True)
class RunPage:
    info: RunInfo
    filter: EpisodeFilter
    """The filter applied (its judge, when none was asked for, the run's ``headline_judge``)."""
    matched: int
    """Episodes the filter keeps; the page shows ``shown`` of them."""
    total: int
    judges: list[str]
    levels: list[int]
    websites: list[str]
    labels: list[str]
    metrics: list[MetricRow]
    metrics_by_level: list[MetricRow]
    classifiers: list[str]
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
    for (stream, judge), record in (await current_judgments(store, info.run_id)).items():
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

"""Search across runs (``/search?q=`` and ``/api/search``): the counted episodes of every run whose task id, query
text, final answer or current error labels hold every word asked, case-insensitively (``casefold``, so ``STRASSE``
finds ``Straße``), with where each episode ended and how the run's judge scored it.

It reads what the run pages read (``RunRead``: episodes, judgments, labels, from the same cache) and, once per log
end, each run's query texts (``episode.started``); nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from p2w_cli.view._episode_rows import EpisodeRow
from p2w_cli.view._problems import BadRequest, known
from p2w_cli.view._run_page import headline_judge
from p2w_cli.view._run_read import RunRead
from p2w_rt.replay.metrics import episode_figures
from p2w_rt.schemas import EpisodeStarted
from p2w_runtime.domain import under
from p2w_runtime.store import EventStore

SEARCH_FIELDS = ("task", "query", "answer", "label")
"""What ``?in=`` can restrict the search to (every field when absent)."""


@dataclass(frozen=True, slots=True)
class SearchQuery:
    text: str
    fields: tuple[str, ...] = SEARCH_FIELDS
    judge: str = ""
    """The judge whose scores the results show; empty: each run's headline judge (as its run page)."""

    @property
    def words(self) -> list[str]:
        return self.text.casefold().split()


@dataclass(slots=True)
class SearchHit:
    """One episode found: enough to list it and link its page."""

    run_id: str
    run_label: str
    episode_id: str
    task_id: str
    level: int | None
    end_reason: str
    """``unfinished`` while it has no ``episode.finished``."""
    steps: int | None
    query: str
    answer: str | None
    labels: list[str]
    judge: str | None
    judge_version: str | None
    """The version of ``judge`` the scores are from (the run's, as its run page shows them)."""
    scores: dict[str, float]
    """The judge's figures (``p_web``, ``p_pref``, ``p_avg``, ``intent``, ``success_rate``) it has."""
    matched: list[str]
    """The fields that hold a word of the search."""


@dataclass(slots=True)
class SearchPage:
    query: SearchQuery
    matched: int
    episodes: int
    """Episodes searched (every run's counted ones)."""
    runs: int
    judges: list[str]
    """Every judge that judged a run of the store."""
    page: int = 1
    pages: int = 1
    hits: list[SearchHit] = field(default_factory=list)


async def query_texts(store: EventStore, run_id: str) -> dict[str, str]:
    """Each episode stream of the run with its query text."""
    texts: dict[str, str] = {}
    async for stored in store.read_all(stream_prefix=under(run_id), types=["episode.started"]):
        started = stored.decode_payload()
        assert isinstance(started, EpisodeStarted)
        texts[stored.stream] = started.query
    return texts


def _fields(row: EpisodeRow, query: str) -> dict[str, str]:
    answer = row.finished.answer if row.finished is not None else None
    return {"task": row.ref.task_id, "query": query, "answer": answer or "", "label": " ".join(row.labels)}


def _hit(read: RunRead, row: EpisodeRow, query: str, judge: str | None, matched: list[str]) -> SearchHit:
    record = row.judgments.get(judge or "")
    return SearchHit(
        run_id=read.info.run_id,
        run_label=read.info.label,
        episode_id=row.episode_id,
        task_id=row.ref.task_id,
        level=row.ref.level,
        end_reason=row.finished.end_reason if row.finished is not None else "unfinished",
        steps=row.finished.steps if row.finished is not None else None,
        query=query,
        answer=row.finished.answer if row.finished is not None else None,
        labels=list(row.labels),
        judge=judge if record is not None else None,
        judge_version=record.judgment.judge_version if record is not None else None,
        scores=episode_figures(record.judgment.metrics) if record is not None else {},
        matched=matched,
    )


def search(
    runs: Sequence[tuple[RunRead, Mapping[str, str]]], wanted: SearchQuery, page: int, per_page: int
) -> SearchPage:
    """The episodes of ``runs`` (each with its query texts) that hold every word of ``wanted``, runs oldest first
    and episodes in recording order."""
    judges = sorted({j for read, _ in runs for row in read.rows.values() for j in row.judgments})
    if wanted.judge and wanted.judge not in judges:
        raise BadRequest("Bad search", f"?judge={wanted.judge!r}: no run here was judged by it; known: {known(judges)}")
    words = wanted.words
    hits: list[SearchHit] = []
    episodes = 0
    for read, texts in runs:
        run_judges = sorted({j for row in read.rows.values() for j in row.judgments})
        judge = wanted.judge or headline_judge(run_judges) or None
        for row in read.rows.values():
            episodes += 1
            text = texts.get(row.ref.stream, "")
            folded = {name: value.casefold() for name, value in _fields(row, text).items() if name in wanted.fields}
            matched: set[str] = set()
            for word in words:
                holding = {name for name, value in folded.items() if word in value}
                if not holding:
                    break
                matched |= holding
            else:
                hits.append(_hit(read, row, text, judge, [f for f in wanted.fields if f in matched]))
    pages = max(1, -(-len(hits) // per_page))
    if not 1 <= page <= pages:
        raise BadRequest("Bad search", f"?page={page}: the search has {pages} page(s) of episodes")
    return SearchPage(
        query=wanted,
        matched=len(hits),
        episodes=episodes,
        runs=len(runs),
        judges=judges,
        page=page,
        pages=pages,
        hits=hits[(page - 1) * per_page : page * per_page],
    )

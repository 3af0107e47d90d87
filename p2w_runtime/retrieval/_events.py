"""The two events that record one retrieval, so every caller records it the same way, through its episode writer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from p2w_rt.schemas import HistoryQuery, HistoryRetrieval, NewEvent
from p2w_runtime.domain import EpisodeWriter
from p2w_runtime.retrieval._index import HistoryIndex, SearchHit


def retrieval_events(
    writer: EpisodeWriter,
    query: str,
    hits: Sequence[SearchHit],
    index: HistoryIndex,
    k: int,
    threshold: float,
    step: int | None,
    phase: Literal["pre-execution", "on-demand"],
    reason: str | None = None,
) -> tuple[NewEvent, NewEvent]:
    """Stage ``history.query`` then ``history.retrieval``, the latter caused by the former, in ``writer``."""
    asked = writer.add(HistoryQuery(step=step, phase=phase, query=query, reason=reason))
    answered = writer.add(
        HistoryRetrieval(
            step=step,
            query=query,
            model_id=index.model_id,
            index_hash=index.index_hash,
            k=k,
            threshold=threshold,
            hits=[hit.to_retrieval_hit() for hit in hits],
        ),
        asked.event_id,
    )
    return asked, answered

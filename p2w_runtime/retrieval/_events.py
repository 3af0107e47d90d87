"""The two events that record one retrieval, so every caller records it the same way."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from p2w_runtime.retrieval._index import HistoryIndex, SearchHit
from schemas import HistoryQuery, HistoryRetrieval, NewEvent


def retrieval_events(
    stream: str,
    query: str,
    hits: Sequence[SearchHit],
    index: HistoryIndex,
    k: int,
    threshold: float,
    step: int | None,
    phase: Literal["pre-execution", "on-demand"],
    reason: str | None = None,
) -> tuple[NewEvent, NewEvent]:
    """``history.query`` then ``history.retrieval``, the latter caused by the former; append both in one batch."""
    asked = NewEvent(stream=stream, payload=HistoryQuery(step=step, phase=phase, query=query, reason=reason))
    answered = NewEvent(
        stream=stream,
        causation_id=asked.event_id,
        payload=HistoryRetrieval(
            step=step,
            query=query,
            model_id=index.model_id,
            index_hash=index.index_hash,
            k=k,
            threshold=threshold,
            hits=[hit.to_retrieval_hit() for hit in hits],
        ),
    )
    return asked, answered

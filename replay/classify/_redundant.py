"""Redundant history access: repeated questions to the history that bring nothing back.

Two signs, either is enough: at least ``min_empty`` queries with no entry above the
retrieval threshold, or a query that nearly repeats an earlier one of the episode (token
Jaccard of their key tokens at least ``duplicate_jaccard``, or the same normalized text).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2w_rt.replay.classify._labels import REDUNDANT_HISTORY_ACCESS
from p2w_rt.replay.matching import key_tokens, normalize
from p2w_rt.schemas import ErrorLabel, Evidence
from p2w_runtime.domain.trajectory import HistoryAccess, Trajectory

if TYPE_CHECKING:
    from p2w_rt.replay.classify._rules import RedundancySettings


def _event_id(access: HistoryAccess) -> str | None:
    if access.query_event_id:
        return access.query_event_id
    return access.retrievals[0].event_id if access.retrievals else None


def _useless(access: HistoryAccess) -> bool:
    """Retrieved nothing: no retrieval answered it with an entry at or above its threshold."""
    if not access.retrievals:
        return False
    for retrieval in access.retrievals:
        for hit in retrieval.hits:
            if hit.score is None or hit.score >= retrieval.threshold:
                return False
    return True


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def redundant_access(t: Trajectory, settings: RedundancySettings) -> ErrorLabel | None:
    asked = [a for a in t.history if a.query.strip()]
    empty = [a for a in asked if _useless(a)]
    duplicates: list[tuple[HistoryAccess, HistoryAccess, float]] = []
    seen: list[tuple[HistoryAccess, frozenset[str], str]] = []
    for access in asked:
        tokens, text = frozenset(key_tokens(access.query)), " ".join(normalize(access.query).split())
        for earlier, earlier_tokens, earlier_text in seen:
            similarity = 1.0 if text == earlier_text else _jaccard(tokens, earlier_tokens)
            if similarity >= settings.duplicate_jaccard:
                duplicates.append((earlier, access, similarity))
                break
        seen.append((access, tokens, text))
    if len(empty) < settings.min_empty and not duplicates:
        return None
    involved: list[HistoryAccess] = []
    reasons: list[str] = []
    if len(empty) >= settings.min_empty:
        involved += empty
        reasons.append(f"{len(empty)} of {len(asked)} history queries retrieved no entry above the threshold")
    if duplicates:
        for earlier, later, _ in duplicates:
            involved += [earlier, later]
        pairs = ", ".join(f"{later.query!r} repeats {earlier.query!r}" for earlier, later, _ in duplicates[:3])
        reasons.append(f"near-duplicate queries: {pairs}")
    ids = list(dict.fromkeys(i for i in map(_event_id, involved) if i))
    texts = list(dict.fromkeys(a.query for a in involved))
    return ErrorLabel(
        label=REDUNDANT_HISTORY_ACCESS,
        explanation="; ".join(reasons),
        evidence=Evidence(event_ids=ids, text=" | ".join(texts), note=f"{len(asked)} history queries in the episode"),
    )

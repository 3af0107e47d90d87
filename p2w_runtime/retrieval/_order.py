"""The order of a search's hits, and when two hit lists are the same, decided so that float noise cannot change either.

A cosine score carries noise of about 1e-7 (the bank's batch padding, the CPU's float kernels, FAISS's thread count)
and more on another machine's BLAS. Entries with one key text, or nearly one, then swap places from machine to
machine, and the generator's prompt lists the hits in order. So scores closer than ``SCORE_TOLERANCE`` form one tie
group, ordered by entry id, and the threshold and the ``k`` cut treat such a group as one score. The measurement
that chose the tolerance is in docs/design/retrieval-cache.md ("Hit order").
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator, Sequence

SCORE_TOLERANCE = 1e-5
"""Scores closer than this (chained: each to the next lower one) are a tie; recorded and re-executed scores of one
entry may differ by this much. Well above float noise (≤ 1.5e-7 on the bundled runs, ±1e-6 simulated), well below
the gaps between distinct entries the bundled runs retrieve (≥ 1.3e-3)."""


def tie_groups(scores: Sequence[float]) -> Iterator[range]:
    """Positions of ``scores`` (best first) in runs whose neighbours are at most ``SCORE_TOLERANCE`` apart."""
    start = 0
    for position in range(1, len(scores)):
        if abs(scores[position - 1] - scores[position]) > SCORE_TOLERANCE:
            yield range(start, position)
            start = position
    if scores:
        yield range(start, len(scores))


def ranked(
    ids: Sequence[int],
    scores: Sequence[float],
    k: int,
    threshold: float,
    *,
    complete: bool,
) -> list[tuple[int, float]] | None:
    """The hits among candidates ``ids`` / ``scores``, best score first as FAISS returns them: up to ``k``
    ``(entry_id, score)``, best tie group first.

    A tie group is kept whole when its best score reaches ``threshold`` and dropped whole when not; in a kept group
    lower entry ids come first, and a group straddling ``k`` gives its lowest ids. Candidates with id -1 (FAISS
    found nothing) or a NaN score are not hits. ``None`` when the candidates are not ``complete`` (the bank has
    more) and the last kept group reaches their end: it may go on past them, so fetch more and ask again.
    It runs after every search: when the first ``k + 1`` scores are all further apart than ``SCORE_TOLERANCE`` (most
    searches), every group is one entry and the first ``k`` candidates above the threshold are the hits.
    """
    head = scores[: k + 1]
    if (complete or len(scores) > k) and (len(head) < 2 or min(map(operator.sub, head, head[1:])) > SCORE_TOLERANCE):
        return [(i, s) for i, s in zip(ids[:k], scores[:k], strict=True) if s >= threshold and i >= 0]
    hits: list[tuple[int, float]] = []
    group = 0  # where the current tie group starts in ``hits``
    previous = math.inf
    for entry_id, score in zip(ids, scores, strict=True):
        if entry_id < 0 or math.isnan(score):
            continue
        if previous - score > SCORE_TOLERANCE:  # a new group: the previous one is complete
            if len(hits) >= k or score < threshold:
                return _by_id_from(hits, group)[:k]
            _by_id_from(hits, group)
            group = len(hits)
        hits.append((entry_id, score))
        previous = score
    if hits and not complete:
        return None
    return _by_id_from(hits, group)[:k]


def _by_id_from(hits: list[tuple[int, float]], start: int) -> list[tuple[int, float]]:
    """``hits`` with its tail from ``start`` (one tie group) sorted by entry id, in place."""
    if len(hits) - start > 1:
        hits[start:] = sorted(hits[start:])
    return hits


def same_hits(
    recorded: Sequence[tuple[int, float | None]],
    reexecuted: Sequence[tuple[int, float | None]],
) -> bool:
    """Whether two searches' ``(entry_id, score)`` lists are one answer: the same entries, each scored within
    ``SCORE_TOLERANCE``, and in the same order but for ties (the entries of each of the recording's tie groups, as a
    set).

    Without scores (a recording that has none) the ids must be equal in order.
    """
    was, now = _scored(recorded), _scored(reexecuted)
    if was is None or now is None:
        return [i for i, _ in recorded] == [i for i, _ in reexecuted]
    scores = dict(now)
    if len(was) != len(now) or scores.keys() != {i for i, _ in was}:
        return False
    if any(abs(score - scores[i]) > SCORE_TOLERANCE for i, score in was):
        return False
    groups = tie_groups([score for _, score in was])
    return all({was[p][0] for p in group} == {now[p][0] for p in group} for group in groups)


def _scored(hits: Sequence[tuple[int, float | None]]) -> list[tuple[int, float]] | None:
    scored = [(entry_id, score) for entry_id, score in hits if score is not None]
    return scored if len(scored) == len(hits) else None

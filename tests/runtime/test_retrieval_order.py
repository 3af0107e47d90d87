"""Hit order that float noise cannot change (docs/design/retrieval-cache.md, "Hit order"), and the rerun's comparison
of hit lists (ties as sets, scores within ``SCORE_TOLERANCE``), on the real embedder, real FAISS and the queries the
bundled example runs ask of the sample memory banks.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator

import msgspec
import pytest

from p2w_rt.schemas import MemoryEntry
from p2w_runtime.demo.examples import example_run_bundles
from p2w_runtime.demo.sample import sample_history_dir
from p2w_runtime.domain import episodes_of
from p2w_runtime.domain.trajectory import RetrievalRecord
from p2w_runtime.rerun._compare import first_mismatch
from p2w_runtime.rerun._recorded import RecordedEpisode, load_episode
from p2w_runtime.retrieval import (
    SCORE_TOLERANCE,
    HistoryIndex,
    HistoryRetriever,
    load_embedder,
    ranked,
    same_hits,
    tie_groups,
)
from p2w_runtime.store import MemoryEventStore, import_bundle
from tests.helpers.thread_support import restore_threads, set_threads  # noqa: F401 (restore_threads: a fixture)

NOISE = 1e-6
"""How far another machine's scores are simulated to stray: several times the float noise measured here."""


async def _read_examples() -> list[RecordedEpisode]:
    async with MemoryEventStore() as store:
        runs = [(await import_bundle(store, bundle)).run_id for bundle in example_run_bundles()]
        return [await load_episode(store, ref.stream) for run in runs for ref in await episodes_of(store, run)]


@pytest.fixture(scope="module")
def examples() -> list[RecordedEpisode]:
    """The 48 episodes of the bundled example runs."""
    return asyncio.run(_read_examples())


@pytest.fixture(scope="module")
def queries(examples: list[RecordedEpisode]) -> list[tuple[str, str]]:
    """Every (persona, history query) the example runs asked, once."""
    asked = {(e.task().persona, r.query) for e in examples for r in e.retrievals}
    assert len(asked) > 20
    return sorted(asked)


@pytest.fixture(scope="module")
def retriever(tmp_path_factory: pytest.TempPathFactory) -> HistoryRetriever:
    return HistoryRetriever(sample_history_dir(), load_embedder(), tmp_path_factory.mktemp("cache"))


def _search_all(retriever: HistoryRetriever, queries: list[tuple[str, str]]) -> list[list[tuple[int, int, float]]]:
    retriever.embedder.forget_queries()  # each query encoded again, with the threads set now
    return [[(h.entry_id, h.rank, h.score) for h in retriever.search(p, q)] for p, q in queries]


@pytest.mark.usefixtures("restore_threads")
def test_the_same_queries_with_one_thread_and_several_give_the_same_hits(retriever, queries):
    set_threads(1)
    alone = _search_all(retriever, queries)
    set_threads(4)
    several = _search_all(retriever, queries)
    assert [[(i, r) for i, r, _ in hits] for hits in several] == [[(i, r) for i, r, _ in hits] for hits in alone]
    for one, many in zip(alone, several, strict=True):
        assert same_hits([(i, s) for i, _, s in one], [(i, s) for i, _, s in many])
    assert any(len(g) > 1 for hits in alone for g in tie_groups([s for *_, s in hits])), "the banks hold ties"


def _candidates(index: HistoryIndex, query: str) -> tuple[list[int], list[float]]:
    """Every entry of the bank with its score, best first as FAISS returns them."""
    hits = sorted(index.search(query, k=index.size, threshold=-2.0), key=lambda h: -h.score)
    return [h.entry_id for h in hits], [h.score for h in hits]


def _perturbations(ids: list[int], count: int) -> Iterator[dict[int, float]]:
    """±NOISE per entry: the two sign patterns that split every tie pair by entry id, then random ones."""
    yield {i: NOISE if i % 2 else -NOISE for i in ids}
    yield {i: -NOISE if i % 2 else NOISE for i in ids}
    yield {i: NOISE * (1 if i < len(ids) // 2 else -1) for i in ids}
    rng = random.Random(40)
    for _ in range(count):
        yield {i: rng.uniform(-NOISE, NOISE) for i in ids}


def test_scores_perturbed_by_a_millionth_give_the_same_hits(retriever, queries):
    """The pure order on real search output: every score moved by up to ±1e-6 gives the same hits; ordering by
    the moved score alone (what FAISS's own order amounts to) does not, so the banks do hold near-ties."""
    flipped_by_score_order = 0
    for persona, query in queries:
        index = retriever.index(persona)
        ids, scores = _candidates(index, query)
        expected = ranked(ids, scores, 20, 0.5, complete=True)
        assert expected == [(h.entry_id, h.score) for h in index.search(query)], "search is this order"
        for noise in _perturbations(ids, 5):
            moved = sorted(((s + noise[i], i) for i, s in zip(ids, scores, strict=True)), reverse=True)  # FAISS's order
            hits = ranked([i for _, i in moved], [s for s, _ in moved], 20, 0.5, complete=True)
            assert [i for i, _ in hits or []] == [i for i, _ in expected or []], query
            flipped_by_score_order += [i for _, i in moved[: len(hits or [])]] != [i for i, _ in hits or []]
    assert flipped_by_score_order > 0


def test_the_order_within_tie_groups_is_by_entry_id_and_groups_are_far_apart(retriever, queries):
    for persona, query in queries:
        hits = retriever.search(persona, query)
        scores = [h.score for h in hits]
        groups = list(tie_groups(scores))
        for group in groups:
            assert [hits[p].entry_id for p in group] == sorted(hits[p].entry_id for p in group)
            assert max(scores[p] for p in group) - min(scores[p] for p in group) < SCORE_TOLERANCE
        gaps = [scores[a.stop - 1] - scores[b.start] for a, b in zip(groups, groups[1:], strict=False)]
        assert all(gap > SCORE_TOLERANCE + 2 * NOISE for gap in gaps), (query, gaps)


def _bank_with_a_tie_group(size: int) -> list[MemoryEntry]:
    """``size`` entries with one key text (one vector), after and before some others."""
    same = [
        MemoryEntry(
            timestamp=f"2024-01-{d % 28 + 1:02d}",
            type="purchase",
            object="trail running shoes size 10.5",
            website="shop.p2w.test",
        )
        for d in range(size)
    ]
    other = [
        MemoryEntry(timestamp="2024-02-01", type="purchase", object=text, website="shop.p2w.test")
        for text in ("road running shoes size 10.5", "yoga mat", "hotel in Chicago")
    ]
    return [other[0], *same[: size // 2], other[1], *same[size // 2 :], other[2]]


@pytest.mark.usefixtures("restore_threads")
def test_a_tie_group_straddling_k_gives_its_lowest_entry_ids_with_one_thread_or_several(tmp_path):
    """30 entries share a score; k cuts through them after more candidates than are fetched past k at first."""
    bank = _bank_with_a_tie_group(30)
    index = HistoryIndex.open(bank, load_embedder(), tmp_path)
    tied = [i for i, e in enumerate(bank) if e.object == "trail running shoes size 10.5"]
    for threads in (1, 4):
        set_threads(threads)
        for k in (1, 5, 25, 31):
            hits = index.search("trail running shoes", k=k, threshold=0.0)
            assert [h.entry_id for h in hits][: min(k, 30)] == tied[: min(k, 30)], (threads, k)
            assert [h.rank for h in hits] == list(range(1, len(hits) + 1))


def test_the_threshold_keeps_or_drops_a_tie_group_whole_by_its_best_score():
    ids, scores = [7, 3, 9, 1], [0.9, 0.50000004, 0.49999996, 0.3]
    assert ranked(ids, scores, 20, 0.5, complete=True) == [(7, 0.9), (3, 0.50000004), (9, 0.49999996)]
    assert ranked(ids, scores, 20, 0.50000005, complete=True) == [(7, 0.9)]
    assert ranked(ids, scores, 2, 0.5, complete=True) == [(7, 0.9), (3, 0.50000004)]
    assert ranked(ids, [0.9, 0.7, 0.7, 0.7], 2, 0.5, complete=False) is None, "the tie at k may go on: fetch more"
    assert ranked(ids, [0.9, 0.7, 0.7, 0.6], 2, 0.5, complete=False) == [(7, 0.9), (3, 0.7)]
    assert ranked([-1, 2], [float("nan"), 0.8], 5, 0.5, complete=True) == [(2, 0.8)], "FAISS's empty slots skipped"


@pytest.mark.parametrize(
    "reexecuted,same",
    [
        ([(1, 0.9), (3, 0.7 + 4e-6), (2, 0.7), (5, 0.6)], True),  # a tie swapped, a score within the tolerance
        ([(1, 0.9), (2, 0.7), (3, 0.7), (6, 0.6)], False),  # another entry
        ([(1, 0.9), (2, 0.7), (3, 0.7), (5, 0.6 + 5e-4)], False),  # a score outside the tolerance
        ([(2, 0.7), (1, 0.9), (3, 0.7), (5, 0.6)], False),  # not a tie: the order differs
        ([(1, 0.9), (2, 0.7), (3, 0.7)], False),  # one hit fewer
    ],
)
def test_same_hits_compares_ties_as_sets_and_scores_within_the_tolerance(reexecuted, same):
    recorded = [(1, 0.9), (2, 0.7), (3, 0.7), (5, 0.6)]
    assert same_hits(recorded, reexecuted) is same
    assert same_hits([(1, None), (2, None)], [(2, None), (1, None)]) is False, "no scores: the order must be equal"


def _with_hits(record: RetrievalRecord, change) -> RetrievalRecord:
    hits = list(record.hits)
    return msgspec.structs.replace(record, hits=change(hits))


def test_rerun_reports_another_entry_or_a_score_outside_the_tolerance_and_passes_a_tie_swap(examples):
    """``first_mismatch`` on a recorded episode against itself with one retrieval changed."""
    episode = next(e for e in examples if any(len(tie) > 1 for r in e.retrievals for tie in _ties(r)))
    records = episode.events
    at = next(n for n, r in enumerate(records) if isinstance(r, RetrievalRecord) and _ties(r))
    retrieval = records[at]
    tie = _ties(retrieval)[0]

    def swapped(hits):
        hits[tie.start], hits[tie.stop - 1] = hits[tie.stop - 1], hits[tie.start]
        return hits

    def moved(hits):
        hits[0] = msgspec.structs.replace(hits[0], score=hits[0].score + 100 * SCORE_TOLERANCE)
        return hits

    def replaced(hits):
        unused = max(h.entry_id for h in hits) + 1
        hits[-1] = msgspec.structs.replace(hits[-1], entry_id=unused)
        return hits

    def rerun_with(change):
        return first_mismatch(records, [*records[:at], _with_hits(retrieval, change), *records[at + 1 :]], None)

    assert first_mismatch(records, records, None) is None
    assert rerun_with(swapped) is None
    other = rerun_with(replaced)
    assert other is not None and other.kind == "retrieval hits differ" and other.step == retrieval.step
    assert other.recorded == f"entries {[h.entry_id for h in retrieval.hits]}" != other.reexecuted
    scored = rerun_with(moved)
    assert scored is not None and scored.kind == "retrieval hits differ"
    assert scored.recorded != scored.reexecuted and f"({retrieval.hits[0].score:.6f})" in scored.recorded


def _ties(record: RetrievalRecord) -> list[range]:
    return [g for g in tie_groups([h.score or 0.0 for h in record.hits]) if len(g) > 1]

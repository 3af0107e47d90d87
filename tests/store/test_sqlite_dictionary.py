"""The store's one dictionary compresses every segment a write makes once the store holds enough without one: an
imported episode's, a migrated or bundled copy's and a compacted one's alike, and reads give the same events
(docs/design/store.md, "Compaction")."""

from __future__ import annotations

from pathlib import Path

from p2w_rt.schemas import StoredEvent
from p2w_runtime.store import EventStore, migrate_store, open_store, verify_store
from p2w_runtime.store._dictionaries import TRAIN_AFTER, _loaded, dictionary_of
from p2w_runtime.store._segments import CODEC
from p2w_runtime.store.contract.builders import collect, observation
from tests.helpers.raw_sqlite import raw_sqlite

STEPS = 24
"""Events of an imported episode: past ``SEGMENT_MIN_EVENTS``, so each one write makes one segment."""


def _codecs(path: Path) -> list[str]:
    with raw_sqlite(path) as db:
        return [codec for (codec,) in db.execute("SELECT codec FROM segments ORDER BY first_position")]


async def _imported(store: EventStore, episodes: int, start: int = 0) -> list[StoredEvent]:
    """``episodes`` episodes each appended whole, as an importer writes them."""
    written: list[StoredEvent] = []
    for n in range(start, start + episodes):
        written += await store.append([observation(f"r1/e{n:02d}", k) for k in range(STEPS)])
    return written


async def test_imported_episodes_share_a_dictionary_once_the_store_holds_enough_segments(tmp_path: Path) -> None:
    path = tmp_path / "p2w.db"
    async with open_store(path) as store:
        written = await _imported(store, TRAIN_AFTER + 3)
    codecs = _codecs(path)
    trained = TRAIN_AFTER - 1  # the write of the next one trains on them and its own
    assert codecs[:trained] == [CODEC] * trained
    (sha,) = {dictionary_of(codec) for codec in codecs[trained:]}
    assert sha is not None and all(codec.startswith(CODEC + "+dict:") for codec in codecs[trained:])
    _loaded.clear()  # a new process: the dictionary is read from the store
    async with open_store(path) as store:
        assert await collect(store.read_all()) == written
        assert await collect(store.read_stream("r1/e17")) == [e for e in written if e.stream == "r1/e17"]
        assert await store.read_event("r1/e18", 5) == next(e for e in written if (e.stream, e.seq) == ("r1/e18", 5))
        assert (await verify_store(store)).ok


async def test_a_new_writer_finds_the_stores_dictionary_and_compaction_uses_it_too(tmp_path: Path) -> None:
    path = tmp_path / "p2w.db"
    async with open_store(path) as store:
        await _imported(store, TRAIN_AFTER + 1)
    (sha,) = {d for codec in _codecs(path) if (d := dictionary_of(codec)) is not None}
    _loaded.clear()
    async with open_store(path) as store:
        await _imported(store, 1, start=40)
        for k in range(0, STEPS, 2):  # a recording's steps, then its compaction
            await store.append([observation("r1/live", k), observation("r1/live", k + 1)])
        assert await store.compact(["r1/live"]) == STEPS
    assert {dictionary_of(codec) for codec in _codecs(path)[TRAIN_AFTER:]} == {sha}
    with raw_sqlite(path) as db:
        assert db.execute("SELECT count(*) FROM blobs").fetchone() == (1,)  # one dictionary, no second one trained


async def test_a_migrated_copy_trains_its_own_dictionary_and_reads_the_same(tmp_path: Path) -> None:
    source, target = tmp_path / "old.db", tmp_path / "new.db"
    async with open_store(source) as store:
        written = await _imported(store, TRAIN_AFTER + 2)
    async with open_store(source) as old, open_store(target) as new:
        await migrate_store(old, new)
    assert any(dictionary_of(codec) for codec in _codecs(target))
    _loaded.clear()
    async with open_store(target) as store:
        assert await collect(store.read_all()) == written
        assert (await verify_store(store)).ok

"""Compaction as SQLite stores it: a sealed episode's rows become segments at the positions they were recorded at,
the rows go, the triggers let no other row go, and a read in position order finds the compacted events however few
segments a page may look at (docs/design/store.md, "Compaction")."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from p2w_rt.schemas import StoredEvent
from p2w_runtime.store import EventStore, _sql, _sql_sparse, open_store, verify_store
from p2w_runtime.store._dictionaries import TRAIN_AFTER, _loaded, dictionary_of
from p2w_runtime.store._segments import SPARSE_CODEC
from p2w_runtime.store.contract.builders import collect, observation
from p2w_runtime.store.contract.compaction import EPISODES, reads, record_interleaved
from tests.helpers.raw_sqlite import raw_sqlite


def _table(path: Path, sql: str) -> list[tuple[object, ...]]:
    with raw_sqlite(path) as db:
        return db.execute(sql).fetchall()


async def test_compaction_moves_an_episodes_rows_into_segments_at_their_positions(tmp_path: Path) -> None:
    path = tmp_path / "p2w.db"
    async with open_store(path) as store:
        written = await record_interleaved(store)
        moved = await store.compact(["r1/e2"])
    episode = [e for e in written if e.stream == "r1/e2"]
    assert moved == len(episode)
    assert _table(path, "SELECT count(*) FROM events WHERE stream = 'r1/e2'") == [(0,)]
    ((first, last, codec),) = _table(path, "SELECT first_position, last_position, codec FROM segments")
    assert (first, last, codec) == (episode[0].position, episode[-1].position, SPARSE_CODEC)
    assert last - first + 1 > len(episode)  # other streams' events came between


async def test_a_read_in_position_order_finds_compacted_events_when_a_page_may_look_at_two_segments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four compacted episodes overlap: a page that finds as many as it asked for lowers its bound, and one whose
    start they all straddle asks again for more."""
    async with open_store(tmp_path / "p2w.db") as store:
        await record_interleaved(store)
        before = await reads(store)
        await store.compact(EPISODES)
        for per_page, page_size in ((2, 1000), (1, 5), (3, 2)):
            monkeypatch.setattr(_sql_sparse, "SPARSE_PER_PAGE", per_page)
            monkeypatch.setattr(_sql, "PAGE_SIZE", page_size)
            assert await reads(store) == before


async def test_the_triggers_refuse_deleting_a_row_no_segment_holds_and_an_old_file_gets_the_new_trigger(
    tmp_path: Path,
) -> None:
    path = tmp_path / "p2w.db"
    async with open_store(path) as store:
        await record_interleaved(store)
    with raw_sqlite(path) as db, pytest.raises(sqlite3.IntegrityError, match="append-only: DELETE refused"):
        db.execute("DELETE FROM events WHERE stream = 'r1/e1' AND seq = 1")
    with raw_sqlite(path) as db:  # the file as a version before compaction left it
        db.execute("DROP TRIGGER events_delete_held")
        db.execute(
            "CREATE TRIGGER events_no_delete BEFORE DELETE ON events "
            "BEGIN SELECT RAISE(ABORT, 'events are append-only: DELETE refused'); END"
        )
    async with open_store(path) as store:
        assert await store.compact(["r1/e1"]) > 0
    names = {name for (name,) in _table(path, "SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    assert "events_delete_held" in names and "events_no_delete" not in names


async def test_a_changed_row_is_not_compacted_and_verify_still_names_it(tmp_path: Path) -> None:
    path = tmp_path / "p2w.db"
    async with open_store(path) as store:
        await record_interleaved(store)
    with raw_sqlite(path) as db:
        db.execute("DROP TRIGGER events_no_update")
        db.execute("UPDATE events SET payload = replace(payload, 'step', 'STEP') WHERE stream = 'r1/e1' AND seq = 5")
    async with open_store(path) as store:
        assert await store.compact(["r1/e1", "r1/e2"]) == len(await collect(store.read_stream("r1/e2")))
        report = await verify_store(store)
    assert [(p.stream, p.seq) for p in report.problems] == [("r1/e1", 5)]


async def test_a_changed_byte_in_a_compacted_segment_fails_verify(tmp_path: Path) -> None:
    path = tmp_path / "p2w.db"
    async with open_store(path) as store:
        await record_interleaved(store)
        await store.compact(["r1/e3"])
    with raw_sqlite(path) as db:
        db.execute("DROP TRIGGER segments_no_update")
        db.execute("UPDATE segments SET head_hash = 'sha256:' || substr(head_hash, 8, 63) || '0'")
    async with open_store(path) as store:
        report = await verify_store(store)
    assert not report.ok and {p.stream for p in report.problems} == {"r1/e3"}


async def _many_compacted(store: EventStore, episodes: int) -> list[StoredEvent]:
    """``episodes`` episodes of 20 events appended a step (two events) at a time, each compacted at its end (as a
    recording does)."""
    written: list[StoredEvent] = []
    for n in range(episodes):
        stream = f"r1/e{n:02d}"
        for k in range(0, 20, 2):
            written += await store.append([observation(stream, k), observation(stream, k + 1)])
        assert await store.compact([stream]) == 20
    return written


async def test_a_dictionary_is_trained_once_the_store_holds_enough_compacted_episodes_and_reads_stay_the_same(
    tmp_path: Path,
) -> None:
    path = tmp_path / "p2w.db"
    async with open_store(path) as store:
        written = await _many_compacted(store, TRAIN_AFTER + 3)
    codecs = [codec for (codec,) in _table(path, "SELECT codec FROM segments ORDER BY first_position")]
    assert codecs[:TRAIN_AFTER] == [SPARSE_CODEC] * TRAIN_AFTER
    (sha,) = {dictionary_of(codec) for codec in codecs[TRAIN_AFTER:]}
    assert sha is not None and _table(path, f"SELECT count(*) FROM blobs WHERE sha256 = '{sha}'") == [(1,)]
    _loaded.clear()  # a new process: the dictionary is read from the store
    async with open_store(path) as store:
        assert await collect(store.read_all()) == written
        assert await collect(store.read_stream("r1/e18")) == [e for e in written if e.stream == "r1/e18"]
        assert (await verify_store(store)).ok


async def test_a_changed_dictionary_fails_verify_naming_the_segments_it_compressed(tmp_path: Path) -> None:
    path = tmp_path / "p2w.db"
    async with open_store(path) as store:
        await _many_compacted(store, TRAIN_AFTER + 1)
    (codec,) = [c for (c,) in _table(path, "SELECT codec FROM segments") if dictionary_of(c)]
    with raw_sqlite(path) as db:
        db.execute("DROP TRIGGER blobs_no_update")
        db.execute("UPDATE blobs SET data = zeroblob(100) WHERE sha256 = ?", (dictionary_of(codec),))
    _loaded.clear()
    async with open_store(path) as store:
        report = await verify_store(store)
    reasons = [p.reason for p in report.problems]
    assert any(f"its dictionary {dictionary_of(codec)} is missing" in r for r in reasons), reasons


async def test_a_read_in_position_order_across_a_compaction_hands_out_every_event_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Episodes compacted between the pages of a read (another writer, or this process): the read sees some
    events as rows and the rest in segments, and the same compaction between a page's rows and its segments shows
    events both ways; each is handed out once, in order."""
    monkeypatch.setattr(_sql, "PAGE_SIZE", 7)
    async with open_store(tmp_path / "p2w.db") as store:
        written = await record_interleaved(store)
        for stream, at in (("r1/e1", 5), ("r1/e2", 40), ("r2/e1", 90)):
            read = []
            async for event in store.read_all():
                read.append(event)
                if len(read) == at:
                    await store.compact([stream])
            assert read == written

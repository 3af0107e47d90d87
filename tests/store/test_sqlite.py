"""The SQLite backend: the event store contract, plus what only SQLite has (triggers, WAL, busy timeout)."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest
from sqlalchemy import text

from p2w_rt.schemas import blob_hash
from p2w_runtime.domain._summaries import SUMMARY_TYPES
from p2w_runtime.store import EventStore, connect_store
from p2w_runtime.store._core import TYPE_INDEXED, TYPE_INDEXED_SQL
from p2w_runtime.store._sql_reads import all_page
from p2w_runtime.store.contract import EventStoreContract, SqlStoreHooks
from p2w_runtime.store.contract.builders import observation, page_text
from p2w_runtime.store.sqlite import BUSY_TIMEOUT_MS, SqliteEventStore
from tests.helpers.raw_sqlite import raw_sqlite


class TestSqliteEventStore(SqlStoreHooks, EventStoreContract):
    async def make_store(self, tmp_path: Path, name: str = "store") -> EventStore:
        return await connect_store(tmp_path / f"{name}.db")


async def _filled(path: Path) -> None:
    data = page_text(1)
    store = await connect_store(path)
    try:
        await store.append([observation("r1", 1, ax_tree=blob_hash(data))], {blob_hash(data): data})
    finally:
        await store.close()


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE events SET payload = '{}'",
        "UPDATE events SET seq = seq + 1",
        "DELETE FROM events",
        "UPDATE blobs SET data = x'00'",
        "DELETE FROM blobs",
    ],
)
async def test_update_and_delete_through_raw_sqlite_are_refused_by_the_database(tmp_path: Path, statement: str) -> None:
    path = tmp_path / "p2w.db"
    await _filled(path)
    with raw_sqlite(path) as raw:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            raw.execute(statement)
        assert raw.execute("SELECT count(*) FROM events").fetchone() == (1,)
        assert raw.execute("SELECT count(*) FROM blobs").fetchone() == (1,)


async def test_database_is_in_wal_mode_with_a_busy_timeout(tmp_path: Path) -> None:
    path = tmp_path / "p2w.db"
    store = await connect_store(path)
    try:
        assert isinstance(store, SqliteEventStore)
        async with store.engine.connect() as conn:
            assert (await conn.execute(text("PRAGMA journal_mode"))).scalar() == "wal"
            assert (await conn.execute(text("PRAGMA busy_timeout"))).scalar() == BUSY_TIMEOUT_MS
    finally:
        await store.close()
    assert BUSY_TIMEOUT_MS >= 5_000
    with raw_sqlite(path) as raw:  # WAL is persistent: any later opener sees it
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)


async def test_reopening_keeps_events_and_continues_chains(tmp_path: Path) -> None:
    path = tmp_path / "p2w.db"
    await _filled(path)
    store = await connect_store(path, create=False)
    try:
        (second,) = await store.append([observation("r1", 2)])
        assert second.seq == 2
        assert await store.count() == (2, 1)
    finally:
        await store.close()


async def test_an_append_waits_for_another_processs_write_lock_without_blocking_the_event_loop(tmp_path: Path) -> None:
    """The writer's statements run on the loop's thread; only waiting for a held lock goes to a worker thread."""
    path = tmp_path / "p2w.db"
    await _filled(path)
    store = await connect_store(path, create=False)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")  # another writer holds the lock
        appending = asyncio.create_task(store.append([observation("r1", 2)]))
        ticks = 0
        while ticks < 20:  # the loop keeps running while the append waits
            await asyncio.sleep(0.01)
            ticks += 1
        assert not appending.done()
        holder.execute("COMMIT")
        (second,) = await asyncio.wait_for(appending, 30)
        assert (second.seq, second.position) == (2, 2)
    finally:
        holder.close()
        await store.close()


async def test_an_append_cancelled_while_waiting_for_the_lock_leaves_no_transaction_behind(tmp_path: Path) -> None:
    path = tmp_path / "p2w.db"
    await _filled(path)
    store = await connect_store(path, create=False)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        appending = asyncio.create_task(store.append([observation("r1", 2)]))
        await asyncio.sleep(0.2)
        appending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await appending
        holder.execute("COMMIT")
        # the next append on the same store takes the lock afresh and continues the chain where it was
        (second,) = await store.append([observation("r1", 2)])
        assert (second.seq, second.position) == (2, 2)
        assert await store.count() == (2, 1)
        holder.execute("BEGIN IMMEDIATE")  # and the store holds no lock: another writer gets it at once
        holder.execute("COMMIT")
    finally:
        holder.close()
        await store.close()


def _count(path: Path) -> int:
    with raw_sqlite(path) as conn:
        count: int = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    return count


async def test_append_now_writes_at_once_or_not_at_all(tmp_path: Path) -> None:
    """An idle writer appends on the caller's stack; while another writer holds the lock, or this process's writer is
    busy, it writes nothing and says so (None), leaving no transaction open."""
    path = tmp_path / "p2w.db"
    await _filled(path)
    store = await connect_store(path, create=False)
    assert isinstance(store, SqliteEventStore)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        stored = store.append_now([observation("r1", 2)])
        assert stored is not None and [(e.seq, e.position) for e in stored] == [(2, 2)]
        assert _count(path) == 2  # committed before anything was awaited
        holder.execute("BEGIN IMMEDIATE")
        assert store.append_now([observation("r1", 3)]) is None
        appending = asyncio.create_task(store.append([observation("r1", 3)]))
        await asyncio.sleep(0.05)  # it holds this process's writer, waiting for the lock
        holder.execute("COMMIT")
        assert store.append_now([observation("r1", 4)]) is None
        (third,) = await asyncio.wait_for(appending, 30)
        assert (third.seq, _count(path)) == (3, 3)
        holder.execute("BEGIN IMMEDIATE")  # the store holds no lock
        holder.execute("COMMIT")
        stored = store.append_now([observation("r1", 4)])
        assert stored is not None and [(e.seq, e.position) for e in stored] == [(4, 4)]
    finally:
        holder.close()
        await store.close()


def _indexes(path: Path) -> dict[str, str]:
    with raw_sqlite(path) as raw:
        rows = raw.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'events'")
        return {name: sql for name, sql in rows if sql is not None}  # an automatic index has no SQL


async def test_only_the_lifecycle_types_are_indexed_and_typed_reads_of_them_use_the_index(tmp_path: Path) -> None:
    path = tmp_path / "p2w.db"
    await _filled(path)
    assert set(_indexes(path)) == {"ix_events_lifecycle"}
    assert TYPE_INDEXED_SQL in _indexes(path)["ix_events_lifecycle"]
    # every type read by type across the store is in the partial index: the summaries' build, the viewer's search
    assert {*SUMMARY_TYPES, "episode.started"} <= set(TYPE_INDEXED)
    store = await connect_store(path)
    try:
        assert isinstance(store, SqliteEventStore)
        with raw_sqlite(path) as raw:

            def plan(types: tuple[str, ...], prefix: str | None) -> str:
                page = store._page(*all_page(types, prefix))
                params = page.params(after=0, limit=10, segment_limit=1)
                return " | ".join(row[-1] for row in raw.execute(f"EXPLAIN QUERY PLAN {page.sql}", params))

            assert "USING INDEX ix_events_lifecycle" in plan(SUMMARY_TYPES, None)
            assert "USING INDEX ix_events_lifecycle" in plan(("episode.started",), "run/")
            # a step's types walk the log by position from where the read starts, never a scan of the whole table
            assert "USING INTEGER PRIMARY KEY (rowid>?)" in plan(("llm.call", "episode.started"), "run/")
    finally:
        await store.close()


async def test_a_writer_swaps_the_earlier_type_index_and_a_reader_leaves_it(tmp_path: Path) -> None:
    path = tmp_path / "p2w.db"
    await _filled(path)
    with raw_sqlite(path) as raw:  # the schema before: every type indexed
        raw.execute("DROP INDEX ix_events_lifecycle")
        raw.execute("CREATE INDEX ix_events_type ON events (type)")
    read_only = await connect_store(path, read_only=True)
    try:
        assert [e.type async for e in read_only.read_all(types=["observation"])] == ["observation"]
    finally:
        await read_only.close()
    assert set(_indexes(path)) == {"ix_events_type"}
    writer = await connect_store(path)
    try:
        await writer.append([observation("r1", 2)])
        assert [e.seq async for e in writer.read_all(stream_prefix="r1", types=["observation"])] == [1, 2]
    finally:
        await writer.close()
    assert set(_indexes(path)) == {"ix_events_lifecycle"}


async def _stop_after_one_event(path: Path) -> None:
    store = await connect_store(path, read_only=True)
    try:
        events = store.read_all()
        async for _ in events:
            break  # the next page is being fetched ahead by now
        await events.aclose()  # type: ignore[attr-defined]  # an async generator behind EventStore's AsyncIterator
    finally:
        await store.close()


def test_a_read_stopped_early_leaves_no_connection_behind_the_closed_store(tmp_path: Path) -> None:
    """A reader that stops while ``read_all`` fetches its next page ahead, then closes the store and its event loop
    (what each ``verify --full`` worker does at the end of its range): the fetch is over and its connection closed
    with the store. A connection handed back after the store closed used to stay open, its driver thread posting
    the rows to the closed loop ("Event loop is closed" on stderr)."""
    path = tmp_path / "paged.db"

    async def fill() -> None:
        store = await connect_store(path)
        try:
            await store.append([observation(f"r{i // 40}", i % 40 + 1) for i in range(2_500)])
        finally:
            await store.close()

    asyncio.run(fill())
    caught: list[threading.ExceptHookArgs] = []
    previous, threading.excepthook = threading.excepthook, caught.append
    try:
        for _ in range(5):
            asyncio.run(_stop_after_one_event(path))
        left = [t for t in threading.enumerate() if "_connection_worker_thread" in t.name]
        for thread in left:
            thread.join(timeout=10)
    finally:
        threading.excepthook = previous
    assert [str(args.exc_value) for args in caught] == []
    assert [t.name for t in left if t.is_alive()] == []

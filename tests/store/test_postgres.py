"""The PostgreSQL backend: the event store contract unchanged, plus what only PostgreSQL has (triggers, locks)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path

import asyncpg
import pytest

from p2w_rt.schemas import GENESIS_HASH, blob_hash
from p2w_runtime.store import EventStore, IntegrityError, StoreError, connect_store
from p2w_runtime.store._segments import SEGMENT_MIN_EVENTS
from p2w_runtime.store.contract import EventStoreContract, SqlStoreHooks
from p2w_runtime.store.contract.builders import collect, observation, page_text, rationale
from p2w_runtime.store.postgres import COPY_ROWS, WRITE_LOCK, PostgresEventStore, shown_url
from p2w_runtime.testing.postgres import PostgresServer


class TestPostgresEventStore(SqlStoreHooks, EventStoreContract):
    @pytest.fixture(autouse=True)
    def _server(self, postgres_server: PostgresServer) -> None:
        self.server = postgres_server

    async def make_store(self, tmp_path: Path, name: str = "store") -> EventStore:
        return await connect_store(self.server.fresh_database())


async def _filled(url: str) -> None:
    data = page_text(1)
    async with await connect_store(url) as store:
        await store.append([observation("r1", 1, ax_tree=blob_hash(data))], {blob_hash(data): data})


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE events SET payload = '{}'",
        "UPDATE events SET seq = seq + 1",
        "DELETE FROM events",
        "TRUNCATE events",
        "UPDATE blobs SET data = '\\x00'",
        "DELETE FROM blobs",
        "TRUNCATE blobs",
        "INSERT INTO events SELECT * FROM events ON CONFLICT (position) DO UPDATE SET payload = '{}'",
    ],
)
async def test_update_delete_and_truncate_through_raw_sql_are_refused(
    postgres_server: PostgresServer, statement: str
) -> None:
    url = postgres_server.fresh_database()
    await _filled(url)
    raw = await asyncpg.connect(url)
    try:
        with pytest.raises(asyncpg.PostgresError, match="append-only"):
            await raw.execute(statement)
        assert await raw.fetchval("SELECT count(*) FROM events") == 1
        assert await raw.fetchval("SELECT count(*) FROM blobs") == 1
    finally:
        await raw.close()


async def test_writers_in_several_processes_keep_seq_and_position_gap_free(postgres_server: PostgresServer) -> None:
    """Four separate connections (engines) appending at once, to their own streams and to a shared one."""
    url = postgres_server.fresh_database()
    stores = [await connect_store(url) for _ in range(4)]
    try:

        async def write(i: int, store: EventStore) -> None:
            for step in range(25):
                await store.append([observation(f"w{i}", step), rationale("shared", step), observation("shared", step)])

        await asyncio.gather(*(write(i, s) for i, s in enumerate(stores)))
        events = await collect(stores[0].read_all())
        assert [e.position for e in events] == list(range(1, 301))
        shared = [e for e in events if e.stream == "shared"]
        assert [e.seq for e in shared] == list(range(1, 201))
        assert all(b.prev_hash == a.hash for a, b in zip(shared, shared[1:], strict=False))
    finally:
        for store in stores:
            await store.close()


async def test_a_database_without_the_tables_is_refused_when_not_creating(postgres_server: PostgresServer) -> None:
    url = postgres_server.fresh_database()
    with pytest.raises(StoreError, match="no p2w-rt event store"):
        await connect_store(url, create=False)
    with pytest.raises(StoreError, match="no p2w-rt event store"):
        await connect_store(url, read_only=True)


async def test_an_unreachable_server_is_one_error_naming_the_url_without_its_password() -> None:
    with pytest.raises(StoreError) as caught:
        await connect_store("postgresql://someone:secret@127.0.0.1:1/nothing")
    assert "secret" not in str(caught.value) and "127.0.0.1:1/nothing" in str(caught.value)
    assert shown_url("postgresql://u:pw@h/db") == "postgresql://u:***@h/db"


async def test_reopening_continues_chains(postgres_server: PostgresServer) -> None:
    url = postgres_server.fresh_database()
    await _filled(url)
    async with await connect_store(url, create=False) as store:
        assert isinstance(store, PostgresEventStore)
        (second,) = await store.append([observation("r1", 2)])
        assert second.seq == 2 and second.position == 2
        assert await store.count() == (2, 1)


async def test_large_batches_from_concurrent_writers_go_in_by_copy_gap_free(postgres_server: PostgresServer) -> None:
    """Batches of COPY_ROWS events and more take the COPY path, under the same advisory lock."""
    url = postgres_server.fresh_database()
    stores = [await connect_store(url) for _ in range(4)]
    size = COPY_ROWS + 6
    try:

        async def write(i: int, store: EventStore) -> None:
            for step in range(5):
                batch = [observation(f"w{i}", step * size + k) for k in range(size // 2)]
                await store.append(batch + [rationale("shared", step * size + k) for k in range(size - len(batch))])

        await asyncio.gather(*(write(i, s) for i, s in enumerate(stores)))
        events = await collect(stores[0].read_all())
        assert [e.position for e in events] == list(range(1, 4 * 5 * size + 1))
        shared = [e for e in events if e.stream == "shared"]
        assert [e.seq for e in shared] == list(range(1, len(shared) + 1))
        assert shared[0].prev_hash == GENESIS_HASH
        assert all(b.prev_hash == a.hash for a, b in zip(shared, shared[1:], strict=False))
        assert all(e.compute_hash() == e.hash for e in events)
    finally:
        for store in stores:
            await store.close()


async def test_a_copied_batch_a_constraint_refuses_writes_nothing(postgres_server: PostgresServer) -> None:
    url = postgres_server.fresh_database()
    await _filled(url)
    async with await connect_store(url) as store:
        batch = [observation("r2", step) for step in range(COPY_ROWS * 2)]
        batch.append(batch[3].model_copy(update={"stream": "r3"}))  # the same event_id twice: UNIQUE refuses it
        with pytest.raises(IntegrityError):
            await store.append(batch)
        assert await store.count() == (1, 1)
        assert await store.stream_head("r2") is None
        (next_event,) = await store.append([observation("r2", 0)])
        assert next_event.position == 2 and next_event.seq == 1


async def _chain_is_whole(store: EventStore, total: int) -> None:
    events = await collect(store.read_all())
    assert [e.position for e in events] == list(range(1, total + 1))
    for stream in {e.stream for e in events}:
        mine = [e for e in events if e.stream == stream]
        assert [e.seq for e in mine] == list(range(1, len(mine) + 1))
        assert [e.prev_hash for e in mine] == [GENESIS_HASH] + [e.hash for e in mine[:-1]]
        assert all(e.compute_hash() == e.hash for e in mine)


async def test_an_error_raised_while_copy_consumes_the_rows_writes_nothing(postgres_server: PostgresServer) -> None:
    """Rows are sealed as COPY sends them: an event that cannot be sealed, late in the batch, aborts the COPY."""
    url = postgres_server.fresh_database()
    await _filled(url)
    async with await connect_store(url) as store:
        batch = [observation("r2", step) for step in range(COPY_ROWS * 40)]  # several of COPY's 512 KB sends
        naive = datetime(2026, 12, 1, 13, 0)  # no timezone: sealing refuses it
        batch[-3] = batch[-3].model_copy(update={"recorded_at": naive})
        with pytest.raises(ValueError, match="timezone-aware"):
            await store.append(batch)
        assert await store.count() == (1, 1)
        assert await store.stream_head("r2") is None
        sealed = await store.append(batch[:-3])
        assert [e.position for e in sealed] == list(range(2, len(batch) - 1))
        await _chain_is_whole(store, len(batch) - 2)


@pytest.mark.parametrize("size", [3, COPY_ROWS + 1])
async def test_a_writer_whose_kept_end_of_the_log_is_stale_collides_and_appends_again(
    postgres_server: PostgresServer, size: int
) -> None:
    """Writer A trusts the end of the log it last committed; B appends meanwhile (to A's stream and another):
    A's next append collides with B's rows (``LogMoved``), is done again from the end read afresh, and A trusts
    the end again only after an append found it unchanged."""
    url = postgres_server.fresh_database()
    async with await connect_store(url) as a, await connect_store(url) as b:
        assert isinstance(a, PostgresEventStore)
        for step in range(2):
            await a.append([observation("shared", step * size + k) for k in range(size)])
        assert a._log_end_current  # the second append found the end where the first left it
        await b.append([rationale("shared", 100), rationale("b-only", 1)])
        assert a._log_end_current  # so A appends from its kept end, unread, and collides with B's rows
        appended = await a.append([observation("shared", 200 + k) for k in range(size)])
        assert [e.seq for e in appended] == list(range(2 * size + 2, 3 * size + 2))
        assert appended[0].position == 2 * size + 3 and len(appended) == size
        assert not a._log_end_current  # the retry read max(position) and found it moved
        await b.append([rationale("b-only", 2)])  # again behind A's back, A not trusting: no collision needed
        await a.append([rationale("shared", 300)])
        await a.append([rationale("a-only", 1)])
        assert a._log_end_current
        await _chain_is_whole(a, 3 * size + 5)


async def test_a_writer_whose_kept_end_is_stale_collides_with_the_first_row_of_another_writers_segment(
    postgres_server: PostgresServer,
) -> None:
    """B appends a whole stream: a row, then a segment. A, trusting its kept end, collides with that row (a write's
    first event is always one, docs/design/store.md "Segments") and appends again after it."""
    url = postgres_server.fresh_database()
    async with await connect_store(url) as a, await connect_store(url) as b:
        assert isinstance(a, PostgresEventStore)
        for step in range(2):
            await a.append([observation("a-only", step)])
        assert a._log_end_current
        whole = await b.append([observation("b-whole", k) for k in range(SEGMENT_MIN_EVENTS + 4)])
        appended = await a.append([observation("a-only", 2)])
        assert appended[0].position == whole[-1].position + 1 and not a._log_end_current
        raw = await asyncpg.connect(url)
        try:
            assert await raw.fetchval("SELECT count(*) FROM segments") == 1
            assert await raw.fetchval("SELECT count(*) FROM events WHERE stream = 'b-whole'") == 1
        finally:
            await raw.close()
        await _chain_is_whole(a, 3 + len(whole))


async def test_an_append_cancelled_while_waiting_for_the_write_lock_leaves_nothing_open(
    postgres_server: PostgresServer,
) -> None:
    """BEGIN and the lock go in one simple query; a cancel while waiting rolls back, and the pooled connection
    is reusable (not left inside a transaction)."""
    url = postgres_server.fresh_database()
    async with await connect_store(url) as store:
        holder = await asyncpg.connect(url)
        try:
            locked = holder.transaction()
            await locked.start()
            await holder.execute("SELECT pg_advisory_xact_lock($1)", WRITE_LOCK)
            waiting = asyncio.ensure_future(store.append([observation("r1", 0)]))
            await asyncio.sleep(0.3)
            assert not waiting.done()
            waiting.cancel()
            with pytest.raises(asyncio.CancelledError):
                await waiting
            await locked.rollback()
        finally:
            await holder.close()
        async with await connect_store(url) as other:  # the lock is free: no pooled connection kept it
            (first,) = await asyncio.wait_for(other.append([observation("r0", 0)]), timeout=10)
        assert first.position == 1
        for step in range(1, 20):  # more appends than the pool has connections
            (event,) = await store.append([observation("r1", step)])
            assert (event.seq, event.position) == (step, step + 1)
        await _chain_is_whole(store, 20)


async def test_a_small_trusted_append_is_one_atomic_statement_a_refused_row_writes_nothing(
    postgres_server: PostgresServer,
) -> None:
    """Once a writer trusts its kept end, a small blob-free batch goes in as one ``executemany`` that takes the lock
    itself, without BEGIN/COMMIT: asyncpg's implicit transaction makes it all or nothing."""
    url = postgres_server.fresh_database()
    async with await connect_store(url) as store:
        assert isinstance(store, PostgresEventStore)
        first = await store.append([observation("r1", 0), observation("r1", 1)])
        await store.append([observation("r1", 2)])
        assert store._log_end_current
        duplicate = first[0]
        again = observation("r1", 9).model_copy(update={"event_id": duplicate.event_id})
        with pytest.raises(IntegrityError, match="append refused"):
            await store.append([observation("r1", 3), observation("r1", 4), again])
        assert await store.count() == (3, 0)
        appended = await store.append([observation("r1", 3), observation("r1", 4)])
        assert [(e.seq, e.position) for e in appended] == [(4, 4), (5, 5)]
        await _chain_is_whole(store, 5)


async def test_many_small_appends_from_concurrent_writers_stay_gap_free(postgres_server: PostgresServer) -> None:
    """Writers that often trust a stale end (one-statement appends colliding, retried in a transaction)."""
    url = postgres_server.fresh_database()
    stores = [await connect_store(url) for _ in range(4)]
    try:

        async def write(i: int, store: EventStore) -> None:
            for step in range(60):
                batch = [observation(f"w{i}", step)] if step % 3 else [observation(f"w{i}", step), rationale("s", step)]
                await store.append(batch)

        await asyncio.gather(*(write(i, s) for i, s in enumerate(stores)))
        await _chain_is_whole(stores[0], 4 * 80)
    finally:
        for store in stores:
            await store.close()


async def test_a_pooled_connection_killed_by_the_server_fails_one_append_and_is_dropped(
    postgres_server: PostgresServer,
) -> None:
    url = postgres_server.fresh_database()
    async with await connect_store(url) as store:
        for step in range(3):
            await store.append([observation("r1", step)])
        admin = await asyncpg.connect(url)
        try:
            killed = await admin.fetchval(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        finally:
            await admin.close()
        assert killed >= 1
        with pytest.raises(StoreError, match="database (error|connection lost|unavailable)"):
            await store.append([observation("r1", 3)])
        (event,) = await store.append([observation("r1", 3)])
        assert (event.seq, event.position) == (4, 4)
        await _chain_is_whole(store, 4)


async def test_every_type_stays_indexed_on_postgres(postgres_server: PostgresServer) -> None:
    """PostgreSQL keeps the index of every type that SQLite narrowed to the lifecycle types (``ddl_if``): appends
    there are round trips, not index pages, and its typed reads of a step's types keep their index."""
    url = postgres_server.fresh_database()
    await _filled(url)
    raw = await asyncpg.connect(url)
    try:
        indexes = {
            r["indexname"] for r in await raw.fetch("SELECT indexname FROM pg_indexes WHERE tablename = 'events'")
        }
        assert "ix_events_type" in indexes and "ix_events_lifecycle" not in indexes
    finally:
        await raw.close()


@pytest.mark.parametrize("size", [1, COPY_ROWS])
async def test_a_writer_whose_kept_end_is_stale_collides_with_an_episode_compacted_behind_its_back(
    postgres_server: PostgresServer, size: int
) -> None:
    """B records an episode a step at a time, then compacts it: the rows an optimistic append would have collided
    with are gone, so the trigger on ``events`` makes A's rows at or before the segment's last position collide."""
    url = postgres_server.fresh_database()
    async with await connect_store(url) as a, await connect_store(url) as b:
        assert isinstance(a, PostgresEventStore)
        for step in range(2):
            await a.append([observation("a-only", step)])
        assert a._log_end_current
        steps = [e for k in range(SEGMENT_MIN_EVENTS + 2) for e in await b.append([observation("b/episode", k)])]
        assert await b.compact(["b/episode"]) == len(steps)
        appended = await a.append([observation("a-only", 100 + k) for k in range(size)])
        assert appended[0].position == steps[-1].position + 1 and not a._log_end_current
        positions = [e.position async for e in a.read_all()]
        assert positions == list(range(1, len(positions) + 1))
        await _chain_is_whole(a, 2 + len(steps) + size)

"""The PostgreSQL backend: the event store contract unchanged, plus what only PostgreSQL has (triggers, locks)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg
import pytest

from p2w_runtime.store import EventStore, IntegrityError, StoreError, connect_store
from p2w_runtime.store.contract import EventStoreContract, SqlStoreHooks
from p2w_runtime.store.contract.builders import collect, observation, page_text, rationale
from p2w_runtime.store.postgres import COPY_ROWS, PostgresEventStore, shown_url
from p2w_runtime.testing.postgres import PostgresServer
from schemas import GENESIS_HASH, blob_hash


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

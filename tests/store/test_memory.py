"""The in-memory backend: the event store contract unchanged, plus what only it promises (threads, copies)."""

from __future__ import annotations

import asyncio
import sys
import threading
from datetime import datetime
from pathlib import Path

import pytest

from p2w_rt.schemas import GENESIS_HASH, blob_hash
from p2w_runtime.store import EventStore, MemoryEventStore, memory, migrate_store, open_store, verify_store
from p2w_runtime.store.contract import EventStoreContract
from p2w_runtime.store.contract.builders import collect, observation, page_text, rationale, run_started


class TestMemoryEventStore(EventStoreContract):
    async def make_store(self, tmp_path: Path, name: str = "store") -> EventStore:
        return MemoryEventStore(label=f"memory {name}")

    async def stored_blob_size(self, store: EventStore, sha256: str) -> int:
        assert isinstance(store, MemoryEventStore)
        _codec, data = store._blobs[sha256]  # the backend's storage, as SqlStoreHooks reads the blobs table
        return len(data)

    def set_page_size(self, monkeypatch: pytest.MonkeyPatch, size: int) -> None:
        monkeypatch.setattr(memory, "PAGE_SIZE", size)

    def set_streams_per_query(self, monkeypatch: pytest.MonkeyPatch, count: int) -> None:
        """Nothing to set: ``read_streams`` is ``EventLog``'s, one stream after another."""


async def test_an_event_changed_by_its_reader_is_not_changed_in_the_store() -> None:
    store = MemoryEventStore()
    (returned,) = await store.append([rationale("r1", 1, text="kept")])
    returned.payload["text"] = "edited"
    returned.blobs.append("x")
    (read,) = await collect(store.read_stream("r1"))
    read.payload_json = "{}"
    (again,) = await collect(store.read_all())
    assert again.payload["text"] == "kept" and again.blobs == [] and again.compute_hash() == again.hash


async def test_an_event_that_cannot_be_sealed_late_in_a_batch_keeps_nothing_of_it() -> None:
    store = MemoryEventStore()
    data = page_text(2)
    batch = [observation("r1", 1, ax_tree=blob_hash(data))] + [rationale("r1", step) for step in range(2, 6)]
    batch[-1] = batch[-1].model_copy(update={"recorded_at": datetime(2026, 12, 1, 13, 0)})  # naive: refused
    with pytest.raises(ValueError, match="timezone-aware"):
        await store.append(batch, {blob_hash(data): data})
    assert await store.count() == (0, 0) and await store.list_streams() == []
    sealed = await store.append(batch[:-1], {blob_hash(data): data})
    assert [(e.seq, e.position) for e in sealed] == [(1, 1), (2, 2), (3, 3), (4, 4)]


def test_threads_each_with_its_own_loop_share_one_store_gap_free() -> None:
    """The lock is a thread lock: writers on other threads (each its own event loop) serialise as tasks do."""
    store = MemoryEventStore()

    def write(i: int) -> None:
        async def batches() -> None:
            for step in range(40):
                await store.append([observation(f"w{i}", step)] + [rationale("shared", step) for _ in range(30)])

        asyncio.run(batches())

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # threads take turns often, in the middle of appends too
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    events = asyncio.run(collect(store.read_all()))
    assert [e.position for e in events] == list(range(1, 4 * 40 * 31 + 1))
    shared = [e for e in events if e.stream == "shared"]
    assert [e.seq for e in shared] == list(range(1, len(shared) + 1))
    assert [e.prev_hash for e in shared] == [GENESIS_HASH] + [e.hash for e in shared[:-1]]
    assert all(e.compute_hash() == e.hash for e in events)


async def test_a_memory_store_verifies_and_migrates_into_sqlite_event_for_event(tmp_path: Path) -> None:
    """The same sealing as the SQL backends: SQLite takes the memory store's events, hashes and all."""
    source = MemoryEventStore()
    data = page_text(4)
    await source.append(
        [run_started("run-1", "nightly"), observation("run-1/e1", 1, ax_tree=blob_hash(data))], {blob_hash(data): data}
    )
    await source.append([rationale("run-1/e1", 1), rationale("run-1", 2)])
    assert (await verify_store(source)).ok
    async with open_store(tmp_path / "p2w.db") as target:
        summary = await migrate_store(source, target)
        assert (summary.events, summary.copied, summary.blobs, summary.streams) == (4, 4, 1, 2)
        assert await collect(target.read_all()) == await collect(source.read_all())
        assert await target.get_blob(blob_hash(data)) == data

"""The episode writer's write-behind: batches stored in order, failures surfaced, nothing lost (memory and SQLite
stores; SQLite writes a step without blobs at once, ``append_now``)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from p2w_rt.schemas import EpisodeFinished, Observation, Rationale, blob_hash
from p2w_runtime.domain import EpisodeWriter, episode_started
from p2w_runtime.store import EventStore, IntegrityError, MemoryEventStore, connect_store
from p2w_runtime.testing.episodes import SketchTask
from tests.helpers.raw_sqlite import raw_sqlite

TASK = SketchTask("Ann_Lee_A1", "find the usual chinos", "http://127.0.0.1/", 0, None)


@pytest.fixture(params=["memory", "sqlite"])
async def store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[EventStore]:
    opened = MemoryEventStore() if request.param == "memory" else await connect_store(tmp_path / "p2w.db")
    async with opened:
        yield opened


def started_writer(store) -> EpisodeWriter:
    writer = EpisodeWriter.of("run", TASK.task_id, store)
    writer.add(episode_started(TASK, episode_id=TASK.task_id, scheme=None))
    return writer


async def test_flushed_steps_are_stored_in_order_with_their_blobs(store: EventStore) -> None:
    log = started_writer(store)
    for step in range(1, 6):
        page = f"page {step}".encode() * 100
        log.add(Observation(step=step, url=f"http://127.0.0.1/{step}", ax_tree=log.blob(page)))
        log.add(Rationale(step=step, source="planner", text=f"step {step}"))
        await log.flush()  # the next step is staged while this one is written
    await log.settle()
    events = [e async for e in store.read_stream(log.stream)][1:]
    assert [(e.seq, e.payload["step"]) for e in events] == [(i + 2, i // 2 + 1) for i in range(10)]
    assert await store.get_blob(events[8].blobs[0]) == b"page 5" * 100


async def test_a_failed_write_raises_at_the_next_settle_and_later_steps_still_store(store: EventStore) -> None:
    log = started_writer(store)
    await log.flush()
    log.add(Observation(step=1, url="http://127.0.0.1/1", ax_tree=blob_hash(b"never staged")))
    await log.flush()
    log.add(Rationale(step=2, source="planner", text="staged while the first write fails"))
    with pytest.raises(IntegrityError, match=blob_hash(b"never staged")[:12]):
        await log.flush()
    await log.flush()
    await log.settle()
    stored = [e.type async for e in store.read_stream(log.stream)]
    assert stored == ["episode.started", "rationale"]
    await log.settle()  # nothing in flight: returns at once


def _count(path: Path) -> int:
    with raw_sqlite(path) as conn:
        count: int = conn.execute("SELECT count(*) FROM events").fetchone()[0]
    return count


async def test_a_step_without_blobs_is_in_the_sqlite_file_when_flush_returns(tmp_path: Path) -> None:
    """An idle SQLite writer stores the step on flush's own stack: no task. While another process holds the lock
    the write goes behind the caller instead, waits for it, and settles once it is free."""
    path = tmp_path / "p2w.db"
    async with await connect_store(path) as store:
        log = started_writer(store)
        await log.flush()
        assert _count(path) == 1
        holder = sqlite3.connect(path, isolation_level=None)
        try:
            holder.execute("BEGIN IMMEDIATE")
            log.add(Rationale(step=1, source="planner", text="written behind"))
            await log.flush()
            await asyncio.sleep(0.05)
            assert _count(path) == 1
            holder.execute("COMMIT")
            await asyncio.wait_for(log.settle(), 30)
            assert _count(path) == 2
        finally:
            holder.close()
        log.add(EpisodeFinished(end_reason="answered", answer="32"))
        await log.flush()
        await log.settle()
        assert [e.type async for e in store.read_stream("run")] == ["episode.sealed"]  # the seal is still appended

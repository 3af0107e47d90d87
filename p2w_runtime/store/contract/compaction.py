"""Compaction: recorded episodes, interleaved step by step as a recording writes them, read back the same after
``compact`` through every read path, whatever form a backend then keeps them in (docs/design/store.md,
"Compaction")."""

from __future__ import annotations

import random
from typing import Any

import pytest

from p2w_rt.schemas import ChainedEvent, StoredEvent
from p2w_runtime.store import EventStore, verify_store
from p2w_runtime.store._segments import SEGMENT_MIN_EVENTS
from p2w_runtime.store.contract._base import StoreFixture
from p2w_runtime.store.contract.builders import collect, observation, rationale

EPISODES = ("r1/e1", "r1/e2", "r1/e3", "r2/e1")
STEPS = SEGMENT_MIN_EVENTS + 7


async def record_interleaved(store: EventStore, seed: int = 7) -> list[StoredEvent]:
    """Episodes appended a step (one or two events) at a time in a shuffled order, with run-stream events between:
    each episode's events at positions other streams' events come between."""
    rng = random.Random(seed)
    steps = [stream for stream in EPISODES for _ in range(STEPS)]
    rng.shuffle(steps)
    written: list[StoredEvent] = []
    for n, stream in enumerate(steps):
        step = [observation(stream, n)] + ([rationale(stream, n, text=f"step {n} ü\n")] if n % 3 else [])
        written += await store.append(step)
        if n % 10 == 0:
            written += await store.append([observation(stream.split("/")[0], n)])
    return written


async def reads(store: EventStore) -> dict[str, Any]:
    """What every read path gives, for comparing a store before and after compaction."""
    streams = sorted({head.stream for head in await store.list_streams()})
    middle = (await store.log_end()) // 2
    return {
        "all": await collect(store.read_all()),
        "after": await collect(store.read_all(after_position=middle)),
        "typed": await collect(store.read_all(types=["rationale"])),
        "prefixed": await collect(store.read_all(stream_prefix="r1/")),
        "both": await collect(store.read_all(stream_prefix="r1/", types=["observation"])),
        "streams": await collect(store.read_streams(streams)),
        "chained": await collect(store.read_chained(streams)),
        "each": [await collect(store.read_stream(stream, after_seq=3)) for stream in streams],
        "heads": await store.list_streams(),
        "count": await store.count(),
        "end": await store.log_end(),
    }


class CompactionContract(StoreFixture):
    """``compact`` changes no read."""

    async def test_compacted_episodes_read_back_the_same_through_every_read(
        self, store: EventStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        written = await record_interleaved(store)
        self.set_page_size(monkeypatch, 9)  # pages end inside compacted episodes
        before = await reads(store)
        assert before["all"] == written
        await store.compact(["r1/e1", "r1/e3", "r2/e1"])
        after = await reads(store)
        assert after == before
        for event in written[::17]:
            assert await store.read_event(event.stream, event.seq) == event
        assert (await verify_store(store)).ok

    async def test_a_compacted_episode_continues_its_chain_and_a_second_compaction_changes_nothing(
        self, store: EventStore
    ) -> None:
        written = await record_interleaved(store)
        await store.compact(EPISODES)
        assert await store.compact(EPISODES) == 0  # nothing left to move
        more = await store.append([observation("r1/e1", 1000), observation("r9/x", 1)])
        assert more[0].seq == sum(e.stream == "r1/e1" for e in written) + 1
        assert more[0].prev_hash == [e for e in written if e.stream == "r1/e1"][-1].hash
        assert await collect(store.read_all()) == written + more
        assert await collect(store.read_chained(["r1/e1"])) == [
            ChainedEvent.of(e) for e in [*written, *more] if e.stream == "r1/e1"
        ]
        assert (await verify_store(store)).ok

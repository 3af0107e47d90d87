"""Verify marks: a whole-store check that starts after the last mark agrees with a full one, on every backend,
through appends and compactions that happen between the two (docs/design/integrity.md, "Incremental verify")."""

from __future__ import annotations

import pytest

from p2w_rt.schemas import StoreVerified
from p2w_runtime.store import (
    MARK_STREAM,
    EventStore,
    Problem,
    _verify_parallel,
    append_mark,
    verify_store,
    verify_whole_store,
)
from p2w_runtime.store._verified_mark import heads_digest
from p2w_runtime.store.contract._base import StoreFixture
from p2w_runtime.store.contract.builders import collect, observation
from p2w_runtime.store.contract.compaction import EPISODES, record_interleaved


class VerifyMarkContract(StoreFixture):
    """``verify_whole_store`` after a mark reads only what follows it; ``append_mark`` chains the mark."""

    async def test_a_check_after_a_mark_reads_only_the_new_events_across_a_compaction(self, store: EventStore) -> None:
        written = await record_interleaved(store)
        first = await verify_whole_store(store)
        assert first.ok and not first.incremental and first.full_because == "no earlier verify mark"
        assert first.mark is not None and first.mark.position == written[-1].position
        assert await append_mark(store, first)
        # the episodes in flight at the mark go on, then are compacted: their segments straddle the mark
        more = await store.append([observation(stream, 900 + n) for n, stream in enumerate(EPISODES)])
        await store.compact(EPISODES)
        second = await verify_whole_store(store)
        assert second.ok, second.problems
        assert (second.incremental, second.since, second.events, second.marks) == (True, first.mark.position, 4, 1)
        assert second.streams == len(EPISODES) and await append_mark(store, second)
        unchanged = await verify_whole_store(store)
        assert unchanged.ok and unchanged.incremental and unchanged.events == 0 and unchanged.mark is None
        full = await verify_whole_store(store, full=True)
        assert full.ok and full.events == len(written) + len(more) + 2 and full.full_because == "--full"

    async def test_marks_form_a_chained_stream_no_run_reads(self, store: EventStore) -> None:
        written = await record_interleaved(store)
        for _ in range(2):
            report = await verify_whole_store(store, full=True)
            assert await append_mark(store, report)
        marks = await collect(store.read_stream(MARK_STREAM))
        assert [m.seq for m in marks] == [1, 2] and marks[1].prev_hash == marks[0].hash
        assert all(isinstance(m.decode_payload(), StoreVerified) for m in marks)
        assert await collect(store.read_all(stream_prefix="r1/")) == [e for e in written if e.stream.startswith("r1/")]

    async def test_a_failing_check_appends_no_mark(self, store: EventStore) -> None:
        await record_interleaved(store)
        report = await verify_whole_store(store)
        report.problems.append(Problem("r1", None, None, "found by the caller (a summary)"))
        assert not await append_mark(store, report)
        assert await store.stream_head(MARK_STREAM) is None

    async def test_a_check_spread_over_processes_agrees_with_one_pass(
        self, store: EventStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Workers open the same store read-only (memory: checked here, in one pass); cut into many ranges, every
        episode's events lie in several, compacted and not."""
        written = await record_interleaved(store)
        await store.compact(EPISODES[:2])
        monkeypatch.setattr(_verify_parallel, "PARALLEL_MIN_EVENTS", 0)
        monkeypatch.setattr(_verify_parallel, "RANGES_PER_WORKER", 7)
        monkeypatch.setattr(_verify_parallel, "workers", lambda end: 2)
        spread, serial = await verify_whole_store(store, full=True), await verify_store(store)
        assert spread.ok and serial.ok, (spread.problems, serial.problems)
        assert (spread.events, spread.streams, spread.tails) == (len(written), serial.streams, serial.tails)
        heads = {head.stream: (head.last_seq, head.last_hash) for head in await store.list_streams()}
        assert spread.mark is not None and spread.mark.heads == heads_digest(heads)

"""Whole runs of a stream written at once: every read gives the same events whatever form a backend stores them in.

A SQL backend keeps a run of at least ``SEGMENT_MIN_EVENTS`` consecutive events of one stream as one compressed
segment (docs/design/store.md, "Segments"); these tests hold every read path to the events the append returned,
with rows before, between and after segments, across pages.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from p2w_rt.schemas import GENESIS_HASH, ChainedEvent, NewEvent, StoredEvent
from p2w_runtime.store import EventStore, IntegrityError, StreamHead, verify_store
from p2w_runtime.store._segments import SEGMENT_MIN_EVENTS
from p2w_runtime.store.contract._base import StoreFixture
from p2w_runtime.store.contract.builders import collect, observation, rationale

RUN = SEGMENT_MIN_EVENTS + 9
"""Events of one stream in one append: a row (a write's first event) and a segment of the rest."""


def _episode(stream: str, events: int = RUN) -> list[NewEvent]:
    return [observation(stream, n) if n % 2 else rationale(stream, n, text=f"step {n} ü\n") for n in range(events)]


def _head(event: StoredEvent) -> StreamHead:
    return StreamHead(event.stream, event.seq, event.hash, event.type)


class SegmentsContract(StoreFixture):
    """Reads of streams appended or imported whole, alone and mixed with rows of other streams."""

    async def _mixed(self, store: EventStore) -> list[StoredEvent]:
        """Rows and segments of several streams, interleaved in position; every event the appends returned."""
        written = await store.append(_episode("r1/a"))  # a row, then a segment
        written += await store.append([observation("r1/b", 1), observation("r1/a", 99)])  # rows
        written += await store.append([rationale("r1/b", 2), *_episode("r1/c"), *_episode("r2/d", RUN + 3)])
        written += await store.append(_episode("r1/a", 3))  # rows continuing a stream after its segment
        written += await store.append([*_episode("r1/b", RUN), observation("r1/c", 7)])
        return written

    async def test_a_stream_appended_whole_reads_back_the_same_through_every_read(
        self, store: EventStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        written = await store.append(_episode("r1/e1"))
        self.set_page_size(monkeypatch, 7)  # a segment spans pages
        assert await collect(store.read_all()) == written
        assert await collect(store.read_all(after_position=written[10].position or 0)) == written[11:]
        assert await collect(store.read_all(types=["rationale"])) == [e for e in written if e.type == "rationale"]
        assert await collect(store.read_all(stream_prefix="r1/")) == written
        assert await collect(store.read_all(stream_prefix="r2/")) == []
        assert await collect(store.read_stream("r1/e1")) == written
        assert await collect(store.read_stream("r1/e1", after_seq=RUN - 3)) == written[-3:]
        assert await collect(store.read_streams(["r1/e1", "r1/none"])) == written
        assert await collect(store.read_chained(["r1/e1"])) == [ChainedEvent.of(e) for e in written]
        for event in written:
            assert await store.read_event("r1/e1", event.seq) == event
        assert await store.read_event("r1/e1", RUN + 1) is None
        assert await store.stream_head("r1/e1") == _head(written[-1])
        assert await store.list_streams("r1/") == [_head(written[-1])]
        assert await store.count() == (RUN, 0)
        assert await store.log_end() == written[-1].position
        assert written[0].prev_hash == GENESIS_HASH
        assert all(later.prev_hash == earlier.hash for earlier, later in zip(written, written[1:], strict=False))
        assert all(e.compute_hash() == e.hash for e in written)

    async def test_rows_appended_after_a_segment_continue_its_chain(self, store: EventStore) -> None:
        first = await store.append(_episode("r1/e1"))
        more = await store.append([observation("r1/e1", 100), rationale("r1/e1", 100)])
        assert [e.seq for e in more] == [RUN + 1, RUN + 2]
        assert more[0].prev_hash == first[-1].hash
        assert await collect(store.read_stream("r1/e1")) == first + more
        assert (await verify_store(store)).ok

    @pytest.mark.parametrize("page", [1, 2, 5, 16, 1000])
    async def test_a_mixed_store_pages_in_order(
        self, store: EventStore, monkeypatch: pytest.MonkeyPatch, page: int
    ) -> None:
        written = await self._mixed(store)
        self.set_page_size(monkeypatch, page)
        self.set_streams_per_query(monkeypatch, 2)
        by_position = sorted(written, key=lambda e: e.position or 0)
        assert by_position == written
        assert await collect(store.read_all()) == written
        assert await collect(store.read_all(after_position=30)) == written[30:]
        assert await collect(store.read_all(stream_prefix="r1/", types=["observation"])) == [
            e for e in written if e.stream.startswith("r1/") and e.type == "observation"
        ]
        streams = ["r1/a", "r1/b", "r1/c", "r2/d"]
        by_stream = sorted(written, key=lambda e: (e.stream, e.seq))
        assert await collect(store.read_streams(streams)) == by_stream
        assert await collect(store.read_chained(streams)) == [ChainedEvent.of(e) for e in by_stream]
        for stream in streams:
            mine = [e for e in by_stream if e.stream == stream]
            assert await collect(store.read_stream(stream, after_seq=2)) == mine[2:]
            assert await store.stream_head(stream) == _head(mine[-1])
        assert await store.list_streams() == [_head([e for e in by_stream if e.stream == s][-1]) for s in streams]
        assert await store.count() == (len(written), 0)
        assert (await verify_store(store)).ok

    async def test_a_mixed_store_imports_whole_once_and_refuses_a_changed_event(
        self, store: EventStore, tmp_path: Path
    ) -> None:
        written = await self._mixed(store)
        assert await store.append_stored(written) == 0  # all present, rows and segments alike
        copy = await self.make_store(tmp_path, "copy")
        try:
            assert await copy.append_stored([replace(e, position=None) for e in written]) == len(written)
            assert await copy.append_stored(written) == 0
            imported = await collect(copy.read_all())
            # each stream's events together, streams in the order they first come, each in its order
            streams = list(dict.fromkeys(e.stream for e in written))
            grouped = sorted(written, key=lambda e: (streams.index(e.stream), e.seq))
            assert [replace(e, position=None) for e in imported] == [replace(e, position=None) for e in grouped]
            assert [e.position for e in imported] == list(range(1, len(written) + 1))
            assert await copy.list_streams() == await store.list_streams()
            changed = written[20]  # inside r1/a's segment
            assert changed.stream == "r1/a" and 1 < changed.seq < RUN
            forged = replace(changed, recorded_at="2020-01-01T00:00:00Z")
            forged.hash = forged.compute_hash()
            with pytest.raises(IntegrityError, match=changed.event_id):
                await copy.append_stored([forged])
            assert (await verify_store(copy)).ok
        finally:
            await copy.close()

    async def test_a_reused_event_id_in_a_whole_stream_is_refused(self, store: EventStore) -> None:
        first = observation("r1", 1)
        await store.append([first])
        episode = _episode("r2")
        with pytest.raises(IntegrityError, match=first.event_id):
            await store.append([*episode[:5], first.model_copy(update={"stream": "r2"}), *episode[5:]])
        twice = _episode("r3")
        with pytest.raises(IntegrityError):
            await store.append([*twice, twice[3]])
        assert await store.count() == (1, 0)

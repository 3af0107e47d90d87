"""The event log's contract: seq and positions, chain links, all or nothing, paging, filters, concurrency."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from p2w_rt.schemas import GENESIS_HASH, ChainedEvent, Observation, Rationale, StoredEvent, blob_hash, event_hash
from p2w_runtime.store import EventLog, EventStore, IntegrityError, StreamHead
from p2w_runtime.store.contract._base import StoreFixture
from p2w_runtime.store.contract.builders import collect, observation, page_text, rationale

LARGE_BATCH = 49
"""Blobs in one append in the large-batch test: enough for any backend to split the work across threads."""


class EventLogContract(StoreFixture):
    """``EventLog``: what every backend's appends and reads must show."""

    # -- append ---------------------------------------------------------------------------------
    async def test_append_assigns_gap_free_seq_per_stream_and_increasing_positions(self, store: EventStore) -> None:
        returned: list[StoredEvent] = []
        for step in range(1, 4):
            returned += await store.append([observation("r1/e1", step), observation("r1/e2", step)])
            returned += await store.append([rationale("r1/e1", step)])
        stored = await collect(store.read_all())
        assert [e.event_id for e in stored] == [e.event_id for e in returned]
        assert [e.position for e in stored] == [e.position for e in returned]
        positions = [e.position for e in stored]
        assert all(isinstance(p, int) for p in positions)
        assert positions == sorted({p for p in positions if p is not None})
        assert [e.seq for e in stored if e.stream == "r1/e1"] == list(range(1, 7))
        assert [e.seq for e in stored if e.stream == "r1/e2"] == [1, 2, 3]
        assert await store.count() == (9, 0)

    async def test_chain_starts_at_genesis_and_links_each_event_to_the_previous(self, store: EventStore) -> None:
        await store.append([observation("r1", 1), rationale("r1", 1)])
        await store.append([observation("r1", 2)])
        events = await collect(store.read_stream("r1"))
        assert events[0].prev_hash == GENESIS_HASH
        for earlier, later in zip(events, events[1:], strict=False):
            assert later.prev_hash == earlier.hash
        assert all(e.compute_hash() == e.hash for e in events)
        assert len({e.hash for e in events}) == 3

    async def test_returned_events_are_what_is_read_back(self, store: EventStore) -> None:
        cause = observation("r1", 1)
        new = observation("r1", 2, causation_id=cause.event_id)
        returned = await store.append([cause, new])
        read = await collect(store.read_stream("r1"))
        assert read == returned
        assert read[1].causation_id == cause.event_id
        assert read[1].event_id == new.event_id
        assert read[1].recorded_at.endswith("Z")
        assert read[1].payload == new.payload_dict()
        for event in [*returned, *read]:  # built without validation on the hot paths: must equal a validated one
            assert StoredEvent.from_dict(event.to_dict()) == replace(event, position=None)

    async def test_empty_append_does_nothing(self, store: EventStore) -> None:
        assert await store.append([]) == []
        assert await store.count() == (0, 0)

    async def test_append_is_all_or_nothing_when_a_later_event_references_a_missing_blob(
        self, store: EventStore
    ) -> None:
        present = page_text(1)
        good = observation("r1/e1", 1, ax_tree=blob_hash(present))
        bad = observation("r1/e1", 2, ax_tree=blob_hash(b"never stored"))
        with pytest.raises(IntegrityError, match=blob_hash(b"never stored")[:12]):
            await store.append([good, bad], {blob_hash(present): present})
        assert await store.count() == (0, 0)
        assert await store.stream_head("r1/e1") is None
        with pytest.raises(KeyError):
            await store.get_blob(blob_hash(present))

    async def test_duplicate_event_id_is_refused_and_nothing_of_that_batch_is_kept(self, store: EventStore) -> None:
        first = observation("r1", 1)
        await store.append([first])
        with pytest.raises(IntegrityError):
            await store.append([observation("r1", 2), first])
        with pytest.raises(IntegrityError):
            await store.append([first.model_copy(update={"stream": "r2"})])
        assert await store.count() == (1, 0)
        head = await store.stream_head("r1")
        assert head is not None and head.last_seq == 1
        assert await store.stream_head("r2") is None

    async def test_a_blob_whose_bytes_do_not_match_its_hash_is_refused(self, store: EventStore) -> None:
        data = page_text(1)
        with pytest.raises(IntegrityError):
            await store.append([observation("r1", 1, ax_tree=blob_hash(data))], {blob_hash(data): data + b"x"})
        assert await store.count() == (0, 0)

    async def test_a_blob_already_stored_is_still_checked_against_its_hash(self, store: EventStore) -> None:
        data = page_text(1)
        await store.append([observation("r1", 1, ax_tree=blob_hash(data))], {blob_hash(data): data})
        with pytest.raises(IntegrityError, match=blob_hash(data)[:12]):
            await store.append([observation("r1", 2, ax_tree=blob_hash(data))], {blob_hash(data): b"other bytes"})
        assert await store.count() == (1, 1)
        assert await store.get_blob(blob_hash(data)) == data

    async def test_a_large_batch_of_blobs_is_stored_whole(self, store: EventStore) -> None:
        pages = [page_text(200 + i) for i in range(LARGE_BATCH)]
        events = [observation("r1", i, ax_tree=blob_hash(page)) for i, page in enumerate(pages)]
        await store.append(events, {blob_hash(page): page for page in pages})
        assert [await store.get_blob(blob_hash(page)) for page in pages] == pages
        bad = {blob_hash(page): page for page in pages[:-1]} | {blob_hash(pages[-1]): b"tampered"}
        other = [observation("r2", i, ax_tree=sha) for i, sha in enumerate(bad)]
        with pytest.raises(IntegrityError, match=blob_hash(pages[-1])[:12]):
            await store.append(other, bad)
        assert await store.count() == (len(pages), len(pages))

    async def test_hashes_cover_awkward_content_exactly_as_schemas_compute_them(self, store: EventStore) -> None:
        data = page_text(9)
        cause = rationale('run é/ép "1"', 1, text='café – «quoted» "text" \\ back\nslash \u2028 😀')
        new = observation('run é/ép "1"', 1, ax_tree=blob_hash(data), causation_id=cause.event_id)
        returned = await store.append([cause, new], {blob_hash(data): data})
        for event in [*returned, *await collect(store.read_all())]:
            assert event.hash == event_hash(**{k: v for k, v in event.to_dict().items() if k != "hash"})
        assert returned[1].blobs == [blob_hash(data)]
        first = StoredEvent.seal(cause, seq=1, prev_hash=GENESIS_HASH, position=returned[0].position)
        assert returned == [first, StoredEvent.seal(new, seq=2, prev_hash=first.hash, position=returned[1].position)]

    async def test_concurrent_appends_to_one_stream_stay_gap_free(self, store: EventStore) -> None:
        pages = [page_text(100 + i) for i in range(20)]
        await asyncio.gather(
            *(
                store.append(
                    [observation("r1", i, ax_tree=blob_hash(pages[i])), rationale("r1", i)],
                    {blob_hash(pages[i]): pages[i]},
                )
                for i in range(20)
            )
        )
        assert [await store.get_blob(blob_hash(page)) for page in pages] == pages
        events = await collect(store.read_stream("r1"))
        assert [e.seq for e in events] == list(range(1, 41))
        assert all(b.prev_hash == a.hash for a, b in zip(events, events[1:], strict=False))
        # each append's two events stay adjacent: batches are not interleaved
        assert all(events[i].payload["step"] == events[i + 1].payload["step"] for i in range(0, 40, 2))

    # -- reading --------------------------------------------------------------------------------
    async def test_read_stream_pages_in_seq_order_and_resumes_after_seq(
        self, store: EventStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        self.set_page_size(monkeypatch, 3)
        for step in range(1, 11):
            await store.append([observation("r1/e1", step), observation("r1/e2", step)])
        events = await collect(store.read_stream("r1/e1"))
        assert [e.seq for e in events] == list(range(1, 11))
        assert [e.payload["step"] for e in events] == list(range(1, 11))
        assert {e.stream for e in events} == {"r1/e1"}
        assert [e.seq for e in await collect(store.read_stream("r1/e1", after_seq=7))] == [8, 9, 10]
        assert await collect(store.read_stream("r1/e1", after_seq=10)) == []
        assert await collect(store.read_stream("absent")) == []

    async def test_read_all_pages_in_position_order_with_filters(
        self, store: EventStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        self.set_page_size(monkeypatch, 4)
        for step in range(1, 8):
            await store.append([observation("run_1/e", step), rationale("run_1/e", step), observation("runX1/e", step)])
        everything = await collect(store.read_all())
        assert len(everything) == 21
        positions = [e.position or 0 for e in everything]
        assert positions == sorted(set(positions))
        after = await collect(store.read_all(after_position=positions[9]))
        assert [e.position for e in after] == positions[10:]
        # "_" is a LIKE wildcard: the prefix must match literally
        prefixed = await collect(store.read_all(stream_prefix="run_1/"))
        assert len(prefixed) == 14 and {e.stream for e in prefixed} == {"run_1/e"}
        typed = await collect(store.read_all(types=["rationale"]))
        assert [e.payload["step"] for e in typed] == list(range(1, 8))
        both = await collect(store.read_all(stream_prefix="runX1/", types=["observation", "rationale"]))
        assert [e.payload["step"] for e in both] == list(range(1, 8))
        assert await collect(store.read_all(types=["judgment"])) == []

    async def test_read_streams_reads_each_stream_whole_in_name_order_across_pages_and_queries(
        self, store: EventStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        self.set_page_size(monkeypatch, 1)  # read_streams pages hold 5 rows: pages end inside streams
        self.set_streams_per_query(monkeypatch, 2)  # and 5 streams take 3 queries
        names = ["r/e4", "r/e1", "r/e3", "r/e0", "r/e2"]
        for step in range(1, 5):
            await store.append([observation(name, step) for name in names] + [observation("r/other", step)])
        events = await collect(store.read_streams([*names, "r/e1", "absent"]))
        assert [(e.stream, e.seq) for e in events] == [(n, s) for n in sorted(names) for s in range(1, 5)]
        assert all(e.payload["url"].endswith(f"{e.stream}/{e.seq}") for e in events)
        assert [e.seq for e in await collect(store.read_streams(["r/e2"]))] == [1, 2, 3, 4]
        assert await collect(store.read_streams([])) == []

    async def test_read_chained_is_read_streams_as_chained_events_across_pages_and_queries(
        self, store: EventStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        self.set_page_size(monkeypatch, 1)
        self.set_streams_per_query(monkeypatch, 2)
        names = ["r/e2", "r/e0", "r/e1"]
        for step in range(1, 5):
            await store.append([observation(name, step) for name in names] + [rationale("r/other", step)])
        full = await collect(store.read_streams([*names, "absent"]))
        chained = await collect(store.read_chained([*names, "absent"]))
        assert chained == [ChainedEvent.of(e) for e in full] and len(chained) == 12
        assert all(type(e) is ChainedEvent for e in chained)
        assert await collect(EventLog.read_chained(store, names)) == chained  # the default, from read_streams
        payloads = [e.decode_payload() for e in chained]
        assert [(type(p), getattr(p, "url", None)) for p in payloads] == [(Observation, e.payload["url"]) for e in full]
        assert await collect(store.read_chained([])) == []

    async def test_a_reader_that_stops_early_leaves_the_store_usable(
        self, store: EventStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        self.set_page_size(monkeypatch, 2)
        await store.append([observation("r1", step) for step in range(1, 10)])
        reader = store.read_all()
        first = [await anext(reader) for _ in range(3)]  # the next page is being fetched meanwhile
        await reader.aclose()  # type: ignore[attr-defined]  # an async generator behind EventLog's AsyncIterator
        assert [e.seq for e in first] == [1, 2, 3]
        await store.append([observation("r1", 10)])
        assert [e.seq for e in await collect(store.read_stream("r1", after_seq=8))] == [9, 10]

    async def test_payloads_are_hashed_as_stored_and_parsed_only_when_read(self, store: EventStore) -> None:
        (event,) = await store.append([rationale("r1", 1, text="window seat")])
        (read,) = await collect(store.read_all())
        assert read.payload_json == event.payload_json and read.payload["text"] == "window seat"
        spaced = replace(read, payload_json=read.payload_json.replace(",", ", "))
        assert spaced.payload == read.payload, "the same JSON value..."
        assert spaced.compute_hash() != read.hash, "...but not the bytes that were hashed"

    async def test_list_streams_gives_every_head_sorted_and_filtered_by_prefix(self, store: EventStore) -> None:
        await store.append([observation("r2", 1), observation("r1/e2", 1), rationale("r1/e1", 1)])
        last = (await store.append([observation("r1/e2", 2)]))[-1]
        heads = await store.list_streams()
        assert [h.stream for h in heads] == ["r1/e1", "r1/e2", "r2"]
        assert heads[1] == StreamHead("r1/e2", 2, last.hash, "observation")
        assert heads[0].last_type == "rationale"
        assert [h.stream for h in await store.list_streams("r1/")] == ["r1/e1", "r1/e2"]
        assert await store.list_streams("nothing") == []
        assert await store.stream_head("r1/e2") == heads[1]
        assert await store.stream_head("r3") is None

    async def test_read_event_gives_one_event_by_stream_and_seq(self, store: EventStore) -> None:
        returned = await store.append([observation("r1/e1", 1), rationale("r1/e1", 1), observation("r1/e2", 1)])
        assert await store.read_event("r1/e1", 2) == returned[1]
        assert await store.read_event("r1/e2", 1) == returned[2]
        assert await store.read_event("r1/e1", 3) is None
        assert await store.read_event("r9", 1) is None

    async def test_decode_gives_typed_current_payloads(self, store: EventStore) -> None:
        new = rationale("r1", 4, text="the user prefers vegan food")
        await store.append([observation("r1", 4), new])
        decoded = [e.decode() for e in await collect(store.read_stream("r1"))]
        assert isinstance(decoded[0].payload, Observation)
        assert isinstance(decoded[1].payload, Rationale)
        assert decoded[1].payload == new.payload
        assert decoded[1].recorded_at == new.recorded_at

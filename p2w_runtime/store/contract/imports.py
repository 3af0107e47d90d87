"""The part of the event log's contract about events that arrive sealed: bundle import and old schema versions."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from p2w_rt.schemas import (
    CURRENT_VERSIONS,
    GENESIS_HASH,
    Rationale,
    StoredEvent,
    UpcastError,
    blob_hash,
    register_upcaster,
    unregister_upcaster,
)
from p2w_runtime.store import EventStore, IntegrityError
from p2w_runtime.store.contract._base import StoreFixture
from p2w_runtime.store.contract.builders import collect, observation, page_text, rationale


class ImportContract(StoreFixture):
    """``EventLog.append_stored`` (bundle import) and upcasting."""

    async def _exported(self, tmp_path: Path) -> tuple[list[StoredEvent], dict[str, bytes]]:
        source = await self.make_store(tmp_path, "source")
        try:
            data = page_text(3)
            await source.append(
                [observation("r1", 1, ax_tree=blob_hash(data)), rationale("r1/e1", 1)], {blob_hash(data): data}
            )
            await source.append([observation("r1/e1", 2), rationale("r1", 2)])
            events = await collect(source.read_all())
            return events, {blob_hash(data): data}
        finally:
            await source.close()

    async def test_append_stored_copies_events_with_their_hashes_and_is_idempotent(
        self, store: EventStore, tmp_path: Path
    ) -> None:
        events, blobs = await self._exported(tmp_path)
        await store.append([observation("other", 1)])
        assert await store.append_stored(events, blobs) == 4
        assert await store.append_stored(events, blobs) == 0
        copied = await collect(store.read_all(after_position=1))
        assert [(e.event_id, e.stream, e.seq, e.hash) for e in copied] == [
            (e.event_id, e.stream, e.seq, e.hash) for e in events
        ]
        assert [e.position for e in copied] == [2, 3, 4, 5]
        assert await store.count() == (5, 1)
        assert await store.get_blob(next(iter(blobs))) == next(iter(blobs.values()))
        # the chain continues from imported heads
        more = await store.append([observation("r1", 3)])
        assert more[0].seq == 3 and more[0].prev_hash == events[3].hash

    async def test_append_stored_continues_a_partly_imported_stream(self, store: EventStore, tmp_path: Path) -> None:
        events, blobs = await self._exported(tmp_path)
        assert await store.append_stored(events[:1], blobs) == 1
        assert await store.append_stored(events, blobs) == 3
        assert [e.hash for e in await collect(store.read_all())] == [e.hash for e in events]

    async def test_append_stored_refuses_an_event_that_does_not_continue_the_chain(
        self, store: EventStore, tmp_path: Path
    ) -> None:
        events, blobs = await self._exported(tmp_path)
        r1 = [e for e in events if e.stream == "r1"]
        with pytest.raises(IntegrityError, match=r1[1].event_id):
            await store.append_stored(r1[1:], blobs)
        assert await store.count() == (0, 0)
        await store.append([observation("r1", 1)])  # a different first event: the chain forks
        with pytest.raises(IntegrityError, match=r1[1].event_id):
            await store.append_stored(r1[1:], blobs)
        assert await store.count() == (1, 0)

    async def test_append_stored_refuses_a_tampered_event_and_keeps_nothing_of_the_batch(
        self, store: EventStore, tmp_path: Path
    ) -> None:
        events, blobs = await self._exported(tmp_path)
        tampered = StoredEvent.from_dict({**events[3].to_dict(), "payload": {**events[3].payload, "text": "edited"}})
        with pytest.raises(IntegrityError, match=tampered.event_id):
            await store.append_stored([*events[:3], tampered], blobs)
        assert await store.count() == (0, 0)

    async def test_append_stored_refuses_an_already_stored_event_id_with_other_content(
        self, store: EventStore, tmp_path: Path
    ) -> None:
        events, blobs = await self._exported(tmp_path)
        assert await store.append_stored(events, blobs) == 4
        edited = StoredEvent.from_dict({**events[3].to_dict(), "payload": {**events[3].payload, "text": "edited"}})
        forged = replace(edited, hash=edited.compute_hash())  # self-consistent, but not what is stored
        with pytest.raises(IntegrityError, match=forged.event_id):
            await store.append_stored([forged])
        assert [e.hash for e in await collect(store.read_all())] == [e.hash for e in events]

    async def test_append_stored_refuses_events_whose_blobs_are_missing(
        self, store: EventStore, tmp_path: Path
    ) -> None:
        events, _ = await self._exported(tmp_path)
        with pytest.raises(IntegrityError, match="blob"):
            await store.append_stored(events, {})
        assert await store.count() == (0, 0)

    # -- schema evolution -----------------------------------------------------------------------
    async def test_an_event_stored_at_an_old_schema_version_decodes_through_its_upcaster(
        self, store: EventStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        # Version 1 of a fictional rationale shape called the text "body"; version 2 renamed it to "text".
        fields = {
            "event_id": "0190a000-0000-7000-8000-000000000001",
            "stream": "r1",
            "seq": 1,
            "type": "rationale",
            "schema_version": 1,
            "recorded_at": "2024-07-01T12:00:00.000000Z",
            "causation_id": None,
            "payload": {"step": 2, "source": "generator", "body": "prefers window seats"},
            "blobs": [],
            "prev_hash": GENESIS_HASH,
        }
        old = StoredEvent.from_dict({**fields, "hash": StoredEvent.from_dict({**fields, "hash": ""}).compute_hash()})
        assert await store.append_stored([old]) == 1
        monkeypatch.setattr(Rationale, "SCHEMA_VERSION", 2)
        monkeypatch.setitem(CURRENT_VERSIONS, "rationale", 2)
        (stored,) = await collect(store.read_stream("r1"))
        assert stored.schema_version == 1 and stored.hash == old.hash
        with pytest.raises(UpcastError, match="rationale"):
            stored.decode()

        @register_upcaster("rationale", 1)
        def _body_to_text(payload: dict[str, Any]) -> dict[str, Any]:
            payload["text"] = payload.pop("body")
            return payload

        try:
            event = stored.decode()
        finally:
            unregister_upcaster("rationale", 1)
        assert isinstance(event.payload, Rationale)
        assert event.payload.text == "prefers window seats"
        assert event.schema_version == 2
        assert event.hash == old.hash
        # a new event written now carries the new version, and stored bytes were not rewritten
        (fresh,) = await store.append([rationale("r1", 3)])
        assert fresh.schema_version == 2 and fresh.prev_hash == old.hash
        assert (await collect(store.read_stream("r1")))[0].payload == old.payload

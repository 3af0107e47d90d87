"""Sealing an event gives the same bytes it always gave: the hash chain of every database and bundle depends on it.

``StoredEvent.seal``, ``format_timestamp`` and ``needs_redaction`` were rewritten for speed (docs/design/postgres.md,
third round); the hashes below were computed by the code before that rewrite.
"""

from __future__ import annotations

import gc
import json
import random
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from pydantic import TypeAdapter

from p2w_rt.schemas import GENESIS_HASH, NewEvent, Observation, Rationale, StoredEvent, format_timestamp
from p2w_runtime.redaction import MASK, add_secret, needs_redaction, seal_redacted
from p2w_runtime.store import IntegrityError, connect_store
from p2w_runtime.store._rows import event_to_row
from p2w_runtime.store._sql_append import GC_PAUSE_EVENTS

A, B = "a" * 64, "b" * 64
PINNED = [
    (
        NewEvent(
            event_id="018f0000-0000-7000-8000-000000000001",
            stream="run/t1",
            payload=Observation(step=3, url="http://x.test/é?q=1", title="Ünïcode ☃", ax_tree=B, screenshot=A),
            causation_id="c-1",
            recorded_at=datetime(2026, 12, 1, 13, 0, 5, 0, tzinfo=UTC),
        ),
        "2026-12-01T13:00:05.000000Z",
        [A, B],
        "bcad80dce02dfb01c17e5034d98d68fdb672959b185e37be14f3fefa1a4816a5",
    ),
    (
        NewEvent(
            event_id="018f0000-0000-7000-8000-000000000002",
            stream="run/t1",
            payload=Rationale(step=3, source="planner", text='why\n"quoted" 1.5e300'),
            recorded_at=datetime(2026, 12, 1, 15, 0, 5, 123456, tzinfo=timezone(timedelta(hours=2))),
        ),
        "2026-12-01T13:00:05.123456Z",
        [],
        "2fb7183f1eb821dffe3be5bf1efed0b35a8cb964b8bcb4c959cb52d7a2cb3615",
    ),
    (
        NewEvent(
            event_id="018f0000-0000-7000-8000-000000000003",
            stream="run/t1",
            payload=Observation(step=4, url="http://x.test/", title="t", ax_tree=A, screenshot=A),
            recorded_at=datetime(2026, 12, 1, 13, 0, 5, 999999, tzinfo=UTC),
        ),
        "2026-12-01T13:00:05.999999Z",
        [A],
        "31f6fc326e0c76a5d49b579c1834ec62da3baace78320ac029d5edae15818251",
    ),
]


def test_sealed_events_keep_the_hashes_of_the_code_before_the_rewrite() -> None:
    prev = GENESIS_HASH
    for seq, (new, recorded_at, blobs, digest) in enumerate(PINNED, start=1):
        stored = StoredEvent.seal(new, seq=seq, prev_hash=prev, position=seq)
        assert (stored.recorded_at, stored.blobs, stored.hash) == (recorded_at, blobs, digest)
        assert stored.compute_hash() == digest
        assert stored.payload == new.payload.model_dump(mode="json")
        assert event_to_row(stored, seq)[9] == json.dumps(blobs, separators=(",", ":"))
        prev = stored.hash


def test_the_fast_timestamp_spelling_is_strftimes() -> None:
    """``isoformat`` for UTC moments from year 1000 on; ``strftime`` (the old spelling) for everything else."""
    rng = random.Random(7)
    moments = [datetime(1000, 1, 1, tzinfo=UTC), datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)]
    moments += [datetime(2026, 1, 1, tzinfo=UTC) + timedelta(microseconds=rng.randrange(10**14)) for _ in range(500)]
    moments += [m.replace(microsecond=0) for m in moments[:50]]
    moments += [m.astimezone(timezone(timedelta(hours=-5, minutes=-30))) for m in moments[:50]]
    parsed = TypeAdapter(datetime).validate_python("2026-12-01T13:00:05Z")  # pydantic's own UTC tzinfo
    moments += [parsed, datetime(999, 5, 4, 3, 2, 1, 7, tzinfo=UTC)]
    for moment in moments:
        assert format_timestamp(moment) == moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ"), moment
    with pytest.raises(ValueError, match="timezone-aware"):
        format_timestamp(datetime(2026, 12, 1))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a plain observation of a shop page", False),
        ("api key and auth header mentioned in prose", False),
        ('{"headers":{"Authorization":"Bearer x"}}', True),
        ("PROXY-AUTHORIZATION: Basic abc", True),
        ("X-Api-Key: 123", True),
        ("api_key=abc", True),
        ("APIKEY=abc", True),
        ("see http://alice:pw@host.test/path", True),
        ("see http://host.test/a@b", False),
    ],
)
def test_needs_redaction_finds_the_header_words_in_any_case(text: str, expected: bool) -> None:
    assert needs_redaction(text) is expected


def test_a_sealed_event_has_a_registered_secret_masked_and_is_hashed_as_stored() -> None:
    secret = "sk-test-SEALED-9a8b7c6d5e"
    add_secret(secret)
    new = NewEvent(stream="run/t1", payload=Rationale(step=1, source="planner", text=f"the key is {secret}, sorry"))
    stored = seal_redacted(new, seq=1, prev_hash=GENESIS_HASH, position=1)
    assert secret not in stored.payload_json
    assert stored.payload["text"] == f"the key is {MASK}, sorry"
    assert stored.compute_hash() == stored.hash
    clean = NewEvent(stream="run/t1", payload=Rationale(step=2, source="planner", text="nothing to hide"))
    assert seal_redacted(clean, seq=2, prev_hash=stored.hash) == StoredEvent.seal(clean, seq=2, prev_hash=stored.hash)


async def test_a_large_append_pauses_the_collector_and_leaves_it_as_it_found_it(tmp_path: Path) -> None:
    async with await connect_store(tmp_path / "p2w.db") as store:
        batch = [
            NewEvent(stream="r1", payload=Rationale(step=i, source="planner", text="x")) for i in range(GC_PAUSE_EVENTS)
        ]
        assert gc.isenabled()
        await store.append(batch)
        assert gc.isenabled(), "on again after a large append"
        with pytest.raises(IntegrityError):
            await store.append(batch)  # the same event ids again: refused
        assert gc.isenabled(), "on again after a large append that failed"
        gc.disable()
        try:
            await store.append([e.model_copy(update={"event_id": f"e-{i}"}) for i, e in enumerate(batch)])
            assert not gc.isenabled(), "a caller's disabled collector stays disabled"
        finally:
            gc.enable()
        assert await store.count() == (2 * GC_PAUSE_EVENTS, 0)

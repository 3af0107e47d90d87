"""What reading may check, priced: each way of turning stored events into payloads, per event.

The events of ``bench_replay``'s synthetic episodes (about 100 per episode) are read once from a fresh
store; then, per event, best of five passes, each result dropped at once as a streaming reader does:

- ``json.loads`` of the payload text: the baseline bench_replay's projection target is set against;
- trust, plain dicts: ``orjson.loads`` and nothing else (no types; nested models would still be dicts);
- trust, models built without validation: ``orjson.loads`` + ``model_construct`` (nested fields stay dicts,
  so a fold reading ``action.parsed.name`` would break: shown for its cost only);
- validate from the stored text: ``StoredEvent.decode_payload`` (one pass of pydantic-core over the JSON);
- the same, then the trajectory's record built from the model (what projection did before records were decoded
  from the text);
- records from the text: ``decode_record`` (one ``msgspec`` pass into the record, the kept fields checked), the
  payload model for the types it does not take: what projection does now;
- the old read path: ``orjson.loads`` + upcast + ``validate_python`` + an ``Event`` envelope (``decode``);
- chain links: each event's ``prev_hash`` against the previous event's ``hash`` (what the fold checks);
- chain hashes: recomputing each event's sha256 (what ``verify`` does, and reading does not).

Results and the decision they settled: docs/design/projection.md.

Usage: python benchmarks/bench_decode.py [--episodes 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson
from bench_replay import build

from p2w_rt.schemas import PAYLOAD_TYPES, Action, Observation, Rationale, StoredEvent
from p2w_runtime.domain.trajectory._decode import decode_record
from p2w_runtime.domain.trajectory._records import ActionCommand, ActionRecord, ObservationRecord, RationaleRecord
from p2w_runtime.store import open_store

MODELS = {cls.model_fields["type"].default: cls for cls in PAYLOAD_TYPES}


async def stored_events(db: Path, episodes: int) -> list[StoredEvent]:
    run_id, _ = await build(db, episodes, 30)
    async with open_store(db) as store:
        return [e async for e in store.read_all(stream_prefix=f"{run_id}/")]


def per_event(events: list[StoredEvent], work: Callable[[StoredEvent], object]) -> float:
    """Microseconds per event, best of five passes."""
    best = float("inf")
    for _ in range(5):
        started = time.process_time()
        for event in events:
            work(event)
        best = min(best, time.process_time() - started)
    return best / len(events) * 1e6


def record_through_model(event: StoredEvent) -> object:
    payload = event.decode_payload()
    if type(payload) is Observation:
        return ObservationRecord(event.event_id, payload.step, payload.url, payload.title, payload.description)
    if type(payload) is Action:
        parsed = ActionCommand(payload.parsed.name, tuple(payload.parsed.args)) if payload.parsed else None
        return ActionRecord(event.event_id, payload.step, payload.raw, parsed, payload.status, payload.error)
    if type(payload) is Rationale:
        return RationaleRecord(event.event_id, payload.step, payload.source, payload.text, (*payload.cited_entry_ids,))
    return payload


def chain_links(events: list[StoredEvent]) -> None:
    for before, event in zip(events, events[1:], strict=False):
        if event.stream == before.stream and event.prev_hash != before.hash:
            raise AssertionError(event.event_id)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        events = asyncio.run(stored_events(Path(tmp) / "bench.db", args.episodes))
    events.sort(key=lambda e: (e.stream, e.seq))
    rows = [
        ("json.loads (baseline)", per_event(events, lambda e: json.loads(e.payload_json))),
        ("trust: orjson.loads, plain dicts", per_event(events, lambda e: orjson.loads(e.payload_json))),
        (
            "trust: orjson.loads + model_construct",
            per_event(events, lambda e: MODELS[e.type].model_construct(**orjson.loads(e.payload_json))),
        ),
        ("validate: decode_payload (validate_json)", per_event(events, StoredEvent.decode_payload)),
        ("validate, then build the record from the model", per_event(events, record_through_model)),
        ("records from the text (decode_record)", per_event(events, lambda e: decode_record(e) or e.decode_payload())),
        ("old path: decode (loads, validate, Event)", per_event(events, StoredEvent.decode)),
        ("recompute each chain hash (verify)", per_event(events, StoredEvent.compute_hash)),
    ]
    started = time.process_time()
    chain_links(events)
    rows.append(("check chain links (prev_hash)", (time.process_time() - started) / len(events) * 1e6))
    base = rows[0][1]
    print(f"{len(events)} events of {args.episodes} episodes, CPU per event, best of 5:")
    for label, micros in rows:
        print(f"  {label:48s} {micros:6.2f} us  = {micros / base:5.2f}x json.loads")


if __name__ == "__main__":
    main()

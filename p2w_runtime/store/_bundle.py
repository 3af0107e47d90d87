"""Portable single-file bundles: one run's events and blobs, to move a run between stores.

Format: a zstd-compressed JSON-lines stream. Line 1 is a header; then one line per blob
(base64 bytes) and one per event, events in position order. Import verifies every hash
before writing anything, so a tampered bundle is refused whole.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard

from p2w_runtime.errors import UserError
from p2w_runtime.store._recorder import Recorder
from p2w_runtime.store._runs import find_run, run_events
from schemas import GENESIS_HASH, StoredEvent, blob_hash

BUNDLE_FORMAT = "p2w-rt-bundle"
BUNDLE_VERSION = 1
EVENT_BATCH = 2000


class BundleError(UserError):
    """A bundle that cannot be read or fails verification; names the file and the line or event."""


@dataclass(frozen=True, slots=True)
class BundleSummary:
    run_id: str
    label: str
    events: int
    blobs: int
    inserted: int = 0


async def export_run(store: Recorder, ref: str, path: Path) -> BundleSummary:
    """Write run ``ref`` (id or label) with every stream under it and the blobs they reference."""
    run = await find_run(store, ref)
    referenced: set[str] = set()
    count = 0
    async for event in run_events(store, run.run_id):
        referenced.update(event.blobs)
        count += 1
    with path.open("wb") as raw, zstandard.ZstdCompressor(level=10).stream_writer(raw) as out:
        header = {
            "format": BUNDLE_FORMAT,
            "version": BUNDLE_VERSION,
            "run_id": run.run_id,
            "label": run.label,
            "events": count,
            "blobs": len(referenced),
        }
        out.write(_line(header))
        for sha in sorted(referenced):
            out.write(_line({"blob": sha, "data": base64.b64encode(await store.get_blob(sha)).decode()}))
        async for event in run_events(store, run.run_id):
            out.write(_line({"event": event.to_dict()}))
    return BundleSummary(run.run_id, run.label, count, len(referenced))


async def import_bundle(store: Recorder, path: Path) -> BundleSummary:
    """Verify the whole bundle, then append what the store does not have yet (idempotent)."""
    header = _verify_bundle(path)
    inserted = 0
    blobs: dict[str, bytes] = {}
    events: list[StoredEvent] = []
    for kind, value in _records(path):
        if kind == "blob":
            blobs[value[0]] = value[1]
            if len(blobs) >= 64:
                await store.append_stored([], blobs)
                blobs = {}
        elif kind == "event":
            events.append(value)
            if len(events) >= EVENT_BATCH:
                inserted += await store.append_stored(events, blobs)
                events, blobs = [], {}
    inserted += await store.append_stored(events, blobs)
    return BundleSummary(header["run_id"], header["label"], header["events"], header["blobs"], inserted)


def bundle_header(path: Path) -> dict[str, Any]:
    """The header of a bundle (run id, label, counts) without reading the rest."""
    kind, header = next(_records(path))
    assert kind == "header"
    return header


def _verify_bundle(path: Path) -> dict[str, Any]:
    heads: dict[str, tuple[int, str]] = {}
    blobs: set[str] = set()
    events = 0
    header: dict[str, Any] = {}
    for kind, value in _records(path):
        if kind == "header":
            header = value
        elif kind == "blob":
            sha, data = value
            if blob_hash(data) != sha:
                raise BundleError(f"{path}: blob {sha} does not match its content (bundle tampered)")
            blobs.add(sha)
        else:
            event: StoredEvent = value
            last_seq, last_hash = heads.get(event.stream, (0, GENESIS_HASH))
            if event.seq != last_seq + 1 or event.prev_hash != last_hash:
                raise BundleError(
                    f"{path}: stream {event.stream} seq {event.seq} event {event.event_id} breaks the chain"
                )
            if event.compute_hash() != event.hash:
                raise BundleError(
                    f"{path}: stream {event.stream} seq {event.seq} event {event.event_id} does not match its hash "
                    "(bundle tampered)"
                )
            missing = set(event.blobs) - blobs
            if missing:
                raise BundleError(f"{path}: event {event.event_id} references blobs not in the bundle")
            heads[event.stream] = (event.seq, event.hash)
            events += 1
    if events != header.get("events") or len(blobs) != header.get("blobs"):
        raise BundleError(
            f"{path}: bundle is incomplete ({events} events, {len(blobs)} blobs; header says "
            f"{header.get('events')} and {header.get('blobs')})"
        )
    return header


def _records(path: Path) -> Iterator[tuple[str, Any]]:
    """Yield ('header', dict), then ('blob', (sha, bytes)) and ('event', StoredEvent)."""
    if not path.is_file():
        raise BundleError(f"{path}: no such bundle file")
    try:
        with path.open("rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw) as stream:
            text = io.TextIOWrapper(stream, encoding="utf-8")
            for number, line in enumerate(text, start=1):
                record = json.loads(line)
                if number == 1:
                    if record.get("format") != BUNDLE_FORMAT or record.get("version") != BUNDLE_VERSION:
                        raise BundleError(f"{path}: not a p2w-rt bundle (version {BUNDLE_VERSION})")
                    yield "header", record
                elif "blob" in record:
                    yield "blob", (record["blob"], base64.b64decode(record["data"]))
                elif "event" in record:
                    yield "event", StoredEvent.from_dict(record["event"])
                else:
                    raise BundleError(f"{path}: line {number}: neither a blob nor an event")
    except BundleError:
        raise
    except (ValueError, KeyError, zstandard.ZstdError, UnicodeDecodeError) as exc:
        raise BundleError(f"{path}: unreadable bundle ({exc.__class__.__name__}: {str(exc)[:200]})") from exc


def _line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"

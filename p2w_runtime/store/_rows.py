"""Events <-> table rows, and blob compression: the store's hot paths (``benchmarks/bench_store.py``)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import orjson
import zstandard

from p2w_runtime.store._recorder import IntegrityError
from p2w_runtime.store._tables import BlobRow, EventRow
from schemas import StoredEvent, blob_hash, canonical_json

EVENTS = EventRow.__table__
BLOBS = BlobRow.__table__
EVENT_COLUMNS = tuple(
    EVENTS.c[name]
    for name in (
        "event_id", "stream", "seq", "position", "type", "schema_version", "recorded_at",
        "causation_id", "payload", "blobs", "prev_hash", "hash",
    )
)  # fmt: skip
"""The columns readers select, in the order ``row_to_event`` unpacks them."""

_codecs = threading.local()
"""zstd (de)compressor objects are not thread-safe; blobs are compressed in worker threads, so one per thread."""


def _compressor() -> zstandard.ZstdCompressor:
    if not hasattr(_codecs, "compressor"):
        _codecs.compressor = zstandard.ZstdCompressor(level=3)
    return _codecs.compressor


def _decompressor() -> zstandard.ZstdDecompressor:
    if not hasattr(_codecs, "decompressor"):
        _codecs.decompressor = zstandard.ZstdDecompressor()
    return _codecs.decompressor


def _loads(text: str) -> Any:
    """Parse stored JSON; text that no longer parses is kept raw so verify reports its hash mismatch."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return {"__unparseable__": text}


def row_to_event(row: Any) -> StoredEvent:
    """A row selected with ``EVENT_COLUMNS`` as the stored event it holds."""
    event_id, stream, seq, position, type_, version, recorded_at, causation_id, payload, blobs, prev, hash_ = row
    return StoredEvent(
        event_id, stream, seq, position, type_, version, recorded_at, causation_id,
        _loads(payload), [] if blobs == "[]" else _loads(blobs), prev, hash_,
    )  # fmt: skip


def event_to_row(event: StoredEvent, position: int) -> dict[str, Any]:
    return {
        "position": position,
        "event_id": event.event_id,
        "stream": event.stream,
        "seq": event.seq,
        "type": event.type,
        "schema_version": event.schema_version,
        "recorded_at": event.recorded_at,
        "causation_id": event.causation_id,
        "payload": canonical_json(event.payload).decode(),
        "blobs": canonical_json(event.blobs).decode(),
        "prev_hash": event.prev_hash,
        "hash": event.hash,
    }


def compress_blobs(blobs: Mapping[str, bytes]) -> list[dict[str, Any]]:
    """Check each blob against its hash and compress it (run in a worker thread: both release the GIL)."""
    rows = []
    compressor = _compressor()
    for sha, data in blobs.items():
        if blob_hash(data) != sha:
            raise IntegrityError(f"blob {sha[:12]}… does not match its content hash")
        rows.append({"sha256": sha, "size": len(data), "codec": "zstd", "data": compressor.compress(data)})
    return rows


def decompress_blob(sha: str, codec: str, data: bytes) -> bytes:
    if codec != "zstd":
        raise IntegrityError(f"blob {sha} uses unknown codec {codec!r}")
    return _decompressor().decompress(data)

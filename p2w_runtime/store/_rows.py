"""Events <-> table rows, and blob compression: the store's hot paths (``benchmarks/bench_store.py``)."""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import orjson
import zstandard

from p2w_rt.schemas import StoredEvent, blob_hash, canonical_json
from p2w_runtime.store._event_store import IntegrityError

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


def row_to_event(row: Any) -> StoredEvent:
    """A row selected with ``_core.EVENT_COLUMNS`` as the stored event it holds (the payload stays text until used)."""
    event_id, stream, seq, position, type_, version, recorded_at, causation_id, payload, blobs, prev, hash_ = row
    try:
        blob_list = [] if blobs == "[]" else orjson.loads(blobs)
    except orjson.JSONDecodeError:
        blob_list = [blobs]  # tampered: kept so that verify reports the hash mismatch
    return StoredEvent(
        event_id, stream, seq, position, type_, version, recorded_at, causation_id, payload, blob_list, prev, hash_
    )


def event_to_row(event: StoredEvent, position: int) -> tuple[Any, ...]:
    """The values of an events row, in the table's column order (``insert(core.EVENTS)`` compiles to that)."""
    return (
        position, event.event_id, event.stream, event.seq, event.type, event.schema_version, event.recorded_at,
        event.causation_id, event.payload_json, canonical_json(event.blobs).decode() if event.blobs else "[]",
        event.prev_hash, event.hash,
    )  # fmt: skip


def compress_blobs(blobs: Mapping[str, bytes], stored: frozenset[str]) -> list[tuple[str, int, str, bytes]]:
    """Check each blob against its hash and compress the ones not ``stored`` yet, as blobs rows.

    Runs in a worker thread: sha256 and zstd both release the GIL.
    """
    rows = []
    compressor = _compressor()
    for sha, data in blobs.items():
        if blob_hash(data) != sha:
            raise IntegrityError(f"blob {sha[:12]}… does not match its content hash")
        if sha not in stored:
            rows.append((sha, len(data), "zstd", compressor.compress(data)))
    return rows


def decompress_blob(sha: str, codec: str, data: bytes) -> bytes:
    if codec != "zstd":
        raise IntegrityError(f"blob {sha} uses unknown codec {codec!r}")
    return _decompressor().decompress(data)

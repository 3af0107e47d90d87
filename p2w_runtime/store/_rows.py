"""Events <-> table rows on the hot paths: sealing with one JSON serialisation, reading without ``model_construct``.

Measured in ``benchmarks/bench_store.py`` (see ``docs/design/store.md``): serialising each payload
once and splicing it into the hashed envelope, and building ``StoredEvent`` from our own rows without
validation or ``model_construct``'s per-field loop, are what bring the store near raw sqlite3.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import zstandard

from p2w_runtime.store._recorder import IntegrityError
from p2w_runtime.store._tables import BlobRow, EventRow
from schemas import NewEvent, StoredEvent, blob_hash, canonical_json, format_timestamp

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
        return json.loads(text)
    except ValueError:
        return {"__unparseable__": text}


def row_to_event(row: Any) -> StoredEvent:
    """A row selected with ``EVENT_COLUMNS`` as the stored event it holds."""
    event_id, stream, seq, position, type_, version, recorded_at, causation_id, payload, blobs, prev, hash_ = row
    fields = {
        "event_id": event_id,
        "stream": stream,
        "seq": seq,
        "position": position,
        "type": type_,
        "schema_version": version,
        "recorded_at": recorded_at,
        "causation_id": causation_id,
        "payload": _loads(payload),
        "blobs": [] if blobs == "[]" else _loads(blobs),
        "prev_hash": prev,
        "hash": hash_,
    }
    return _stored(fields)


_ALL_FIELDS = set(StoredEvent.model_fields)
_new = object.__new__
_set = object.__setattr__


def _stored(fields: dict[str, Any]) -> StoredEvent:
    """``StoredEvent.model_construct(**fields)`` without its per-field bookkeeping, five times cheaper.

    Our own rows carry every field already typed, so neither validation (15 µs with a 1 KB payload)
    nor ``model_construct`` (8 µs) earns its cost on the read path; this sets exactly the attributes
    ``model_construct`` sets. ``tests/store/contract.py`` checks the result equals a validated event.
    """
    event = _new(StoredEvent)
    _set(event, "__dict__", fields)
    _set(event, "__pydantic_fields_set__", _ALL_FIELDS.copy())  # a set of its own: model_copy updates it
    _set(event, "__pydantic_extra__", None)
    _set(event, "__pydantic_private__", None)
    return event


_encode = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False, check_circular=False
).encode


def _canonical(value: Any) -> bytes:
    """``schemas.canonical_json``'s bytes (same options) without building an encoder per call: six calls per event."""
    return _encode(value).encode()


@dataclass(frozen=True, slots=True)
class Prepared:
    """An event serialised as far as it can be before it has a place: done before the write lock is taken.

    Canonical JSON sorts keys, so the hashed envelope is ``{"blobs","causation_id","event_id","payload",``
    (``before``), then ``"prev_hash":…``, ``"recorded_at","schema_version",`` (``middle``), ``"seq":…``,
    then ``"stream","type"}`` (``after``); only ``prev_hash`` and ``seq`` wait for the stream's head.
    """

    new: NewEvent
    payload: dict[str, Any]
    payload_json: str
    blobs: list[str]
    blobs_json: str
    recorded_at: str
    schema_version: int
    before: bytes
    middle: bytes
    after: bytes


def prepare(new: NewEvent) -> Prepared:
    payload = new.payload_json()
    payload_json = _canonical(payload)
    blobs = sorted(set(new.payload.blob_hashes()))
    blobs_json = _canonical(blobs)
    recorded_at = format_timestamp(new.recorded_at)
    version = type(new.payload).SCHEMA_VERSION
    return Prepared(
        new=new,
        payload=payload,
        payload_json=payload_json.decode(),
        blobs=blobs,
        blobs_json=blobs_json.decode(),
        recorded_at=recorded_at,
        schema_version=version,
        before=b'{"blobs":%b,"causation_id":%b,"event_id":%b,"payload":%b,'
        % (blobs_json, _canonical(new.causation_id), _canonical(new.event_id), payload_json),
        middle=b',"recorded_at":%b,"schema_version":%d,"seq":' % (_canonical(recorded_at), version),
        after=b',"stream":%b,"type":%b}' % (_canonical(new.stream), _canonical(new.type)),
    )


def seal(prepared: Prepared, *, seq: int, prev_hash: str, position: int) -> tuple[StoredEvent, dict[str, Any]]:
    """The stored event and its row; the hash equals ``schemas.event_hash`` over the same fields."""
    new = prepared.new
    body = b'%b"prev_hash":%b%b%d%b' % (
        prepared.before,
        _canonical(prev_hash),
        prepared.middle,
        seq,
        prepared.after,
    )
    digest = hashlib.sha256(body).hexdigest()
    common = {
        "event_id": new.event_id,
        "stream": new.stream,
        "seq": seq,
        "position": position,
        "type": new.type,
        "schema_version": prepared.schema_version,
        "recorded_at": prepared.recorded_at,
        "causation_id": new.causation_id,
    }
    row = {**common, "payload": prepared.payload_json, "blobs": prepared.blobs_json, "prev_hash": prev_hash}
    row["hash"] = digest
    stored = _stored(
        {**common, "payload": prepared.payload, "blobs": prepared.blobs, "prev_hash": prev_hash, "hash": digest}
    )
    return stored, row


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
        "blobs": json.dumps(event.blobs),
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

"""Canonical JSON and the per-stream hash chain.

Kept in ``schemas`` (pure functions, no I/O) because the store, ``verify`` and
bundle import must all compute exactly the same bytes.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

import orjson

GENESIS_HASH = "0" * 64
"""``prev_hash`` of the first event of every stream."""


def canonical_json(value: Any) -> bytes:
    """Deterministic UTF-8 JSON: keys sorted by code point, no whitespace, shortest round-trip floats.

    orjson, not the standard library: the store serialises every payload through here, and it is ten times
    faster (docs/design/store.md). Payloads refuse NaN and infinities, which orjson would write as null.
    """
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def format_timestamp(moment: datetime) -> str:
    """UTC ISO-8601 with microseconds and a ``Z``; one spelling for hashing.

    A UTC moment (every ``utc_now``) takes ``isoformat``, 40% cheaper than ``strftime`` for the same bytes;
    years before 1000 keep ``strftime``, whose ``%Y`` padding differs between platforms.
    """
    if moment.tzinfo is UTC and moment.year >= 1000:
        return moment.isoformat(timespec="microseconds")[:-6] + "Z"  # drops "+00:00"
    if moment.tzinfo is None:
        raise ValueError("timestamps must be timezone-aware")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def event_hash(
    *,
    event_id: str,
    stream: str,
    seq: int,
    type: str,
    schema_version: int,
    recorded_at: str,
    causation_id: str | None,
    payload: dict[str, Any] | orjson.Fragment,
    blobs: list[str],
    prev_hash: str,
) -> str:
    """sha256 over the canonical envelope and payload.

    ``payload`` may be the canonical JSON text already, as an ``orjson.Fragment``: orjson splices it in
    verbatim, giving the same bytes as the dict it encodes without serialising it twice.

    ``position`` is left out on purpose: it is assigned by whichever database
    holds the event, and a run exported to another database keeps its hashes.
    """
    body = {
        "event_id": event_id,
        "stream": stream,
        "seq": seq,
        "type": type,
        "schema_version": schema_version,
        "recorded_at": recorded_at,
        "causation_id": causation_id,
        "payload": payload,
        "blobs": blobs,
        "prev_hash": prev_hash,
    }
    return hashlib.sha256(canonical_json(body)).hexdigest()


def content_hash(value: Any) -> str:
    """sha256 of a value's canonical JSON: the key producers' configs and passes are cached and claimed by."""
    return hashlib.sha256(canonical_json(value)).hexdigest()


def blob_hash(data: bytes) -> str:
    """Content address of a blob: sha256 of the uncompressed bytes."""
    return hashlib.sha256(data).hexdigest()

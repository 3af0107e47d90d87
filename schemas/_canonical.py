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

    A UTC moment (every ``utc_now``) is formatted from its fields with ``%``: the same bytes as ``isoformat`` at
    ~60 % of its cost (it asks the time zone for its offset), itself cheaper than ``strftime``. Years before 1000
    keep ``strftime``, whose ``%Y`` padding differs between platforms. Every appended event passes here.
    """
    if moment.tzinfo is UTC and moment.year >= 1000:
        m = moment
        fields = (m.year, m.month, m.day, m.hour, m.minute, m.second, m.microsecond)
        return "%04d-%02d-%02dT%02d:%02d:%02d.%06dZ" % fields  # noqa: UP031  (an f-string costs twice as much)
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
    body = {  # written in sorted key order, so it needs no OPT_SORT_KEYS: the same bytes as canonical_json(body)
        "blobs": blobs,
        "causation_id": causation_id,
        "event_id": event_id,
        "payload": payload,
        "prev_hash": prev_hash,
        "recorded_at": recorded_at,
        "schema_version": schema_version,
        "seq": seq,
        "stream": stream,
        "type": type,
    }
    return hashlib.sha256(orjson.dumps(body)).hexdigest()


def content_hash(value: Any) -> str:
    """sha256 of a value's canonical JSON: the key producers' configs and passes are cached and claimed by."""
    return hashlib.sha256(canonical_json(value)).hexdigest()


def blob_hash(data: bytes) -> str:
    """Content address of a blob: sha256 of the uncompressed bytes."""
    return hashlib.sha256(data).hexdigest()

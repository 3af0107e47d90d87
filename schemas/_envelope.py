"""The event envelope: what a writer hands the store, what the store keeps, what readers get."""

from __future__ import annotations

import os
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from p2w_rt.schemas._canonical import canonical_json, event_hash, format_timestamp
from p2w_rt.schemas._payload_decode import CURRENT_VERSIONS, decode_payload, parsed_payload, upcast_and_validate
from p2w_rt.schemas._payloads import AnyPayload

_uuid_lock = threading.Lock()
_last_uuid_ms = 0
_uuid_counter = 0


def uuid7() -> str:
    """A time-ordered UUIDv7 (RFC 9562), monotonic within this process."""
    global _last_uuid_ms, _uuid_counter
    with _uuid_lock:
        ms = time.time_ns() // 1_000_000
        if ms <= _last_uuid_ms:
            ms = _last_uuid_ms
            _uuid_counter += 1
        else:
            _uuid_counter = int.from_bytes(os.urandom(2), "big") & 0x3FF
        _last_uuid_ms = ms
        rand_a = _uuid_counter & 0xFFF
        rand_b = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = (ms << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b
    return str(uuid.UUID(int=value))


def utc_now() -> datetime:
    return datetime.now(UTC)


class NewEvent(BaseModel):
    """An event a writer wants appended; the store assigns ``seq``, ``position`` and the hashes."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    event_id: str = Field(default_factory=uuid7)
    stream: str = Field(min_length=1)
    payload: AnyPayload
    causation_id: str | None = None
    recorded_at: datetime = Field(default_factory=utc_now)

    @property
    def type(self) -> str:
        return self.payload.type

    def payload_dict(self) -> dict[str, Any]:
        """``payload.model_dump(mode="json")``, through the serializer directly: the same dict without the wrapper."""
        payload = self.payload
        dumped: dict[str, Any] = payload.__pydantic_serializer__.to_python(payload, mode="json")
        return dumped


@dataclass(slots=True)
class StoredEvent:
    """An event exactly as stored: the canonical payload JSON, before any upcasting.

    A plain slotted record (eventsourcing's ``StoredEvent``, which also keeps its state as bytes), not a
    pydantic model and not ``frozen``: the store builds tens of thousands a second from its rows, and a
    frozen dataclass costs several times as much to construct (docs/design/store.md, "Third round"). The log
    stays immutable where it matters: in the database (triggers) and through the hash chain, which any
    edited copy fails. The payload is parsed on first use, since hash checks, counting and filtering never
    need it. Readers that want typed payloads call ``decode``.
    """

    event_id: str
    stream: str
    seq: int
    position: int | None
    type: str
    schema_version: int
    recorded_at: str
    causation_id: str | None
    payload_json: str
    blobs: list[str]
    prev_hash: str
    hash: str
    _parsed: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)
    hash_derived: bool = field(default=False, init=False, repr=False, compare=False)
    """``hash`` was computed from this very content when it was read (a segment stores the hash of its last event
    only): comparing the two again proves nothing, so ``hash_matches`` does not."""

    @property
    def payload(self) -> dict[str, Any]:
        """The stored payload as a dict; text that no longer parses is kept raw so ``verify`` reports it."""
        if self._parsed is None:
            self._parsed = parsed_payload(self.payload_json)
        return self._parsed

    def to_dict(self) -> dict[str, Any]:
        """The portable form (bundles): every field but the store-local ``position``, the payload parsed."""
        return {f: getattr(self, f) for f in _PORTABLE_FIELDS}

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> StoredEvent:
        """Read the portable form back; a field of the wrong type, or a value no hash or database can hold (a lone
        surrogate, an integer beyond 64 bits), is a ``ValueError`` naming it, not a ``TypeError`` from hashing."""
        if not isinstance(record, dict) or set(record) != set(_PORTABLE_FIELDS):
            raise ValueError(f"an event needs exactly the fields {', '.join(_PORTABLE_FIELDS)}")
        for name, kinds in _FIELD_TYPES.items():
            value = record[name]
            if not isinstance(value, kinds) or isinstance(value, bool):
                raise ValueError(f"event field {name!r} has the wrong type ({type(value).__name__})")
            if isinstance(value, int) and not -(2**63) <= value < 2**63:
                raise ValueError(f"event field {name!r} is beyond the 64-bit integer range")
            if isinstance(value, str) and not _is_unicode(value):
                raise ValueError(f"event field {name!r} holds a lone surrogate, not Unicode text")
        if record["seq"] < 1 or not all(isinstance(b, str) and b.isascii() for b in record["blobs"]):
            raise ValueError("event field 'seq' must be >= 1 and 'blobs' a list of hashes")
        try:
            payload_json = canonical_json(record["payload"]).decode()
        except TypeError as exc:  # orjson: a lone surrogate, an integer beyond 64 bits, nesting past its limit
            raise ValueError(f"event field 'payload' cannot be stored: {exc}") from None
        fields = {k: v for k, v in record.items() if k != "payload"}
        return cls(position=None, payload_json=payload_json, **fields)

    def compute_hash(self) -> str:
        """The hash this event should carry given its stored content and ``prev_hash``.

        Computed over the stored payload text itself (an ``orjson.Fragment``), so any changed byte shows.
        """
        return event_hash(
            event_id=self.event_id,
            stream=self.stream,
            seq=self.seq,
            type=self.type,
            schema_version=self.schema_version,
            recorded_at=self.recorded_at,
            causation_id=self.causation_id,
            payload=orjson.Fragment(self.payload_json),
            blobs=self.blobs,
            prev_hash=self.prev_hash,
        )

    def hash_matches(self) -> bool:
        """Whether ``hash`` is this content's: what every chain check asks of an event. Content no event can hold
        (bytes, or a number, in a column SQLite's dynamic types let an editor fill so) matches no hash."""
        if self.hash_derived:
            return True
        try:
            return self.compute_hash() == self.hash
        except TypeError:
            return False

    @classmethod
    def seal(cls, new: NewEvent, *, seq: int, prev_hash: str, position: int | None = None) -> StoredEvent:
        """Turn a writer's event into its stored form, computing the chain hash.

        Every appended event passes here, so it is written for speed (positional construction, no field dict,
        no sort of an empty blob list): ``benchmarks/bench_store.py`` and docs/design/postgres.md, third round.
        """
        payload = new.payload
        payload_json = canonical_json(new.payload_dict()).decode()
        hashes = payload.blob_hashes()
        blobs = sorted(set(hashes)) if hashes else []
        recorded_at = format_timestamp(new.recorded_at)
        type_, version = payload.type, type(payload).SCHEMA_VERSION
        digest = event_hash(
            event_id=new.event_id, stream=new.stream, seq=seq, type=type_, schema_version=version,
            recorded_at=recorded_at, causation_id=new.causation_id, payload=orjson.Fragment(payload_json),
            blobs=blobs, prev_hash=prev_hash,
        )  # fmt: skip
        return cls(
            new.event_id, new.stream, seq, position, type_, version, recorded_at, new.causation_id, payload_json,
            blobs, prev_hash, digest,
        )  # fmt: skip

    def decode_payload(self) -> AnyPayload:
        """The payload at the current schema version, validated: what readers that fold events need.

        A payload at the current version is validated straight from its stored text, in one pass of
        pydantic-core (about the cost of ``json.loads`` alone); an older one is parsed, upcast, then validated.
        Validating is kept on read because it costs less than trusting: ``model_construct`` runs in Python and
        does not build nested models (docs/design/projection.md).
        """
        if self._parsed is None:
            return decode_payload(self.event_id, self.type, self.schema_version, self.payload_json)
        return upcast_and_validate(self.event_id, self.type, self.schema_version, self.payload)

    def payload_problem(self) -> str | None:
        """Why the payload does not validate against its model, in one line; None when it does.

        ``verify`` and bundle import check every payload this way; a trajectory's reader checks only the fields
        it keeps (docs/design/projection.md).
        """
        try:
            self.decode_payload()
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "payload"
            more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
            return f"payload does not validate: {where}: {first['msg']}{more}"
        except ValueError as exc:
            return f"payload does not validate: {exc}"
        return None

    def decode(self) -> Event:
        """Upcast the raw payload to the current schema and validate it (``decode_payload``), with its envelope."""
        payload = self.decode_payload()
        return Event.model_construct(  # payload and envelope are validated already
            event_id=self.event_id,
            stream=self.stream,
            seq=self.seq,
            position=self.position,
            type=self.type,
            schema_version=CURRENT_VERSIONS[self.type],
            recorded_at=datetime.fromisoformat(self.recorded_at.replace("Z", "+00:00")),
            causation_id=self.causation_id,
            payload=payload,
            blobs=self.blobs,
            prev_hash=self.prev_hash,
            hash=self.hash,
        )


class ChainedEvent(NamedTuple):
    """What a reader folding streams needs of a stored event: its place in its chain, its type and its payload.

    A ``StoredEvent`` without ``position``, ``recorded_at`` and ``blobs``, as a tuple: a store builds it from the
    selected row in one step, and the driver steps fewer columns (docs/design/projection.md). Immutable.
    """

    stream: str
    seq: int
    type: str
    schema_version: int
    causation_id: str | None
    event_id: str
    prev_hash: str
    hash: str
    payload_json: str

    @classmethod
    def of(cls, event: StoredEvent) -> ChainedEvent:
        return cls(
            event.stream, event.seq, event.type, event.schema_version, event.causation_id, event.event_id,
            event.prev_hash, event.hash, event.payload_json,
        )  # fmt: skip

    def decode_payload(self) -> AnyPayload:
        """The payload validated at the current schema version, as ``StoredEvent.decode_payload``."""
        return decode_payload(self.event_id, self.type, self.schema_version, self.payload_json)


_PORTABLE_FIELDS = (
    "event_id", "stream", "seq", "type", "schema_version", "recorded_at", "causation_id", "payload", "blobs",
    "prev_hash", "hash",
)  # fmt: skip
_FIELD_TYPES: dict[str, type | tuple[type, ...]] = {
    "event_id": str, "stream": str, "seq": int, "type": str, "schema_version": int, "recorded_at": str,
    "causation_id": (str, type(None)), "payload": dict, "blobs": list, "prev_hash": str, "hash": str,
}  # fmt: skip


def _is_unicode(text: str) -> bool:
    """Whether ``text`` encodes as UTF-8: JSON's ``\\ud800`` decodes to a lone surrogate, which does not."""
    if text.isascii():
        return True
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


class Event(BaseModel):
    """A decoded event: the envelope with a typed, current-version payload."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    event_id: str
    stream: str
    seq: int
    position: int | None
    type: str
    schema_version: int
    recorded_at: datetime
    causation_id: str | None
    payload: AnyPayload
    blobs: list[str]
    prev_hash: str
    hash: str

"""What the fold reads of an event: protocols a decoded ``Event``, a ``StoredEvent`` and a ``ChainedEvent`` meet."""

from __future__ import annotations

from typing import Protocol

from p2w_rt.schemas import AnyPayload


class Envelope(Protocol):
    """What the fold reads of an event besides its payload: a decoded ``Event`` or a ``StoredEvent`` has it.

    Readers fold stored events with their decoded payload and never build an ``Event``: pydantic's
    ``model_construct`` cost more than the rest of projection (docs/design/projection.md).
    """

    @property
    def event_id(self) -> str: ...
    @property
    def stream(self) -> str: ...
    @property
    def seq(self) -> int: ...
    @property
    def type(self) -> str: ...
    @property
    def causation_id(self) -> str | None: ...
    @property
    def prev_hash(self) -> str: ...
    @property
    def hash(self) -> str: ...


class StoredEnvelope(Envelope, Protocol):
    """A stored event as the fold reads it: a ``ChainedEvent`` or a ``StoredEvent``."""

    @property
    def schema_version(self) -> int: ...
    @property
    def payload_json(self) -> str: ...

    def decode_payload(self) -> AnyPayload: ...

"""A stored payload's JSON text -> its payload model at the current schema version: validated in one pass when it is
current, else parsed, upcast (``_upcast.py``) and validated."""

from __future__ import annotations

from typing import Any

import orjson
from pydantic import ConfigDict, TypeAdapter, ValidationError

from p2w_rt.schemas._payload_base import Payload
from p2w_rt.schemas._payloads import PAYLOAD_TYPES, AnyPayload
from p2w_rt.schemas._upcast import upcast

PAYLOAD_ADAPTER: TypeAdapter[AnyPayload] = TypeAdapter(AnyPayload, config=ConfigDict(defer_build=True))
"""Every payload model, built on first use like each model (``defer_build``): a reader that validates a few types
builds only theirs, which is most of what ``runs`` and ``show`` used to spend importing this package
(docs/design/startup.md)."""
PAYLOAD_MODELS: dict[str, type[Payload]] = {cls.model_fields["type"].default: cls for cls in PAYLOAD_TYPES}
CURRENT_VERSIONS: dict[str, int] = {name: cls.SCHEMA_VERSION for name, cls in PAYLOAD_MODELS.items()}


def decode_payload(event_id: str, type_: str, version: int, payload_json: str) -> AnyPayload:
    """A stored payload validated at the current schema version: from its text in one pass when it is current,
    else parsed, upcast and validated (``StoredEvent.decode_payload``)."""
    target = CURRENT_VERSIONS.get(type_)
    if target is None:
        raise ValueError(f"unknown event type {type_!r} (event {event_id})")
    if version == target:
        try:  # the type's own model, not the union: only its schema is built, and no wrapper is called
            payload: AnyPayload | None = PAYLOAD_MODELS[type_].__pydantic_validator__.validate_json(payload_json)
        except ValidationError:
            payload = None  # the general path below raises the error, for the payload as the envelope types it
        if payload is not None and payload.type == type_:
            return payload
    return upcast_and_validate(event_id, type_, version, parsed_payload(payload_json))


def parsed_payload(payload_json: str) -> dict[str, Any]:
    try:
        parsed: dict[str, Any] = orjson.loads(payload_json)
    except orjson.JSONDecodeError:
        return {"__unparseable__": payload_json}
    return parsed


def upcast_and_validate(event_id: str, type_: str, version: int, payload: dict[str, Any]) -> AnyPayload:
    target = CURRENT_VERSIONS.get(type_)
    if target is None:
        raise ValueError(f"unknown event type {type_!r} (event {event_id})")
    if not isinstance(payload, dict):
        raise ValueError(f"the payload of event {event_id} is not a JSON object")
    raw = upcast(type_, version, payload, target)
    return PAYLOAD_ADAPTER.validate_python({**raw, "type": type_})

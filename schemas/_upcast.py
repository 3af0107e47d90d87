"""Upcasters: old payload shapes are rewritten to the current one on read.

The registry maps ``(type, stored_version)`` to a function that returns the
payload at ``stored_version + 1``; reading applies them in a chain until the
payload reaches the model's current ``SCHEMA_VERSION``. Stored bytes are never
rewritten, so hash chains stay valid.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

UpcastFn = Callable[[dict[str, Any]], dict[str, Any]]

_REGISTRY: dict[tuple[str, int], UpcastFn] = {}


class UpcastError(ValueError):
    """A stored payload is at a version no upcaster chain leads from."""


class NewerSchemaError(Exception):
    """A stored payload is at a version newer than this code's model: written by a later p2w-rt.

    Not a ``ValueError``, so no reader takes it for a bad payload of its own (``verify`` would call it a mismatch,
    a bundle check a tamper): the event is fine, this code is too old, and every command says so in one line.
    """


def register_upcaster(event_type: str, from_version: int) -> Callable[[UpcastFn], UpcastFn]:
    """Decorator: ``fn`` lifts ``event_type`` payloads from ``from_version`` to the next one."""

    def decorate(fn: UpcastFn) -> UpcastFn:
        key = (event_type, from_version)
        if key in _REGISTRY:
            raise ValueError(f"an upcaster for {event_type} v{from_version} is already registered")
        _REGISTRY[key] = fn
        return fn

    return decorate


def unregister_upcaster(event_type: str, from_version: int) -> None:
    """Remove a registration (used by tests that simulate a model change)."""
    _REGISTRY.pop((event_type, from_version), None)


def upcast(event_type: str, version: int, payload: dict[str, Any], target: int) -> dict[str, Any]:
    """Apply the chain of upcasters from ``version`` to ``target``."""
    while version < target:
        fn = _REGISTRY.get((event_type, version))
        if fn is None:
            raise UpcastError(f"no upcaster for {event_type} from schema version {version} to {target}")
        payload = fn(dict(payload))
        version += 1
    if version > target:
        raise NewerSchemaError(
            f"{event_type} stored at schema version {version} is newer than this code ({target}); upgrade p2w-rt"
        )
    return payload

"""How large one event and one blob may be: checked when they are written, so whatever is stored can be exported.

A bundle carries one event or one blob (base64) per line, and import refuses a line over ``MAX_LINE_BYTES``, which
bounds its memory whatever a hostile file expands to. Before these limits an append took anything: a 100 MB action
was stored (1.6 GB of memory on the way), then ``export`` refused the run for its line, so the run could never
leave its database. The figures behind each limit are in docs/design/store.md, "Limits".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from p2w_rt.schemas import NewEvent, StoredEvent
from p2w_runtime.errors import clip
from p2w_runtime.store._event_store import IntegrityError

MAX_LINE_BYTES = 64 * 1024 * 1024
"""Longest bundle line read or written: bounds import memory whatever the file expands to."""
MAX_EVENT_BYTES = 16 * 1024 * 1024
"""Largest payload of one event (its canonical JSON, UTF-8): a quarter of a bundle line, so the envelope and any
escaping fit with room to spare; what is larger belongs in a blob."""
MAX_BLOB_BYTES = (MAX_LINE_BYTES - 1024) // 4 * 3
"""Largest blob: its base64 text and the line's JSON around it (under 1 KiB) fit in one bundle line (48 MiB less
768 bytes)."""


class TooLarge(IntegrityError):
    """An event or blob over its limit; the message names the event type and the field that holds the bulk."""

    exit_code = 1


def mib(size: int, limit: int | None = None) -> str:
    """``size`` in MiB to one decimal; in bytes where that would read as the ``limit`` it is over ("16.0 MiB, over
    the 16 MiB limit")."""
    shown = f"{size / 2**20:.1f} MiB"
    return f"{size:,} bytes" if limit is not None and shown == f"{limit / 2**20:.1f} MiB" else shown


def check_event_size(event: StoredEvent) -> None:
    """Refuse an event whose payload is over ``MAX_EVENT_BYTES``, naming the field that holds most of it."""
    text = event.payload_json
    if len(text) * 4 <= MAX_EVENT_BYTES:  # UTF-8 takes at most 4 bytes a character: no need to encode
        return
    size = len(text.encode())
    if size > MAX_EVENT_BYTES:
        raise TooLarge(
            f"{event.type} event of stream {clip(event.stream)}: field {largest_field(event.type, event.payload)} "
            f"makes it {mib(size, MAX_EVENT_BYTES)}, over the {MAX_EVENT_BYTES // 2**20} MiB limit of an event; "
            "not written"
        )


def check_blob_sizes(events: Iterable[NewEvent], blobs: Mapping[str, bytes]) -> None:
    """Refuse a blob over ``MAX_BLOB_BYTES``, naming the event type and field that reference it."""
    for sha, data in blobs.items():
        if len(data) > MAX_BLOB_BYTES:
            where = next(
                (f"{new.type} field {path}" for new in events if (path := _path_of(new.payload_dict(), sha, new.type))),
                f"blob {sha[:12]}…",
            )
            size, limit = mib(len(data), MAX_BLOB_BYTES), mib(MAX_BLOB_BYTES)
            raise TooLarge(f"{where}: a blob of {size}, over the {limit} limit of a blob; not written")


def largest_field(path: str, value: Any) -> str:
    """The dotted path to the leaf that holds most of ``value``'s JSON, walking into the largest part each time."""
    while isinstance(value, dict | list) and value:
        parts = value.items() if isinstance(value, dict) else enumerate(value)
        key, value = max(parts, key=lambda part: len(orjson.dumps(part[1])))
        path = f"{path}.{key}"
    return path


def _path_of(value: Any, sha: str, path: str) -> str | None:
    """The dotted path to where ``value`` names blob ``sha``, or None."""
    if value == sha:
        return path
    if isinstance(value, dict | list):
        parts = value.items() if isinstance(value, dict) else enumerate(value)
        for key, part in parts:
            if (found := _path_of(part, sha, f"{path}.{key}")) is not None:
                return found
    return None

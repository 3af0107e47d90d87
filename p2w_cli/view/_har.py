"""The episode page's HAR table: method, URL, status, type and size of each request an episode's final state
recorded, the first ``HAR_ROWS`` listed and the rest counted; a blob that cannot be read says why instead."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from p2w_cli.view._blobs import BlobProblem, read_blob
from p2w_runtime.store import EventStore

HAR_ROWS = 200
"""HAR entries listed on the page; the rest are counted."""


@dataclass(frozen=True, slots=True)
class HarEntry:
    method: str
    url: str
    status: int | None
    mime: str
    size: int | None


@dataclass(frozen=True, slots=True)
class HarSummary:
    entries: list[HarEntry]
    total: int
    error: str | None = None


async def har_summary(store: EventStore, sha: str) -> HarSummary:
    """Method, URL, status, type and size of each request in the recorded HAR."""
    try:
        log = json.loads(await read_blob(store, sha)).get("log", {})
        raw: list[dict[str, Any]] = log.get("entries", [])
        entries = [
            HarEntry(
                str(e.get("request", {}).get("method", "")),
                str(e.get("request", {}).get("url", "")),
                e.get("response", {}).get("status"),
                str(e.get("response", {}).get("content", {}).get("mimeType", "")),
                e.get("response", {}).get("content", {}).get("size"),
            )
            for e in raw[:HAR_ROWS]
        ]
        return HarSummary(entries, len(raw))
    except BlobProblem as exc:
        return HarSummary([], 0, str(exc))
    except (ValueError, AttributeError, TypeError) as exc:
        return HarSummary([], 0, f"HAR blob {sha} is unreadable: {type(exc).__name__}")

"""Sending traces to an OTLP/HTTP collector, and judgments to an Arize Phoenix as span annotations."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import orjson

from p2w_runtime.errors import UserError

ANNOTATION_TRIES = 20
"""Phoenix files received spans in batches, about a second apart, and refuses (404) annotations of spans it has
not filed yet: the annotations are sent after the spans, again while it says 404."""


class CollectorError(UserError):
    """The OTLP collector is down or refused the traces."""


def send_traces(url: str, body: bytes, sent: int) -> None:
    """POST one protobuf ``ExportTraceServiceRequest``; a collector that is down or says no is one line."""
    _post(url, body, "application/x-protobuf", "traces", f"{sent} episode(s) had been sent")


async def annotate(traces_url: str, annotations: list[dict[str, Any]]) -> None:
    """Send the judgments as Phoenix span annotations (``POST /v1/span_annotations?sync=true`` beside the traces)."""
    parts = urllib.parse.urlsplit(traces_url)
    url = f"{parts.scheme}://{parts.netloc}/v1/span_annotations?sync=true"
    body = orjson.dumps({"data": annotations})
    for tries_left in reversed(range(ANNOTATION_TRIES)):
        try:
            await asyncio.to_thread(_post, url, body, "application/json", "annotations", "the traces were sent")
            return
        except CollectorError as refused:
            if "HTTP 404" not in str(refused) or not tries_left:
                raise
        await asyncio.sleep(1)


def _post(url: str, body: bytes, content_type: str, what: str, done: str) -> None:
    """POST ``body``; a server that is down or says no (``what`` it refused, and what was ``done`` before) is one
    ``CollectorError`` line."""
    request = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            answer.read()
    except urllib.error.HTTPError as exc:
        said = exc.read()[:200].decode(errors="replace").strip().splitlines()
        detail = f": {said[0]}" if said else ""
        raise CollectorError(f"{url} refused the {what} (HTTP {exc.code}{detail}); {done}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise CollectorError(f"{url}: cannot reach the collector ({reason}); {done}") from None

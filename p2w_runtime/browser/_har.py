"""Remove credentials from a HAR before it becomes a blob: a recorded run must be shareable."""

from __future__ import annotations

import json

SECRET_HEADERS: frozenset[str] = frozenset(
    {"cookie", "set-cookie", "authorization", "proxy-authorization", "x-api-key", "x-auth-token"}
)


def scrub_har(data: bytes) -> bytes:
    """Drop secret headers and empty every cookie array of every request and response; the rest is kept as is."""
    har = json.loads(data)
    for entry in har.get("log", {}).get("entries", []):
        for part in ("request", "response"):
            message = entry.get(part)
            if not isinstance(message, dict):
                continue
            if isinstance(message.get("headers"), list):
                message["headers"] = [
                    header for header in message["headers"] if str(header.get("name", "")).lower() not in SECRET_HEADERS
                ]
            if "cookies" in message:
                message["cookies"] = []
    return json.dumps(har, ensure_ascii=False, separators=(",", ":")).encode()

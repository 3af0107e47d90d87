"""The endpoint an ``LlmClient`` talks to: its URL (given, ``OPENAI_BASE_URL``, or OpenAI's), checked before any call,
its key, and how messages show it."""

from __future__ import annotations

import os
from typing import NamedTuple
from urllib.parse import urlsplit, urlunsplit

from p2w_runtime.llm._errors import LlmConfigError
from p2w_runtime.redaction import redact_text

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_KEYLESS = "no-key"
"""Sent to endpoints that need no key (vLLM, Ollama); the openai package insists on some value."""


class Endpoint(NamedTuple):
    base_url: str
    api_key: str
    shown: str
    """The URL as messages show it (``_display_url``)."""


def endpoint(base_url: str | None, api_key: str | None) -> Endpoint:
    """The endpoint of ``base_url`` and ``api_key``, each else from the environment; only OpenAI's needs a key."""
    base_url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
    api_key = api_key or os.environ.get("OPENAI_API_KEY")
    check_url(base_url)
    shown = _display_url(base_url)
    if not api_key:
        if urlsplit(base_url).hostname == urlsplit(DEFAULT_BASE_URL).hostname:
            raise LlmConfigError(f"no API key for {shown}: pass --api-key or set OPENAI_API_KEY")
        api_key = _KEYLESS
    return Endpoint(base_url, api_key, shown)


def check_url(url: str) -> None:
    """An endpoint that cannot be an OpenAI-compatible server fails here, not after every retry has timed out."""
    try:
        parts = urlsplit(url)
        usable = parts.scheme in ("http", "https") and bool(parts.hostname)
        parts.port  # noqa: B018 - raises ValueError on a port that is not a number
    except ValueError:
        usable = False
    if not usable:
        raise LlmConfigError(
            f"LLM endpoint URL {redact_text(url)!r} (--base-url / OPENAI_BASE_URL) is not an http(s) URL with a host"
        )


def _display_url(url: str) -> str:
    """The endpoint as shown in messages: no credentials, no query string."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))

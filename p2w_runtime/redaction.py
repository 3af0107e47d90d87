"""The one redaction step for what p2w-rt writes down: every event at the store's append, every log record.

Secrets reach text p2w-rt did not write: an endpoint that echoes the API key in its error message, a
``--base-url`` with ``user:password@`` in it, a proxy that repeats the ``Authorization`` header. Asking every
writer to scrub its own fields misses the next one, so the two boundaries where text leaves the process pass it
through here instead. Removed are: the secrets registered with ``add_secret`` / ``add_url_credentials`` (the
configured API key, a URL's password), any ``Authorization`` (or API-key header) value, and the credentials of
any URL. Clean text is the common case and costs a few substring searches (``needs_redaction``).
"""

from __future__ import annotations

import base64
import re
import threading
from collections.abc import MutableMapping
from typing import Any
from urllib.parse import unquote, urlsplit

from p2w_rt.schemas import NewEvent, StoredEvent

MASK = "***"
MIN_SECRET_LENGTH = 8
"""Shorter "keys" (``EMPTY``, ``none``, ``no-key``) are placeholders for keyless endpoints; scrubbing them would
corrupt ordinary text."""

_SECRET_KEYS = frozenset({"authorization", "proxy-authorization", "api_key", "api-key", "apikey", "x-api-key"})
"""Mapping keys whose value is a credential whatever it looks like (headers, request options)."""
_HEADER = r"(?:proxy-)?authorization|x-api-key|api[_-]?key"
_URL_CREDENTIALS = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.-]*://)[^\s/?#@'\"<>]+@")
_CREDENTIAL_FIELD = re.compile(
    rf"(?P<name>\b(?:{_HEADER})\b[\"']?\s*[:=]\s*[\"']?)(?:(?:bearer|basic|token)\s+)?[^\s\"',;}}\]]+",
    re.IGNORECASE,
)
_KEY_SHAPES = re.compile(
    r"""\bsk-(?=[\w-]*\d)[\w-]{20,}  # OpenAI (sk-, sk-proj-), Anthropic (sk-ant-): a digit in it, so no hyphenated word
    |\bAIza[\w-]{35}  # Google
    |\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_\w{22,})  # GitHub
    |\b(?:AKIA|ASIA)[0-9A-Z]{16}\b  # AWS access key id""",
    re.VERBOSE,
)
"""Keys of the well-known providers by their shape, whoever holds them. Hex digests (event hashes, blob sha256s)
have none of these prefixes."""
_BEARER = re.compile(r"(?P<name>\bbearer\s+)[\w.~+/-]{16,}=*", re.IGNORECASE)
_QUERY_SECRET = re.compile(
    r"(?P<name>[?&](?:api[_-]?key|key|(?:access_|auth_|refresh_)?token|secret|password|sig(?:nature)?)=)[^&#\s\"'<>]+",
    re.IGNORECASE,
)
_HEADER_WORDS = re.compile(r"authorization|api[-_]?key")
"""What ``needs_redaction`` looks for in lower-cased text. One pass of a case-sensitive regex over ``str.lower()``
costs a third less than four substring searches, and a sixth of a case-insensitive regex (docs/design/postgres.md,
third round; docs/design/errors-and-secrets.md)."""

_secrets: tuple[str, ...] = ()
_lock = threading.Lock()


def add_secret(value: str | None) -> None:
    """Redact ``value`` from everything written from now on in this process (the configured API key)."""
    global _secrets
    if not value or len(value) < MIN_SECRET_LENGTH or value in _secrets:
        return
    with _lock:
        _secrets = tuple(sorted({*_secrets, value}, key=len, reverse=True))


def add_url_credentials(url: str | None) -> None:
    """Register a URL's password, raw and percent-decoded, and the Basic token an HTTP client builds from it."""
    if not url:
        return
    try:
        parts = urlsplit(url)
        user, password = parts.username, parts.password
    except ValueError:
        return
    if password:
        for value in {password, unquote(password)}:
            add_secret(value)
        token = f"{unquote(user or '')}:{unquote(password)}".encode()
        add_secret(base64.b64encode(token).decode())


def needs_redaction(text: str) -> bool:
    """Whether ``text`` holds anything ``redact_text`` would change (one scan; the usual answer is no)."""
    for secret in _secrets:
        if secret in text:
            return True
    if "@" in text and "://" in text and _URL_CREDENTIALS.search(text):  # "@" first: rare, and found by memchr
        return True
    return _HEADER_WORDS.search(text.lower()) is not None


def redact_text(text: str) -> str:
    for secret in _secrets:
        text = text.replace(secret, MASK)
    text = _URL_CREDENTIALS.sub(rf"\g<scheme>{MASK}@", text)
    return _CREDENTIAL_FIELD.sub(rf"\g<name>{MASK}", text)


def redact_agent_text(text: str) -> str:
    """``redact_text``, and also any key of a well-known shape (OpenAI, Anthropic, Google, GitHub, AWS), bearer
    token and secret query value (``?api_key=``, ``&token=``): for what an outside agent writes (its standard
    error), which may print a key of its own that p2w-rt never registered. Not applied at the store's append, where
    every event would pay the scans and a page, prompt or answer is recorded as it was."""
    text = _KEY_SHAPES.sub(MASK, redact_text(text))
    text = _BEARER.sub(rf"\g<name>{MASK}", text)
    return _QUERY_SECRET.sub(rf"\g<name>{MASK}", text)


def redact(value: Any) -> Any:
    """``value`` with every string redacted and every credential-named mapping entry masked (a JSON-like value)."""
    if isinstance(value, str):
        return redact_text(value) if needs_redaction(value) else value
    if isinstance(value, dict):
        return {
            k: MASK if isinstance(k, str) and k.lower() in _SECRET_KEYS and v else redact(v) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [redact(v) for v in value]
    return value


def seal_redacted(new: NewEvent, *, seq: int, prev_hash: str, position: int | None = None) -> StoredEvent:
    """``StoredEvent.seal`` of ``new`` with its payload redacted: what the store appends.

    The sealed JSON is scanned first, so a clean event (nearly all of them) is sealed once and not copied.
    """
    stored = StoredEvent.seal(new, seq=seq, prev_hash=prev_hash, position=position)
    if not needs_redaction(stored.payload_json):
        return stored
    payload = type(new.payload).model_validate(redact(new.payload_dict()))
    return StoredEvent.seal(
        new.model_copy(update={"payload": payload}), seq=seq, prev_hash=prev_hash, position=position
    )


def redact_log_record(_logger: Any, _method: str, event_dict: MutableMapping[str, Any]) -> dict[str, Any]:
    """structlog processor: the redaction step for log lines (file and console)."""
    return {
        key: redact(value) if isinstance(value, str | dict | list | tuple) else value
        for key, value in event_dict.items()
    }

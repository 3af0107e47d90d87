"""What ``--db`` names, told apart without loading a database driver: every command parses ``--db`` first."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote_plus

URL_PATTERN = re.compile(r"^postgres(ql)?(\+asyncpg)?://", re.IGNORECASE)


def is_postgres_url(location: object) -> bool:
    return isinstance(location, str) and URL_PATTERN.match(location) is not None


def store_location(text: str) -> Path | str:
    """What ``--db`` / ``P2W_DB`` name: a ``postgresql://`` URL stays text, anything else is a SQLite file."""
    return text if is_postgres_url(text) else Path(text)


_PASSWORD = re.compile(r"^([^:/]+://[^:@/]*:).*@", re.DOTALL)
"""From the user name's colon to the last "@": all of a password, even one with an unescaped "@", ":" or "/"."""
_QUERY_OPTION = re.compile(r"([?&])([^=&]*)=[^&]*")
"""An option of the query and its value, to the next "&" as the URL parser reads it ("#" included)."""


def shown_url(url: str) -> str:
    """The URL as messages name it: never its password, nor any part of it."""
    return _QUERY_OPTION.sub(_masked, _PASSWORD.sub(r"\1***@", url))


def _masked(option: re.Match[str]) -> str:
    """libpq's ``?password=`` option, which the driver takes too, however its name is spelled (``pass%77ord``)."""
    return f"{option[1]}{option[2]}=***" if unquote_plus(option[2]).lower() == "password" else option[0]

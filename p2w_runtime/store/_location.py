"""What ``--db`` names, told apart without loading a database driver: every command parses ``--db`` first."""

from __future__ import annotations

import re
from pathlib import Path

URL_PATTERN = re.compile(r"^postgres(ql)?(\+asyncpg)?://", re.IGNORECASE)


def is_postgres_url(location: object) -> bool:
    return isinstance(location, str) and URL_PATTERN.match(location) is not None


def store_location(text: str) -> Path | str:
    """What ``--db`` / ``P2W_DB`` name: a ``postgresql://`` URL stays text, anything else is a SQLite file."""
    return text if is_postgres_url(text) else Path(text)

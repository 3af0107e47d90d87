"""Naming a run in any database: ``LABEL``, ``RUN_ID``, ``march.db:LABEL`` or ``postgresql://h/db:LABEL``."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from p2w_runtime.domain import RunInfo, find_run
from p2w_runtime.store import EventStore, open_store, shown_url

DB_SUFFIXES = (".db", ".sqlite", ".sqlite3")


@dataclass(frozen=True, slots=True)
class RunRef:
    db: Path | str
    run: str
    text: str
    """As the user wrote it, for messages (a database URL's password masked)."""


_DATABASE_URL = re.compile(r"^postgres(ql)?(\+asyncpg)?://[^/]*/[^/:]+$", re.IGNORECASE)
"""A PostgreSQL URL down to its database name: what may stand before ``:RUN``."""


def parse_ref(text: str, default_db: Path | str) -> RunRef:
    """``file.db:LABEL`` names a run in another file (``postgresql://host/db:LABEL`` in a PostgreSQL database);
    anything else is a run in ``default_db``.

    The part before the last colon counts as a file when it has a database suffix or is an
    existing file, so a label that happens to contain a colon still works.
    """
    path, sep, run = text.rpartition(":")
    if sep and run and _DATABASE_URL.match(path):
        return RunRef(path, run, f"{shown_url(path)}:{run}")  # named in tables and JSON: never the password
    if sep and path and run and (Path(path).suffix.lower() in DB_SUFFIXES or Path(path).is_file()):
        return RunRef(Path(path), run, text)
    return RunRef(default_db, text, text)


@dataclass(frozen=True, slots=True)
class OpenRun:
    ref: RunRef
    store: EventStore
    info: RunInfo


@asynccontextmanager
async def open_runs(refs: Sequence[RunRef]) -> AsyncIterator[list[OpenRun]]:
    """Open every file named once, read-only (comparisons never create or write a file), and find each run."""
    async with AsyncExitStack() as stack:
        stores: dict[Path | str, EventStore] = {}
        found: list[OpenRun] = []
        for ref in refs:
            key = ref.db.resolve() if isinstance(ref.db, Path) else ref.db
            if key not in stores:
                stores[key] = await stack.enter_async_context(open_store(ref.db, create=False, read_only=True))
            found.append(OpenRun(ref, stores[key], await find_run(stores[key], ref.run)))
        yield found

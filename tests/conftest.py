"""Shared fixtures. The scripted LLM server is the project's only test double."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from p2w_runtime.store import EventStore, MemoryEventStore, open_store
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing.postgres import PostgresServer


@pytest.fixture
def scripted_llm() -> Iterator[ScriptedLlm]:
    """An OpenAI-compatible server on 127.0.0.1 answering from a script.

    Hosted on its own thread, so async tests, sync tests (CliRunner) and subprocesses can all
    call it; script with ``.script(...)`` / ``.rule(...)``, inspect ``.requests`` / ``.chat_requests``.
    """
    with ScriptedLlm() as server:
        yield server


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EventStore]:
    """A fresh, empty SQLite event store in the test's own folder."""
    async with open_store(tmp_path / "p2w.db") as recorder:
        yield recorder


@pytest.fixture
def memory_store() -> MemoryEventStore:
    """A fresh, empty in-memory event store, for tests that need a store but not SQL (docs/design/store.md).

    A module whose tests need no SQL overrides ``store`` with it, so its tests keep taking ``store``.
    """
    return MemoryEventStore()


@pytest.fixture(autouse=True, scope="session")
def _session_private_dirs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Keep the retrieval cache and the JSON log out of the user's own folders (subprocesses inherit this too)."""
    patch = pytest.MonkeyPatch()
    patch.setenv("P2W_CACHE_DIR", str(tmp_path_factory.mktemp("retrieval-cache")))
    patch.setenv("P2W_LOG_FILE", str(tmp_path_factory.mktemp("logs") / "p2w-rt.jsonl"))
    yield
    patch.undo()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One PostgreSQL server for the whole session (initdb in a temporary folder, 127.0.0.1, a free port)."""
    with PostgresServer() as server:
        yield server

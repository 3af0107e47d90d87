"""Shared fixtures. The scripted LLM server is the project's only test double."""

from __future__ import annotations

import signal
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import FrameType

import pytest

from p2w_runtime.store import EventStore, MemoryEventStore, open_store
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing.postgres import PostgresServer


_INTERRUPTED: list[str] = []


def _interrupt(signum: int, frame: FrameType | None) -> None:
    """Ctrl-C or SIGTERM: noted for the session, then the usual KeyboardInterrupt in whatever runs."""
    _INTERRUPTED.append(signal.Signals(signum).name)
    raise KeyboardInterrupt


def pytest_configure(config: pytest.Config) -> None:
    """One Ctrl-C (or SIGTERM) stops the whole run, with every fixture torn down (the PostgreSQL server too).

    pytest stops on a KeyboardInterrupt only when it reaches pytest, but a command under test catches it: click's
    CliRunner turns the command's exit code 130 into a result, and the run went on with the next test. So the
    signal is noted here and the session stops after the test it hit (``pytest_runtest_protocol``). SIGTERM would
    otherwise end the process without any teardown.
    """
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not when the caller made us ignore it
        signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    try:
        return (yield)
    finally:
        if _INTERRUPTED:
            item.session.shouldstop = f"interrupted by {_INTERRUPTED[0]}"


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

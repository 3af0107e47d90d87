"""Shared fixtures. The scripted LLM server is the project's only test double."""

from __future__ import annotations

import os
import signal
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

import pytest
from _pytest.tmpdir import tmppath_result_key

from p2w_runtime.store import EventStore, MemoryEventStore, open_store
from p2w_runtime.testing import ScriptedLlm
from p2w_runtime.testing.postgres import PostgresServer
from tests.helpers.suite_lock import INPUT_KEY, turn
from tests.helpers.suite_tmp import SuiteTmp

if TYPE_CHECKING:
    from playwright.async_api import Browser

_INTERRUPTED: list[str] = []
_SUITE_LOCK: list[str] = []
"""The lock file of a suite run in several processes (``suite_lock.py``), made and removed by the controlling one."""


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

    Installed even when the suite started with SIGINT ignored (a background job of a non-interactive shell:
    ``bash .ci/run &``): an ignored signal stays ignored across ``exec``, so every ``p2w-rt`` a test starts and
    stops with SIGINT ignored it, and those tests failed (``test_suite_signals.py``); a handled one is reset to the
    default.
    """
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    if not hasattr(config, "workerinput") and getattr(config.option, "numprocesses", None):
        fd, path = tempfile.mkstemp(prefix="p2w-suite-", suffix=".lock")  # the controlling process of ``pytest -n``
        os.close(fd)
        _SUITE_LOCK.append(path)


def pytest_unconfigure(config: pytest.Config) -> None:
    for path in _SUITE_LOCK:
        os.unlink(path)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist's hook, in the controlling process: each worker is handed the lock file's path."""
    node.workerinput[INPUT_KEY] = _SUITE_LOCK[0]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    # pytest's ``tmp_path`` teardown reads what its report hook stores after the setup phase; a Ctrl-C during setup
    # skips that hook, and the session's teardown then ended in ~70 lines of ``KeyError: StashKey``
    item.stash.setdefault(tmppath_result_key, {})
    lock = getattr(item.config, "workerinput", {}).get(INPUT_KEY)
    try:
        with turn(lock, alone=item.get_closest_marker("alone") is not None):
            return (yield)
    finally:
        if _INTERRUPTED:
            item.session.shouldstop = f"interrupted by {_INTERRUPTED[0]}"


SLOW_MODULES = frozenset(
    {
        # real headless Chromium (recording, forking, the browser layer, the viewer's pages)
        "test_browser", "test_browser_units", "test_browser_use", "test_concurrency", "test_episode_seals",
        "test_input_refusals",
        "test_intent_recorded", "test_layering", "test_record", "test_record_curation", "test_record_failures",
        "test_rerun", "test_resume", "test_sample_agent", "test_secrets", "test_user_errors", "test_webarena_ported",
        "test_webarena_stylesheets", "test_workers", "test_webarena_parity",
        # rerun and fork (Chromium and the embedder) from a run's own files
        "test_dataset", "test_example_runs", "test_portable_run", "test_progress_lines",
        # the sentence-transformers embedder, loaded and run
        "test_producer_keys", "test_retrieval", "test_retrieval_cf", "test_retrieval_cli", "test_retrieval_history",
        "test_sample",
        # a PostgreSQL server per session
        "test_migrate", "test_postgres_cli", "test_postgres", "test_postgres_open",
        # a p2w-rt process per test (each pays the command's start-up)
        "test_demo_model", "test_read_only",
    }
)  # fmt: skip
SLOW_TESTS = frozenset(
    {
        "test_demo.py::test_demo_record_records_the_sample_tasks_and_judges_them_with_the_llm",  # Chromium
        "test_terminal_output.py::test_a_real_process_writing_to_a_pipe_is_not_cut_at_80_columns",
        "test_agree_cli.py::test_llm_against_rules",
        "test_startup_imports.py::test_a_command_loading_a_model_says_so_on_a_terminal",  # the embedder's loader
        "test_webarena_evaluators.py::test_program_html_on_the_recorded_final_dom",  # Chromium
        "test_webarena_evaluators.py::test_program_html_that_cannot_run_offline_is_said_so",  # Chromium
    }
)
"""Modules and tests that are ``slow`` besides those marked in their module (the slowest of a `--durations` run):
``pytest -m "not slow"`` is the quick first check the README times, the default run takes everything."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.stem in SLOW_MODULES or f"{item.path.name}::{item.name}" in SLOW_TESTS:
            item.add_marker(pytest.mark.slow)


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


SUITE_TMP = SuiteTmp(
    killing=frozenset(
        {
            "test_episode_seals", "test_record_exec_kill", "test_record_exec_workers", "test_record_failures",
            "test_resume", "test_workers", "test_workers_faults",
        }
    )
)  # fmt: skip


@pytest.fixture(autouse=True, scope="session")
def _suite_tmpdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The session's own TMPDIR (``suite_tmp.py``), set up before and torn down after every other fixture: what a
    test or a process it started left in it fails the session, naming it and the test after which it appeared.
    Not after a Ctrl-C, which stops processes wherever they are."""
    tmp_path_factory.getbasetemp()  # pytest's own folders (``tmp_path``) stay where they are, kept for 3 sessions
    with SUITE_TMP.active() as left:
        yield
    if left and not _INTERRUPTED:
        pytest.fail("left in the temp dir, and removed: " + ", ".join(left), pytrace=False)


def pytest_runtest_logstart(nodeid: str, location: tuple[str, int | None, str]) -> None:
    SUITE_TMP.running = nodeid


def pytest_runtest_logfinish(nodeid: str, location: tuple[str, int | None, str]) -> None:
    SUITE_TMP.look(nodeid)


@pytest.fixture(autouse=True, scope="session")
def _session_private_dirs(_suite_tmpdir: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
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


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """A real headless Chromium (Debian's, else Playwright's own) for the viewer's browser tests."""
    from playwright.async_api import async_playwright

    from p2w_runtime.browser import LAUNCH_ARGS, find_chromium

    async with async_playwright() as p:
        launched = await p.chromium.launch(
            executable_path=find_chromium(None, bundled=p.chromium.executable_path), args=list(LAUNCH_ARGS)
        )
        yield launched
        await launched.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where a browser test saves its screenshots: ``$P2W_VIEW_SHOTS`` to keep them, else a temporary folder."""
    folder = Path(os.environ.get("P2W_VIEW_SHOTS") or tmp_path_factory.mktemp("view-screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(autouse=True, scope="module")
def _episodes_as_rows(request: pytest.FixtureRequest) -> Iterator[None]:
    """A module whose tests watch a recording through SQL on the ``events`` table (``EPISODES_AS_ROWS = True``)
    records with ``P2W_COMPACT=off``: its finished episodes stay one row per event instead of becoming segments."""
    if not getattr(request.module, "EPISODES_AS_ROWS", False):
        yield
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("P2W_COMPACT", "off")
        yield

"""The event store: an append-only, hash-chained log with content-addressed blobs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from p2w_runtime.store._bundle import BundleError, BundleSummary, export_run, import_bundle
from p2w_runtime.store._episodes import NOT_AN_OUTCOME, EpisodeRef, counted, counted_episodes, episode_attempts
from p2w_runtime.store._recorder import IntegrityError, Recorder, StoreError, StreamHead
from p2w_runtime.store._runs import (
    CLASSIFICATION_STREAM_SUFFIX,
    DERIVED_STREAM_SUFFIXES,
    JUDGMENT_STREAM_SUFFIX,
    RunInfo,
    UnknownRun,
    find_run,
    list_runs,
    run_events,
)
from p2w_runtime.store._verify import Problem, VerifyReport, verify_store
from p2w_runtime.store.sqlite import open_sqlite


async def connect_store(location: str | Path, *, create: bool = True) -> Recorder:
    """Open the store at ``location`` (a SQLite file path); the caller closes it."""
    return await open_sqlite(location, create=create)


@asynccontextmanager
async def open_store(location: str | Path, *, create: bool = True) -> AsyncIterator[Recorder]:
    """``async with open_store(path) as store:`` — opened, checked, closed on exit."""
    store = await connect_store(location, create=create)
    try:
        yield store
    finally:
        await store.close()


__all__ = [
    "CLASSIFICATION_STREAM_SUFFIX",
    "DERIVED_STREAM_SUFFIXES",
    "EpisodeRef",
    "JUDGMENT_STREAM_SUFFIX",
    "NOT_AN_OUTCOME",
    "BundleError",
    "BundleSummary",
    "Problem",
    "VerifyReport",
    "export_run",
    "import_bundle",
    "run_events",
    "verify_store",
    "IntegrityError",
    "Recorder",
    "RunInfo",
    "StoreError",
    "StreamHead",
    "UnknownRun",
    "connect_store",
    "counted",
    "counted_episodes",
    "episode_attempts",
    "find_run",
    "list_runs",
    "open_store",
]

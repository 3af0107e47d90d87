"""The event store: an append-only, hash-chained log with content-addressed blobs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from p2w_runtime.store._bundle import BundleError, BundleSummary, bundle_header, export_run, import_bundle
from p2w_runtime.store._claims import ClaimHolder, hold_claims
from p2w_runtime.store._episodes import NOT_AN_OUTCOME, EpisodeRef, counted, counted_episodes, episode_attempts
from p2w_runtime.store._recorder import IntegrityError, LabelTaken, ReadOnlyStore, Recorder, StoreError, StreamHead
from p2w_runtime.store._runs import (
    CLASSIFICATION_STREAM_SUFFIX,
    DERIVED_STREAM_SUFFIXES,
    JUDGMENT_STREAM_SUFFIX,
    RETRIEVAL_CF_STREAM_SUFFIX,
    RunInfo,
    UnknownRun,
    check_label_free,
    episode_ends,
    find_run,
    list_runs,
    run_events,
)
from p2w_runtime.store._seal import head_digest, same_digest, seal_streams
from p2w_runtime.store._signing import KeyFileError, fingerprint, load_private_key, load_public_key
from p2w_runtime.store._verify import Problem, VerifyReport, verify_store
from p2w_runtime.store.sqlite import open_sqlite


async def connect_store(location: str | Path, *, create: bool = True, read_only: bool = False) -> Recorder:
    """Open the store at ``location`` (a SQLite file path); the caller closes it.

    ``read_only`` for commands that must never write (comparisons); a file this process cannot write opens
    read-only anyway, so every reading command works on an archive.
    """
    return await open_sqlite(location, create=create and not read_only, read_only=read_only)


@asynccontextmanager
async def open_store(location: str | Path, *, create: bool = True, read_only: bool = False) -> AsyncIterator[Recorder]:
    """``async with open_store(path) as store:`` — opened, checked, closed on exit."""
    store = await connect_store(location, create=create, read_only=read_only)
    try:
        yield store
    finally:
        await store.close()


__all__ = [
    "CLASSIFICATION_STREAM_SUFFIX",
    "DERIVED_STREAM_SUFFIXES",
    "EpisodeRef",
    "JUDGMENT_STREAM_SUFFIX",
    "RETRIEVAL_CF_STREAM_SUFFIX",
    "NOT_AN_OUTCOME",
    "BundleError",
    "ClaimHolder",
    "LabelTaken",
    "ReadOnlyStore",
    "hold_claims",
    "BundleSummary",
    "Problem",
    "VerifyReport",
    "bundle_header",
    "export_run",
    "fingerprint",
    "KeyFileError",
    "load_private_key",
    "load_public_key",
    "head_digest",
    "same_digest",
    "seal_streams",
    "import_bundle",
    "run_events",
    "verify_store",
    "IntegrityError",
    "Recorder",
    "RunInfo",
    "StoreError",
    "StreamHead",
    "UnknownRun",
    "check_label_free",
    "connect_store",
    "counted",
    "counted_episodes",
    "episode_ends",
    "episode_attempts",
    "find_run",
    "list_runs",
    "open_store",
]

"""The event store: an append-only, hash-chained log with content-addressed blobs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from p2w_runtime.store._bundle import BundleSummary, bundle_header, export_bundle, import_bundle
from p2w_runtime.store._bundle_check import VerifiedBundle, verify_bundle
from p2w_runtime.store._bundle_lines import BundleError
from p2w_runtime.store._claims import ClaimHolder, hold_claims, this_process
from p2w_runtime.store._event_store import (
    BlobStore,
    EventLog,
    EventStore,
    IntegrityError,
    LabelTaken,
    ReadOnlyStore,
    RunCoordination,
    StoreError,
    StoreUnavailable,
    StreamHead,
    WorkItem,
)
from p2w_runtime.store._migrate import MigrateSummary, migrate_store
from p2w_runtime.store._seal import head_digest, same_digest, seal_streams
from p2w_runtime.store._signing import KeyFileError, fingerprint, load_private_key, load_public_key
from p2w_runtime.store._sql import SqlEventStore
from p2w_runtime.store._tree import TREE_SEPARATOR, read_tree, tree_prefix, tree_root
from p2w_runtime.store._verify import Problem, UnsealedTail, VerifyReport, verify_store
from p2w_runtime.store.memory import MemoryEventStore
from p2w_runtime.store.postgres import is_postgres_url, open_postgres, shown_url, store_location
from p2w_runtime.store.sqlite import open_sqlite


async def connect_store(location: str | Path, *, create: bool = True, read_only: bool = False) -> EventStore:
    """Open the store at ``location`` (a SQLite file path or a ``postgresql://`` URL); the caller closes it.

    ``read_only`` for commands that must never write (comparisons); a file this process cannot write opens
    read-only anyway, so every reading command works on an archive.
    """
    if is_postgres_url(location):
        return await open_postgres(str(location), create=create and not read_only, read_only=read_only)
    return await open_sqlite(location, create=create and not read_only, read_only=read_only)


@asynccontextmanager
async def open_store(
    location: str | Path, *, create: bool = True, read_only: bool = False
) -> AsyncIterator[EventStore]:
    """``async with open_store(path) as store:`` — opened, checked, closed on exit."""
    store = await connect_store(location, create=create, read_only=read_only)
    try:
        yield store
    finally:
        await store.close()


__all__ = [
    "BundleError",
    "ClaimHolder",
    "LabelTaken",
    "ReadOnlyStore",
    "hold_claims",
    "BundleSummary",
    "VerifiedBundle",
    "verify_bundle",
    "Problem",
    "UnsealedTail",
    "VerifyReport",
    "bundle_header",
    "export_bundle",
    "fingerprint",
    "KeyFileError",
    "load_private_key",
    "load_public_key",
    "head_digest",
    "same_digest",
    "seal_streams",
    "import_bundle",
    "verify_store",
    "read_tree",
    "tree_root",
    "tree_prefix",
    "TREE_SEPARATOR",
    "IntegrityError",
    "EventStore",
    "EventLog",
    "BlobStore",
    "RunCoordination",
    "SqlEventStore",
    "MemoryEventStore",
    "StoreError",
    "StoreUnavailable",
    "StreamHead",
    "connect_store",
    "open_store",
    "this_process",
    "WorkItem",
    "MigrateSummary",
    "migrate_store",
    "is_postgres_url",
    "shown_url",
    "store_location",
]

"""The event store: an append-only, hash-chained log with content-addressed blobs."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from p2w_runtime.lazy import lazy_names
from p2w_runtime.store._location import is_postgres_url, shown_url, store_location

if TYPE_CHECKING:
    from p2w_runtime.store._bundle import BundleSummary, bundle_header, export_bundle, import_bundle
    from p2w_runtime.store._bundle_check import VerifiedBundle, verify_bundle
    from p2w_runtime.store._bundle_lines import BundleError
    from p2w_runtime.store._claims import ClaimHolder, hold_claims, renewing_claims, this_process
    from p2w_runtime.store._core import LIFECYCLE_TYPES
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
        Summary,
        SummaryRows,
        WorkItem,
    )
    from p2w_runtime.store._limits import MAX_BLOB_BYTES, MAX_EVENT_BYTES, TooLarge, largest_field, mib
    from p2w_runtime.store._log_end import StreamEnded
    from p2w_runtime.store._migrate import MigrateSummary, migrate_store
    from p2w_runtime.store._seal import after_end_problem, append_with_seal, head_digest, same_digest, seal_streams
    from p2w_runtime.store._signing import KeyFileError, fingerprint, load_private_key, load_public_key
    from p2w_runtime.store._sql import SqlEventStore
    from p2w_runtime.store._tree import TREE_SEPARATOR, read_tree, tree_prefix, tree_root
    from p2w_runtime.store._verified_mark import MARK_STREAM, append_mark
    from p2w_runtime.store._verify import Problem, UnsealedTail, VerifyReport, verify_store
    from p2w_runtime.store._verify_incremental import verify_whole_store
    from p2w_runtime.store.memory import MemoryEventStore


_LAZY = {
    "BundleSummary": "_bundle",
    "bundle_header": "_bundle",
    "export_bundle": "_bundle",
    "import_bundle": "_bundle",
    "VerifiedBundle": "_bundle_check",
    "verify_bundle": "_bundle_check",
    "BundleError": "_bundle_lines",
    "ClaimHolder": "_claims",
    "hold_claims": "_claims",
    "renewing_claims": "_claims",
    "this_process": "_claims",
    "LIFECYCLE_TYPES": "_core",
    "BlobStore": "_event_store",
    "EventLog": "_event_store",
    "EventStore": "_event_store",
    "IntegrityError": "_event_store",
    "LabelTaken": "_event_store",
    "ReadOnlyStore": "_event_store",
    "RunCoordination": "_event_store",
    "StoreError": "_event_store",
    "StoreUnavailable": "_event_store",
    "StreamHead": "_event_store",
    "Summary": "_event_store",
    "SummaryRows": "_event_store",
    "WorkItem": "_event_store",
    "MAX_BLOB_BYTES": "_limits",
    "MAX_EVENT_BYTES": "_limits",
    "TooLarge": "_limits",
    "largest_field": "_limits",
    "mib": "_limits",
    "StreamEnded": "_log_end",
    "MigrateSummary": "_migrate",
    "migrate_store": "_migrate",
    "after_end_problem": "_seal",
    "append_with_seal": "_seal",
    "head_digest": "_seal",
    "same_digest": "_seal",
    "seal_streams": "_seal",
    "KeyFileError": "_signing",
    "fingerprint": "_signing",
    "load_private_key": "_signing",
    "load_public_key": "_signing",
    "SqlEventStore": "_sql",
    "TREE_SEPARATOR": "_tree",
    "read_tree": "_tree",
    "tree_prefix": "_tree",
    "tree_root": "_tree",
    "Problem": "_verify",
    "UnsealedTail": "_verify",
    "VerifyReport": "_verify",
    "verify_store": "_verify",
    "MARK_STREAM": "_verified_mark",
    "append_mark": "_verified_mark",
    "verify_whole_store": "_verify_incremental",
    "MemoryEventStore": "memory",
}
"""Where each exported name lives. They load on first use (``__getattr__``), so a command pays for SQLAlchemy,
the payload models or asyncpg only when it touches the store, and for PostgreSQL only on a ``postgresql://`` URL
(docs/design/startup.md)."""


__getattr__ = lazy_names(__name__, _LAZY, globals())


async def connect_store(location: str | Path, *, create: bool = True, read_only: bool = False) -> EventStore:
    """Open the store at ``location`` (a SQLite file path or a ``postgresql://`` URL); the caller closes it.

    ``read_only`` for commands that must never write (comparisons); a file this process cannot write opens
    read-only anyway, so every reading command works on an archive.
    """
    if isinstance(location, str):
        try:
            location = store_location(location)
        except ValueError as exc:
            from p2w_runtime.store._event_store import StoreError

            raise StoreError(str(exc)) from None
    if is_postgres_url(location):
        from p2w_runtime.store.postgres import open_postgres

        return await open_postgres(str(location), create=create and not read_only, read_only=read_only)
    from p2w_runtime.store.sqlite import open_sqlite

    return await open_sqlite(location, create=create and not read_only, read_only=read_only)


@asynccontextmanager
async def open_store(
    location: str | Path,
    *,
    create: bool = True,
    read_only: bool = False,
    notify: Callable[[str], None] | None = None,
) -> AsyncIterator[EventStore]:
    """``async with open_store(path) as store:`` — opened, checked, closed on exit.

    When the block ends without an error after appending events, the read models installed packages keep in this
    store (the viewer's first pages) are first brought up to the log's end (``_read_models.bring_forward``), so
    the next reader finds them current; ``notify`` is told of each build it waits for. A store from
    ``connect_store``, closed by its caller, leaves them to their next reader.
    """
    store = await connect_store(location, create=create, read_only=read_only)
    try:
        since = None if read_only else await store.log_end()
        yield store
        if since is not None and (end := await store.log_end()) != since:
            from p2w_runtime.store._read_models import bring_forward

            await bring_forward(store, since, end, notify)
    finally:
        await store.close()


__all__ = [
    "BundleError",
    "ClaimHolder",
    "LabelTaken",
    "ReadOnlyStore",
    "hold_claims",
    "LIFECYCLE_TYPES",
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
    "after_end_problem",
    "append_with_seal",
    "head_digest",
    "same_digest",
    "seal_streams",
    "import_bundle",
    "verify_store",
    "verify_whole_store",
    "append_mark",
    "MARK_STREAM",
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
    "StreamEnded",
    "StreamHead",
    "Summary",
    "SummaryRows",
    "connect_store",
    "open_store",
    "renewing_claims",
    "this_process",
    "WorkItem",
    "MigrateSummary",
    "migrate_store",
    "MAX_BLOB_BYTES",
    "MAX_EVENT_BYTES",
    "TooLarge",
    "largest_field",
    "mib",
    "is_postgres_url",
    "shown_url",
    "store_location",
]

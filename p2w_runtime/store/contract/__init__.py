"""The event store's contract: behaviour tests every backend passes unchanged, importable by any backend.

A backend's test module subclasses ``EventStoreContract`` and implements the hooks of ``StoreFixture``
(``make_store``, ``stored_blob_size``, ``set_page_size``; a ``SqlEventStore`` backend mixes in
``SqlStoreHooks`` for the last two), under pytest with pytest-asyncio in ``asyncio_mode = "auto"``:

    class TestMyStore(SqlStoreHooks, EventStoreContract):
        async def make_store(self, tmp_path, name="store"):
            return await open_my_store(...)

Backend-only checks (SQLite's triggers and WAL, PostgreSQL's) live beside that subclass. The class names do
not start with ``Test``, so pytest collects them only through a backend's subclass.
"""

from __future__ import annotations

from p2w_runtime.store.contract._base import StoreFixture
from p2w_runtime.store.contract.blobs import BlobStoreContract
from p2w_runtime.store.contract.compaction import CompactionContract
from p2w_runtime.store.contract.coordination import CoordinationContract
from p2w_runtime.store.contract.events import EventLogContract
from p2w_runtime.store.contract.imports import ImportContract
from p2w_runtime.store.contract.marks import VerifyMarkContract
from p2w_runtime.store.contract.segments import SegmentsContract
from p2w_runtime.store.contract.sql import SqlStoreHooks
from p2w_runtime.store.contract.summaries import SummariesContract


class EventStoreContract(
    EventLogContract,
    BlobStoreContract,
    ImportContract,
    SegmentsContract,
    CompactionContract,
    SummariesContract,
    CoordinationContract,
    VerifyMarkContract,
):
    """Every capability of ``EventStore``: the class a backend's tests subclass."""


__all__ = [
    "BlobStoreContract",
    "CompactionContract",
    "CoordinationContract",
    "EventLogContract",
    "EventStoreContract",
    "ImportContract",
    "SegmentsContract",
    "SqlStoreHooks",
    "SummariesContract",
    "VerifyMarkContract",
    "StoreFixture",
]

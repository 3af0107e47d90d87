"""The contract's storage hooks for a backend built on ``SqlEventStore`` (SQLite, PostgreSQL)."""

from __future__ import annotations

import pytest
from sqlalchemy import select

from p2w_runtime.store import EventStore, _sql
from p2w_runtime.store._core import BLOBS


class SqlStoreHooks:
    """Mix in before the contract: SQL backends share the ``blobs`` table and the reader's page size."""

    async def stored_blob_size(self, store: EventStore, sha256: str) -> int:
        assert isinstance(store, _sql.SqlEventStore)
        async with store.engine.connect() as conn:
            row = (await conn.execute(select(BLOBS.c.data).where(BLOBS.c.sha256 == sha256))).one()
        return len(row.data)

    def set_page_size(self, monkeypatch: pytest.MonkeyPatch, size: int) -> None:
        monkeypatch.setattr(_sql, "PAGE_SIZE", size)

    def set_streams_per_query(self, monkeypatch: pytest.MonkeyPatch, count: int) -> None:
        monkeypatch.setattr(_sql, "ID_CHUNK", count)

"""What every part of the contract needs from a backend: a fresh store, and two views into its storage."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from p2w_runtime.store import EventStore


class StoreFixture(ABC):
    """The hooks a backend's test class implements; the ``store`` fixture every contract test takes."""

    @abstractmethod
    async def make_store(self, tmp_path: Path, name: str = "store") -> EventStore:
        """A fresh, empty store; ``name`` distinguishes several stores in one test."""

    @abstractmethod
    async def stored_blob_size(self, store: EventStore, sha256: str) -> int:
        """Bytes the backend keeps for a blob (to check that it compresses)."""

    @abstractmethod
    def set_page_size(self, monkeypatch: pytest.MonkeyPatch, size: int) -> None:
        """Make reads fetch ``size`` rows per page, so that small tests cross page boundaries."""

    @abstractmethod
    def set_streams_per_query(self, monkeypatch: pytest.MonkeyPatch, count: int) -> None:
        """Make ``read_streams`` ask for at most ``count`` streams per query (a backend that reads streams one at
        a time has nothing to set), so that small tests cross query boundaries."""

    @pytest.fixture
    async def store(self, tmp_path: Path) -> AsyncIterator[EventStore]:
        store = await self.make_store(tmp_path)
        try:
            yield store
        finally:
            await store.close()

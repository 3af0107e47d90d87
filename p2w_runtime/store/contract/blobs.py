"""The blob store's contract: content addressing, compression, listing."""

from __future__ import annotations

import pytest

from p2w_rt.schemas import blob_hash
from p2w_runtime.store import EventStore
from p2w_runtime.store.contract._base import StoreFixture
from p2w_runtime.store.contract.builders import collect, observation, page_text


class BlobStoreContract(StoreFixture):
    """``BlobStore``: blobs stored once, compressed, read back; an absent hash is a ``KeyError``."""

    # -- blobs ----------------------------------------------------------------------------------
    async def test_blobs_are_stored_once_compressed_and_read_back(self, store: EventStore) -> None:
        data = page_text(7)
        sha = blob_hash(data)
        await store.append([observation("r1", 1, ax_tree=sha)], {sha: data})
        await store.append([observation("r1", 2, ax_tree=sha)], {sha: data})
        await store.append([observation("r2", 1, ax_tree=sha)])  # already stored: no need to pass it again
        assert await store.count() == (3, 1)
        assert await store.get_blob(sha) == data
        assert await self.stored_blob_size(store, sha) < len(data) // 2
        events = await collect(store.read_all())
        assert all(e.blobs == [sha] for e in events)

    async def test_get_blob_of_an_absent_hash_raises_key_error(self, store: EventStore) -> None:
        with pytest.raises(KeyError):
            await store.get_blob(blob_hash(b"absent"))

    async def test_blob_hashes_lists_every_blob_across_pages(
        self, store: EventStore, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        self.set_page_size(monkeypatch, 2)
        blobs = {blob_hash(page_text(i)): page_text(i) for i in range(5)}
        await store.append([observation("r1", i, ax_tree=sha) for i, sha in enumerate(blobs)], blobs)
        assert sorted([h async for h in store.blob_hashes()]) == sorted(blobs)
        assert await store.count() == (5, 5)

"""The blobs of an append, hash-checked and compressed in worker threads before the write lock is taken: one thread
per CPU for a large batch (docs/design/store.md)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from typing import Any

from p2w_runtime.store._rows import compress_blobs

BLOBS_PER_THREAD = 16
"""A batch with fewer blobs is compressed on one worker thread; a thread hand-off costs more than it saves."""
COMPRESSION_THREADS = os.cpu_count() or 1


def compress_in_threads(
    blobs: Mapping[str, bytes], known: frozenset[str]
) -> asyncio.Future[list[tuple[str, int, str, bytes]]] | None:
    """Start checking and compressing ``blobs`` (``known``: stored already, checked but not compressed again)."""
    if not blobs:
        return None
    loop = asyncio.get_running_loop()
    parts = min(COMPRESSION_THREADS, len(blobs) // BLOBS_PER_THREAD)
    if parts < 2:
        return loop.run_in_executor(None, compress_blobs, blobs, known)
    items = list(blobs.items())
    work = [loop.run_in_executor(None, compress_blobs, dict(items[i::parts]), known) for i in range(parts)]
    return asyncio.ensure_future(_joined(work))


async def _joined(parts: list[asyncio.Future[list[Any]]]) -> list[Any]:
    try:
        return [row for part in await asyncio.gather(*parts) for row in part]
    finally:
        for part in parts:
            settle(part)


def settle(future: asyncio.Future[Any]) -> None:
    """After a failed append the blobs are not needed: cancel their compression or consume its error."""
    if not future.done():
        future.cancel()
    elif not future.cancelled():
        future.exception()

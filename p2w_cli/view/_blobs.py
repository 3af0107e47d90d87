"""Blobs as the viewer serves them: checked against their hash, typed by their first bytes, never trusted."""

from __future__ import annotations

import re

from p2w_rt.schemas import blob_hash
from p2w_runtime.store import EventStore

SHA256 = re.compile(r"[0-9a-f]{64}")
IMAGE_TYPES = ((b"\x89PNG\r\n\x1a\n", "image/png", "png"), (b"\xff\xd8\xff", "image/jpeg", "jpg"))


class BlobProblem(LookupError):
    """A blob a page refers to is missing or does not match its hash; ``corrupt`` tells which."""

    def __init__(self, message: str, *, corrupt: bool) -> None:
        super().__init__(message)
        self.corrupt = corrupt


async def read_blob(store: EventStore, sha: str) -> bytes:
    """The blob's bytes, verified: a viewer must never show a page that is not the one recorded."""
    if not SHA256.fullmatch(sha):
        raise BlobProblem(f"{sha!r} is not a blob hash", corrupt=False)
    try:
        data = await store.get_blob(sha)
    except KeyError:
        raise BlobProblem(f"blob {sha} is not in the store", corrupt=False) from None
    except Exception as exc:  # zstd and codec errors: the stored bytes are damaged
        raise BlobProblem(f"blob {sha} is corrupt ({type(exc).__name__}: {exc})", corrupt=True) from None
    if blob_hash(data) != sha:
        raise BlobProblem(f"blob {sha} is corrupt (its bytes hash to {blob_hash(data)[:12]}…)", corrupt=True)
    return data


def media_type(data: bytes) -> tuple[str, str]:
    """(content type, file extension): an image by its magic bytes, anything else plain text."""
    for magic, mime, ext in IMAGE_TYPES:
        if data.startswith(magic):
            return mime, ext
    return "text/plain; charset=utf-8", "txt"

"""Compression dictionaries of compacted segments: one trained on a store's first compacted episodes, so the next
ones share what every episode repeats (the agent's prompts, the sites' page structure) instead of each carrying its
own copy (docs/design/store.md, "Compaction": 35 % fewer bytes than each episode compressed alone).

A dictionary is stored as a blob (content-addressed, append-only, checked by ``verify`` like any other) and named in
the codec of each segment compressed with it, so a segment says what decodes it and a dictionary is never changed
once used. It is loaded once per process, by its hash: the same bytes in every store, so one cache serves all.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import zstandard

from p2w_rt.schemas import blob_hash

DICTIONARY_MARK = "+dict:"
"""Between a codec and the hash of the dictionary its segment was compressed with."""
TRAIN_AFTER = 16
"""Compacted segments without a dictionary a store holds before it trains one from them."""
DICTIONARY_BYTES = 65_536
"""A dictionary's size: the largest measured to pay (``bench_recorded_bytes.py``)."""
LEVEL = 3

_loaded: dict[str, zstandard.ZstdCompressionDict] = {}
_codecs = threading.local()


def dictionary_of(codec: str) -> str | None:
    """The hash of the dictionary ``codec`` names, or None."""
    _, mark, sha = codec.partition(DICTIONARY_MARK)
    return sha if mark else None


def with_dictionary(codec: str, sha: str | None) -> str:
    return codec if sha is None else f"{codec}{DICTIONARY_MARK}{sha}"


def is_loaded(sha: str) -> bool:
    return sha in _loaded


def load(sha: str, data: bytes) -> bool:
    """Keep the dictionary ``data`` for the segments naming ``sha``; False (nothing kept) when the bytes are not
    the ones named."""
    if blob_hash(data) != sha:
        return False
    _loaded.setdefault(sha, zstandard.ZstdCompressionDict(data))
    return True


def train(texts: Sequence[bytes]) -> tuple[str, bytes]:
    """A dictionary trained on ``texts`` (segments' uncompressed text), kept loaded: its hash and bytes."""
    samples: list[bytes | bytearray | memoryview] = list(texts)
    data = zstandard.train_dictionary(min(DICTIONARY_BYTES, sum(map(len, texts)) // 10), samples).as_bytes()
    sha = blob_hash(data)
    load(sha, data)
    return sha, data


def compressor(sha: str | None) -> zstandard.ZstdCompressor:
    """This thread's compressor for dictionary ``sha`` (None: none), which must be loaded."""
    key = ("c", sha)
    found: zstandard.ZstdCompressor | None = getattr(_codecs, "cache", {}).get(key)
    if found is None:
        found = zstandard.ZstdCompressor(level=LEVEL, write_checksum=True, dict_data=_loaded[sha] if sha else None)
        _codecs.__dict__.setdefault("cache", {})[key] = found
    return found


def decompressor(sha: str | None) -> zstandard.ZstdDecompressor:
    """This thread's decompressor for dictionary ``sha`` (None: none); ``KeyError`` when it is not loaded."""
    key = ("d", sha)
    found: zstandard.ZstdDecompressor | None = getattr(_codecs, "cache", {}).get(key)
    if found is None:
        found = zstandard.ZstdDecompressor(dict_data=_loaded[sha] if sha else None)
        _codecs.__dict__.setdefault("cache", {})[key] = found
    return found

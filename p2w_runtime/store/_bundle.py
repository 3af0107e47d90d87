"""Portable single-file bundles: one run's events and blobs, to move a run between stores.

The file format is in ``_bundle_lines``; what import checks before it writes anything (every hash, the seals,
the run the events hold, the signature) is in ``_bundle_check``, so a tampered or mislabelled bundle is
refused whole.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2w_rt.schemas import RunStarted, StoredEvent
from p2w_runtime.files import check_output, partial_path, publish
from p2w_runtime.store._bundle_check import VerifiedBundle, verify_bundle
from p2w_runtime.store._bundle_lines import BUNDLE_FORMAT, BUNDLE_VERSION, BundleError, line, records
from p2w_runtime.store._event_store import EventStore
from p2w_runtime.store._limits import MAX_LINE_BYTES
from p2w_runtime.store._signing import fingerprint, sign
from p2w_runtime.store._tree import read_tree

EVENT_BATCH = 2000
BLOB_BATCH_BYTES = 64 * 1024 * 1024
"""Blob bytes held before they are written: import memory stays bounded however many large blobs come."""

Progress = Callable[[int, int], None]
"""Called with (events done, events in the bundle) as a bundle is written or imported."""


@dataclass(frozen=True, slots=True)
class BundleSummary:
    run_id: str
    label: str
    events: int
    blobs: int
    inserted: int = 0
    signed_by: str | None = None
    """Fingerprint of the key whose signature was written (export) or verified (import); ``None``: unsigned."""
    trusted: bool = False
    """On import: the signing key is the ``--trusted-key`` given (a valid signature by any other key only shows
    that the bundle is as its key holder wrote it)."""


async def export_bundle(
    store: EventStore,
    root: str,
    path: Path,
    *,
    force: bool = False,
    signing_key: Ed25519PrivateKey | None = None,
    progress: Progress | None = None,
) -> BundleSummary:
    """Write stream ``root`` (a run) with every stream under it and the blobs they reference; the header names it by
    the label of its ``run.started`` (an import refuses any other), not by what a listing's summary row says.

    The bundle is written to a temporary file beside ``path`` and moved into place when complete, so an
    interrupted export leaves no partial bundle; an existing ``path`` is replaced only with ``force``. It holds the
    run as the log stood when the export began (``_tree_through``): a run being recorded meanwhile is exported as
    it was then, its counts those of the events written.
    """
    check_output(path, force=force, what="the bundle file", error=BundleError)
    label = await _label_of(store, root)
    end = await store.log_end()
    referenced: set[str] = set()
    count = 0
    async for event in _tree_through(store, root, end):
        referenced.update(event.blobs)
        count += 1
    partial = partial_path(path)
    try:
        raw = partial.open("wb")
    except OSError as exc:
        raise BundleError(f"{path}: cannot write the bundle ({exc.strerror})") from None
    try:
        with raw, zstandard.ZstdCompressor(level=10).stream_writer(raw) as out:
            digest = hashlib.sha256()

            def write(record: dict[str, Any], what: str = "the header") -> None:
                text = line(record)
                if len(text) > MAX_LINE_BYTES:
                    raise BundleError(
                        f"{path}: {what} needs a line over {MAX_LINE_BYTES // 2**20} MiB, the import limit"
                    )
                digest.update(text)
                out.write(text)

            header = {"format": BUNDLE_FORMAT, "version": BUNDLE_VERSION, "run_id": root, "label": label}
            write({**header, "events": count, "blobs": len(referenced), "signed": signing_key is not None})
            for sha in sorted(referenced):
                write({"blob": sha, "data": base64.b64encode(await store.get_blob(sha)).decode()}, f"blob {sha}")
            done = 0
            async for event in _tree_through(store, root, end):
                write({"event": event.to_dict()}, f"event {event.event_id}")
                done += 1
                if progress is not None and (done % 500 == 0 or done == count):
                    progress(done, count)
            signature = sign(signing_key, digest.hexdigest()) if signing_key is not None else None
            if signature is not None:
                out.write(line({"signature": signature.to_record()}))
        publish(partial, path, force=force, error=BundleError)
    except OSError as exc:
        raise BundleError(f"{path}: cannot write the bundle ({exc.strerror})") from None
    finally:
        partial.unlink(missing_ok=True)
    signed_by = fingerprint(signature.public_key) if signature is not None else None
    return BundleSummary(root, label, count, len(referenced), signed_by=signed_by)


async def _label_of(store: EventStore, root: str) -> str:
    started = await store.read_event(root, 1)
    payload = started.decode_payload() if started is not None and started.type == "run.started" else None
    if not isinstance(payload, RunStarted):
        raise BundleError(f"no run {root} in {getattr(store, 'label', 'the store')}: a bundle holds a run")
    return payload.label


async def _tree_through(store: EventStore, root: str, end: int) -> AsyncIterator[StoredEvent]:
    """The tree's events up to log position ``end``: the same events on each of the export's two reads (its
    counts and blob list, then its lines), however much is appended to the run between them. Each stream's events
    up to a position are a prefix of it, its positions rising with its seq."""
    async for event in read_tree(store, root):
        if (event.position or 0) <= end:
            yield event


async def import_bundle(
    store: EventStore,
    bundle: Path | VerifiedBundle,
    *,
    trusted: bytes | None = None,
    progress: Progress | None = None,
) -> BundleSummary:
    """Verify the whole bundle (unless ``bundle`` is one ``verify_bundle`` passed), then append what the store
    does not have yet (idempotent). With ``trusted`` (a raw Ed25519 public key), the bundle must carry a valid
    signature by that key; without it, a signature the bundle carries must still verify.
    """
    if isinstance(bundle, VerifiedBundle):
        return await _append_verified(store, bundle, progress)
    with verify_bundle(bundle, trusted=trusted) as checked:
        return await _append_verified(store, checked, progress)


async def _append_verified(store: EventStore, checked: VerifiedBundle, progress: Progress | None) -> BundleSummary:
    """Append what the store lacks from the private copy ``checked`` was verified over.

    A batch at a time, each its own transaction, so that a large import never holds other writers off for its whole
    length. The run's stream is split around the streams under it: its ``run.started`` first, the rest of it (the
    episodes' seals, ``run.finished``) after them, so an import killed midway leaves what a recording killed midway
    leaves, a run without its end whose episodes so far are unsealed (``runs``: unfinished; ``verify``: an unsealed
    tail, no mismatch), and importing the bundle again completes it. The bundle holds the run's stream first: in
    that order, a killed import left a run shown completed, with seals naming episodes it did not hold.
    """
    batch = _Batches(store, checked.events, progress)
    held: list[StoredEvent] = []
    for kind, value in records(checked.copy, checked.path):
        if kind == "blob":
            await batch.blob(*value)
        elif kind == "event":
            if value.stream == checked.run_id and value.seq > 1:
                held.append(value)
            else:
                await batch.event(value)
    for event in held:
        await batch.event(event)
    await batch.flush()
    c = checked
    return BundleSummary(c.run_id, c.label, c.events, c.blobs, batch.inserted, c.signed_by, c.trusted)


class _Batches:
    """Events and blobs appended in batches of about ``EVENT_BATCH`` events, each cut, where it can be, where a
    stream begins (a recorded episode then lands whole), and at ``4 * EVENT_BATCH`` events where it cannot (memory
    stays bounded however long one stream is); blobs go with the next batch, or alone past ``BLOB_BATCH_BYTES``."""

    def __init__(self, store: EventStore, total: int, progress: Progress | None) -> None:
        self.store, self.total, self.progress = store, total, progress
        self.events: list[StoredEvent] = []
        self.blobs: dict[str, bytes] = {}
        self.blob_bytes = 0
        self.done = self.inserted = 0

    async def blob(self, sha: str, data: bytes) -> None:
        self.blobs[sha] = data
        self.blob_bytes += len(data)
        if self.blob_bytes >= BLOB_BATCH_BYTES:
            await self.store.append_stored([], self.blobs)
            self.blobs, self.blob_bytes = {}, 0

    async def event(self, event: StoredEvent) -> None:
        if len(self.events) >= EVENT_BATCH and (event.seq == 1 or len(self.events) >= 4 * EVENT_BATCH):
            await self.flush()
        self.events.append(event)

    async def flush(self) -> None:
        if not self.events and not self.blobs:
            return
        self.inserted += await self.store.append_stored(self.events, self.blobs)
        self.done += len(self.events)
        self.events, self.blobs, self.blob_bytes = [], {}, 0
        if self.progress is not None:
            self.progress(self.done, self.total)


def bundle_header(path: Path) -> dict[str, Any]:
    """The header of a bundle (run id, label, counts) without reading the rest: what it claims, unverified."""
    kind, header = next(records(path))
    assert kind == "header"
    return header

"""Portable single-file bundles: one run's events and blobs, to move a run between stores.

The file format is in ``_bundle_lines``; what import checks before it writes anything (every hash, the seals,
the run the events hold, the signature) is in ``_bundle_check``, so a tampered or mislabelled bundle is
refused whole.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2w_rt.schemas import StoredEvent
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
    label: str,
    force: bool = False,
    signing_key: Ed25519PrivateKey | None = None,
    progress: Progress | None = None,
) -> BundleSummary:
    """Write stream ``root`` (a run) with every stream under it and the blobs they reference; ``label`` is the
    name the bundle's header gives it.

    The bundle is written to a temporary file beside ``path`` and moved into place when complete, so an
    interrupted export leaves no partial bundle; an existing ``path`` is replaced only with ``force``.
    """
    check_output(path, force=force, what="the bundle file", error=BundleError)
    referenced: set[str] = set()
    count = 0
    async for event in read_tree(store, root):
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
            async for event in read_tree(store, root):
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
    """Append what the store lacks from the private copy ``checked`` was verified over."""
    inserted = done = 0
    blobs: dict[str, bytes] = {}
    events: list[StoredEvent] = []
    for kind, value in records(checked.copy, checked.path):
        if kind == "blob":
            blobs[value[0]] = value[1]
            if sum(map(len, blobs.values())) >= BLOB_BATCH_BYTES:
                await store.append_stored([], blobs)
                blobs = {}
        elif kind == "event":
            events.append(value)
            if len(events) >= EVENT_BATCH:
                inserted += await store.append_stored(events, blobs)
                done += len(events)
                events, blobs = [], {}
                if progress is not None:
                    progress(done, checked.events)
    inserted += await store.append_stored(events, blobs)
    if progress is not None:
        progress(checked.events, checked.events)
    c = checked
    return BundleSummary(c.run_id, c.label, c.events, c.blobs, inserted, c.signed_by, c.trusted)


def bundle_header(path: Path) -> dict[str, Any]:
    """The header of a bundle (run id, label, counts) without reading the rest: what it claims, unverified."""
    kind, header = next(records(path))
    assert kind == "header"
    return header

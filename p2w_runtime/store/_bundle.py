"""Portable single-file bundles: one run's events and blobs, to move a run between stores.

Format: a zstd-compressed JSON-lines stream. Line 1 is a header; then one line per blob
(base64 bytes) and one per event, events in position order; a signed bundle ends with a
signature line over the sha256 of every line before it. Import verifies every hash, the
seals and (with a trusted key) the signature before writing anything, so a tampered bundle
is refused whole. Reading is streamed and every line is bounded, so a small hostile file
cannot expand into gigabytes of memory.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2w_runtime.errors import UserError, clip
from p2w_runtime.store._event_store import EventStore
from p2w_runtime.store._runs import find_run, run_events
from p2w_runtime.store._seal import SEAL_EVENT_TYPES, seal_problem
from p2w_runtime.store._signing import ALGORITHM, Signature, fingerprint, sign
from p2w_runtime.store._signing import valid as valid_signature
from schemas import GENESIS_HASH, StoredEvent, StreamSeal, blob_hash

BUNDLE_FORMAT = "p2w-rt-bundle"
BUNDLE_VERSION = 2
"""Version 2 may end with a signature line; version 1 bundles (never signed) still import."""
READABLE_VERSIONS = (1, 2)
EVENT_BATCH = 2000
BLOB_BATCH_BYTES = 64 * 1024 * 1024
"""Blob bytes held before they are written: import memory stays bounded however many large blobs come."""
MAX_LINE_BYTES = 64 * 1024 * 1024
"""Longest bundle line read or written: bounds import memory whatever the file expands to (a blob of up to
48 MiB, base64-encoded, fits)."""

Progress = Callable[[int, int], None]
"""Called with (events done, events in the bundle) as a bundle is written or imported."""


class BundleError(UserError):
    """A bundle that cannot be read or fails verification; names the file and the line or event."""


@dataclass(frozen=True, slots=True)
class BundleSummary:
    run_id: str
    label: str
    events: int
    blobs: int
    inserted: int = 0
    signed_by: str | None = None
    """Fingerprint of the key that signed the bundle; on import only when it was checked against a trusted key."""


async def export_run(
    store: EventStore,
    ref: str,
    path: Path,
    *,
    force: bool = False,
    signing_key: Ed25519PrivateKey | None = None,
    progress: Progress | None = None,
) -> BundleSummary:
    """Write run ``ref`` (id or label) with every stream under it and the blobs they reference.

    The bundle is written to a temporary file beside ``path`` and moved into place when complete, so an
    interrupted export leaves no partial bundle; an existing ``path`` is replaced only with ``force``.
    """
    _check_target(path, force=force)
    run = await find_run(store, ref)
    referenced: set[str] = set()
    count = 0
    async for event in run_events(store, run.run_id):
        referenced.update(event.blobs)
        count += 1
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        raw = partial.open("wb")
    except OSError as exc:
        raise BundleError(f"{path}: cannot write the bundle ({exc.strerror})") from None
    try:
        with raw, zstandard.ZstdCompressor(level=10).stream_writer(raw) as out:
            digest = hashlib.sha256()

            def write(record: dict[str, Any], what: str = "the header") -> None:
                line = _line(record)
                if len(line) > MAX_LINE_BYTES:
                    raise BundleError(
                        f"{path}: {what} needs a line over {MAX_LINE_BYTES // 2**20} MiB, the import limit"
                    )
                digest.update(line)
                out.write(line)

            header = {"format": BUNDLE_FORMAT, "version": BUNDLE_VERSION, "run_id": run.run_id, "label": run.label}
            write({**header, "events": count, "blobs": len(referenced), "signed": signing_key is not None})
            for sha in sorted(referenced):
                write({"blob": sha, "data": base64.b64encode(await store.get_blob(sha)).decode()}, f"blob {sha}")
            done = 0
            async for event in run_events(store, run.run_id):
                write({"event": event.to_dict()}, f"event {event.event_id}")
                done += 1
                if progress is not None and (done % 500 == 0 or done == count):
                    progress(done, count)
            signature = sign(signing_key, digest.hexdigest()) if signing_key is not None else None
            if signature is not None:
                out.write(_line({"signature": signature.to_record()}))
        _publish(partial, path, force=force)
    except OSError as exc:
        raise BundleError(f"{path}: cannot write the bundle ({exc.strerror})") from None
    finally:
        partial.unlink(missing_ok=True)
    signed_by = fingerprint(signature.public_key) if signature is not None else None
    return BundleSummary(run.run_id, run.label, count, len(referenced), signed_by=signed_by)


def _check_target(path: Path, *, force: bool) -> None:
    if path.is_dir():
        raise BundleError(f"{path}: is a directory; -o names the bundle file")
    if path.exists() and not force:
        raise BundleError(f"{path}: already exists (--force replaces it)")
    if not path.parent.is_dir():
        raise BundleError(f"{path}: folder {path.parent} does not exist")


def _publish(partial: Path, path: Path, *, force: bool) -> None:
    """Move the finished bundle into place; without ``force``, a file that appeared meanwhile is kept."""
    if force:
        os.replace(partial, path)
        return
    try:
        os.link(partial, path)  # fails if path exists: no check-then-write race with a second export
    except FileExistsError:
        raise BundleError(f"{path}: already exists (--force replaces it)") from None
    except OSError:  # a file system without hard links: check, then rename (a short race is back)
        if path.exists():
            raise BundleError(f"{path}: already exists (--force replaces it)") from None
        os.replace(partial, path)


async def import_bundle(
    store: EventStore, path: Path, *, trusted: bytes | None = None, progress: Progress | None = None
) -> BundleSummary:
    """Verify the whole bundle, then append what the store does not have yet (idempotent).

    With ``trusted`` (a raw Ed25519 public key), the bundle must carry a valid signature by that key.
    """
    header, signature = _verify_bundle(path, trusted)
    inserted = done = 0
    blobs: dict[str, bytes] = {}
    events: list[StoredEvent] = []
    for kind, value in _records(path):
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
                    progress(done, header["events"])
    inserted += await store.append_stored(events, blobs)
    if progress is not None:
        progress(header["events"], header["events"])
    signed_by = fingerprint(signature.public_key) if signature is not None and trusted is not None else None
    return BundleSummary(header["run_id"], header["label"], header["events"], header["blobs"], inserted, signed_by)


def bundle_header(path: Path) -> dict[str, Any]:
    """The header of a bundle (run id, label, counts) without reading the rest."""
    kind, header = next(_records(path))
    assert kind == "header"
    return header


def _verify_bundle(path: Path, trusted: bytes | None) -> tuple[dict[str, Any], Signature | None]:
    """Check every hash, chain, payload and seal of the bundle, and its signature if ``trusted`` is given."""
    heads: dict[str, tuple[int, str]] = {}
    blobs: set[str] = set()
    seals: list[tuple[StoredEvent, StreamSeal]] = []
    events = 0
    header: dict[str, Any] = {}
    signature: Signature | None = None
    for kind, value in _records(path):
        if kind == "header":
            header = value
        elif kind == "signature":
            signature = value
        elif kind == "blob":
            sha, data = value
            if blob_hash(data) != sha:
                raise BundleError(f"{path}: blob {clip(sha)} does not match its content (bundle tampered)")
            blobs.add(sha)
        else:
            event: StoredEvent = value
            where = f"{path}: stream {clip(event.stream)} seq {event.seq} event {clip(event.event_id)}"
            last_seq, last_hash = heads.get(event.stream, (0, GENESIS_HASH))
            if event.seq != last_seq + 1 or event.prev_hash != last_hash:
                raise BundleError(f"{where} breaks the chain")
            if event.compute_hash() != event.hash:
                raise BundleError(f"{where} does not match its hash (bundle tampered)")
            if (problem := event.payload_problem()) is not None:
                raise BundleError(f"{where}: {clip(problem, 300)}")
            if set(event.blobs) - blobs:
                raise BundleError(f"{where} references blobs not in the bundle")
            if event.type in SEAL_EVENT_TYPES:
                seals.extend((event, seal) for seal in _seals_of(event, where))
            heads[event.stream] = (event.seq, event.hash)
            events += 1
    if events != header["events"] or len(blobs) != header["blobs"]:
        raise BundleError(
            f"{path}: bundle is incomplete ({events} events, {len(blobs)} blobs; header says "
            f"{header['events']} and {header['blobs']})"
        )
    for sealing, seal in seals:
        head = heads.get(seal.stream)
        reason = seal_problem(
            seal, head, head[1] if head and head[0] == seal.events else None, f"sealed by {sealing.type}"
        )
        if reason is not None:
            raise BundleError(f"{path}: stream {clip(seal.stream)}: {reason} (bundle tampered)")
    if trusted is not None:
        _check_signature(path, header, signature, trusted)
    return header, signature


def _seals_of(event: StoredEvent, where: str) -> list[StreamSeal]:
    try:
        return getattr(event.decode().payload, "seals", None) or []
    except ValueError as exc:
        raise BundleError(f"{where}: unreadable {event.type} ({clip(exc)})") from None


def _check_signature(path: Path, header: dict[str, Any], signature: Signature | None, trusted: bytes) -> None:
    if signature is None:
        raise BundleError(f"{path}: not signed, but --trusted-key requires a signature by {fingerprint(trusted)}")
    if signature.public_key != trusted:
        raise BundleError(
            f"{path}: signed by key {fingerprint(signature.public_key)}, not by the trusted key {fingerprint(trusted)}"
        )
    if signature.digest != header["_digest"] or not valid_signature(signature):
        raise BundleError(f"{path}: signature does not match the bundle (forged, or the bundle changed after signing)")


def _records(path: Path) -> Iterator[tuple[str, Any]]:
    """Yield ('header', dict), then ('blob', (sha, bytes)), ('event', StoredEvent) and ('signature', Signature).

    The header dict gains ``_digest``, the sha256 of every line before the signature (or of all lines), once
    the last line is read.
    """
    if not path.is_file():
        raise BundleError(f"{path}: no such bundle file")
    header: dict[str, Any] = {}
    digest = hashlib.sha256()
    signed_at: int | None = None
    number = 0
    try:
        with path.open("rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw) as stream:
            for number, line in _bounded_lines(io.BufferedReader(stream, 1 << 20), path):
                if signed_at is not None:
                    raise BundleError(f"{path}: line {number}: data after the signature line {signed_at}")
                record = _parse(line, path, number)
                if number == 1:
                    header = _header(record, path)
                    yield "header", header
                elif "signature" in record:
                    signed_at = number
                    yield "signature", _signature(record["signature"], path, number)
                    continue
                elif "blob" in record:
                    yield "blob", _blob(record, path, number)
                elif "event" in record:
                    yield "event", StoredEvent.from_dict(record["event"])
                else:
                    raise BundleError(f"{path}: line {number}: neither a blob nor an event")
                digest.update(line)
    except BundleError:
        raise
    except zstandard.ZstdError as exc:
        raise BundleError(f"{path}: unreadable bundle after line {number} ({clip(exc)})") from None
    except (ValueError, TypeError, KeyError) as exc:
        raise BundleError(f"{path}: line {number}: {clip(exc)}") from None
    if not header:
        raise BundleError(f"{path}: empty bundle")
    header["_digest"] = digest.hexdigest()


def _bounded_lines(stream: io.BufferedReader, path: Path) -> Iterator[tuple[int, bytes]]:
    """Numbered lines, none longer than ``MAX_LINE_BYTES`` (a longer one is refused before it is all read)."""
    number = 0
    while line := stream.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(line) > MAX_LINE_BYTES:
            raise BundleError(f"{path}: line {number} is longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB")
        yield number, line


def _parse(line: bytes, path: Path, number: int) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except RecursionError:
        raise BundleError(f"{path}: line {number}: JSON nested too deeply") from None
    except ValueError as exc:
        raise BundleError(f"{path}: line {number}: not JSON ({clip(exc)})") from None
    if not isinstance(record, dict):
        raise BundleError(f"{path}: line {number}: a JSON {type(record).__name__}, not an object")
    return record


def _header(record: dict[str, Any], path: Path) -> dict[str, Any]:
    if record.get("format") != BUNDLE_FORMAT or record.get("version") not in READABLE_VERSIONS:
        raise BundleError(f"{path}: not a p2w-rt bundle (versions {', '.join(map(str, READABLE_VERSIONS))})")
    for name, kind in (("run_id", str), ("label", str), ("events", int), ("blobs", int)):
        if not isinstance(record.get(name), kind) or isinstance(record.get(name), bool):
            raise BundleError(f"{path}: line 1: header field {name!r} missing or not a {kind.__name__}")
    return record


def _blob(record: dict[str, Any], path: Path, number: int) -> tuple[str, bytes]:
    sha, data = record.get("blob"), record.get("data")
    if not isinstance(sha, str) or not isinstance(data, str):
        raise BundleError(f"{path}: line {number}: a blob needs string fields 'blob' and 'data'")
    try:
        return sha, base64.b64decode(data, validate=True)
    except binascii.Error:
        raise BundleError(f"{path}: line {number}: blob {clip(sha)} is not base64") from None


def _signature(record: Any, path: Path, number: int) -> Signature:
    try:
        if record["alg"] != ALGORITHM:
            raise BundleError(f"{path}: line {number}: signature algorithm {clip(record['alg'])} is not {ALGORITHM}")
        return Signature(
            base64.b64decode(record["key"], validate=True), str(record["sha256"]), base64.b64decode(record["sig"])
        )
    except (KeyError, TypeError, binascii.Error):
        raise BundleError(f"{path}: line {number}: malformed signature") from None


def _line(record: dict[str, Any]) -> bytes:
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"

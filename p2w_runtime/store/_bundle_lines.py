"""Reading and writing bundle lines: the file format, bounded and checked line by line.

Format: a zstd-compressed JSON-lines stream. Line 1 is a header; then one line per blob (base64 bytes) and
one per event, events in position order; a signed bundle ends with a signature line over the sha256 of every
line before it. Every line is bounded, so a small hostile file cannot expand into gigabytes of memory.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import zstandard

from p2w_rt.schemas import StoredEvent
from p2w_runtime.errors import UserError, clip
from p2w_runtime.store._limits import MAX_LINE_BYTES
from p2w_runtime.store._signing import ALGORITHM, Signature

BUNDLE_FORMAT = "p2w-rt-bundle"
BUNDLE_VERSION = 2
"""Version 2 may end with a signature line; version 1 bundles (never signed) still import."""
READABLE_VERSIONS = (1, 2)


class BundleError(UserError):
    """A bundle that cannot be read or fails verification; names the file and the line or event."""


def records(source: Path, name: Path | None = None) -> Iterator[tuple[str, Any]]:
    """Yield ('header', dict), then ('blob', (sha, bytes)), ('event', StoredEvent) and ('signature', Signature).

    The header dict gains ``_digest``, the sha256 of every line before the signature (or of all lines), once
    the last line is read. Messages name ``name`` (the user's file) when ``source`` is a private copy of it.
    """
    path = name or source
    if not source.is_file():
        raise BundleError(f"{path}: no such bundle file")
    header: dict[str, Any] = {}
    digest = hashlib.sha256()
    signed_at: int | None = None
    number = 0
    try:
        with source.open("rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw) as stream:
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


def line(record: dict[str, Any]) -> bytes:
    """One bundle line as export writes it (NaN and infinities are not JSON: refused here as on import)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode() + b"\n"


def _bounded_lines(stream: io.BufferedReader, path: Path) -> Iterator[tuple[int, bytes]]:
    """Numbered lines, none longer than ``MAX_LINE_BYTES`` (a longer one is refused before it is all read)."""
    number = 0
    while text := stream.readline(MAX_LINE_BYTES + 1):
        number += 1
        if len(text) > MAX_LINE_BYTES:
            raise BundleError(f"{path}: line {number} is longer than {MAX_LINE_BYTES // (1024 * 1024)} MiB")
        yield number, text


class _NotJsonNumber(ValueError):
    """``NaN``, ``Infinity``, ``-Infinity``, or a number beyond a finite float (``1e999``, read as infinity):
    Python's decoder takes them, and orjson would store and hash each as ``null``."""


def _refuse_constant(name: str) -> Any:
    raise _NotJsonNumber(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _NotJsonNumber(f"number {clip(text, 40)} does not fit a finite float")
    return value


def _parse(text: bytes, path: Path, number: int) -> dict[str, Any]:
    try:
        record = json.loads(text, parse_constant=_refuse_constant, parse_float=_finite_float)
    except RecursionError:
        raise BundleError(f"{path}: line {number}: JSON nested too deeply") from None
    except _NotJsonNumber as exc:
        raise BundleError(f"{path}: line {number}: {exc}") from None
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
    if record["version"] >= 2 and not isinstance(record.get("signed"), bool):
        raise BundleError(f"{path}: line 1: header field 'signed' missing or not true/false")
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
            base64.b64decode(record["key"], validate=True),
            str(record["sha256"]),
            base64.b64decode(record["sig"], validate=True),
        )
    except (KeyError, TypeError, binascii.Error):
        raise BundleError(f"{path}: line {number}: malformed signature") from None

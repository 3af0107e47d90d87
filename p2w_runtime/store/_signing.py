"""Ed25519 signatures over bundles: hashes alone prove nothing once someone edits a bundle and recomputes them.

Keys are the PEM files OpenSSL writes (``openssl genpkey -algorithm ed25519 -out key.pem``, public half with
``openssl pkey -in key.pem -pubout -out key.pub``). A signature covers the sha256 of every bundle line before
it, prefixed with a domain tag, so it cannot be replayed as a signature over anything else.
"""

from __future__ import annotations

import base64
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from p2w_runtime.errors import UserError

SIGNED_PREFIX = b"p2w-rt bundle v2 sha256:"
ALGORITHM = "ed25519"


class KeyFileError(UserError):
    """A key file that is missing, unreadable or not an Ed25519 key of the kind asked for."""


@dataclass(frozen=True, slots=True)
class Signature:
    """The trailer of a signed bundle: who signed (raw public key), over what digest, and the signature."""

    public_key: bytes
    digest: str
    value: bytes

    def to_record(self) -> dict[str, str]:
        return {
            "alg": ALGORITHM,
            "key": base64.b64encode(self.public_key).decode(),
            "sha256": self.digest,
            "sig": base64.b64encode(self.value).decode(),
        }


def fingerprint(public_key: bytes) -> str:
    """A short name for a key in messages: the first 16 hex digits of the sha256 of its raw bytes."""
    return hashlib.sha256(public_key).hexdigest()[:16]


MAX_KEY_BYTES = 64 * 1024
"""A PEM key file is a few hundred bytes: reading stops past this, so ``/dev/zero`` cannot exhaust memory."""


def _read_pem(path: Path, kind: str) -> bytes:
    """The key file's bytes, from a regular file of at most ``MAX_KEY_BYTES`` (opened without blocking, so a named
    pipe is refused rather than waited on)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        raise KeyFileError(f"{path}: no such {kind} key file") from None
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot read {kind} key ({exc.strerror})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise KeyFileError(f"{path}: not a regular file; a {kind} key is a PEM file")
    try:
        with os.fdopen(fd, "rb") as file:
            data = file.read(MAX_KEY_BYTES + 1)
    except OSError as exc:
        raise KeyFileError(f"{path}: cannot read {kind} key ({exc.strerror})") from None
    if len(data) > MAX_KEY_BYTES:
        raise KeyFileError(f"{path}: larger than {MAX_KEY_BYTES // 1024} KiB, not a {kind} key file")
    return data


def load_private_key(path: Path) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(_read_pem(path, "private"), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise KeyFileError(f"{path}: not an unencrypted PEM private key ({str(exc)[:120]})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"{path}: a {type(key).__name__.removeprefix('_')}, not an Ed25519 private key")
    return key


def load_public_key(path: Path) -> bytes:
    """The raw 32 bytes of the Ed25519 public key in ``path``."""
    try:
        key = serialization.load_pem_public_key(_read_pem(path, "public"))
    except (ValueError, TypeError, UnsupportedAlgorithm) as exc:
        raise KeyFileError(f"{path}: not a PEM public key ({str(exc)[:120]})") from None
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError(f"{path}: a {type(key).__name__.removeprefix('_')}, not an Ed25519 public key")
    return key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def sign(key: Ed25519PrivateKey, digest: str, prefix: bytes = SIGNED_PREFIX) -> Signature:
    """Sign ``digest`` under the domain tag ``prefix`` (a bundle's by default; a verify mark has its own)."""
    public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return Signature(public, digest, key.sign(prefix + digest.encode()))


def valid(signature: Signature, prefix: bytes = SIGNED_PREFIX) -> bool:
    """Whether ``signature.value`` is the signature of its key over its digest under the domain tag ``prefix``."""
    try:
        Ed25519PublicKey.from_public_bytes(signature.public_key).verify(
            signature.value, prefix + signature.digest.encode()
        )
    except (InvalidSignature, ValueError):
        return False
    return True

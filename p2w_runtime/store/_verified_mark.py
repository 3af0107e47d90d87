"""Verify marks: what a whole-store ``verify`` that found nothing wrong appends to the store's own stream, so the
next one checks only what follows (docs/design/integrity.md, "Incremental verify").

A mark is an event like any other (``store.verified``, chained in ``MARK_STREAM``), never a rewrite. It commits to
the log as checked: its last position, how many events and blobs it held, and one digest over every stream's head
(stream, last seq, last hash). It describes a store, not a run: no run's tree holds it, so ``export`` of a run and
bundles never carry it, and ``migrate`` leaves it behind (its positions are the source's, not the target's).
Signed (``--sign-key``), its digest is covered by an Ed25519 signature under a domain tag of its own, so a
``--trusted-key`` check starts only from a mark that key signed.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping
from typing import TYPE_CHECKING

from p2w_rt.schemas import NewEvent, StoredEvent, StoreVerified, content_hash
from p2w_runtime.store._event_store import EventStore, ReadOnlyStore
from p2w_runtime.store._seal import DIGEST_PREFIX

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from p2w_runtime.store._verify import VerifyReport

MARK_STREAM = "p2w-rt.verified"
"""The store's own stream of verify marks: a root no run uses (run ids are UUIDs), holding no ``run.started``."""
MARK_SIGNED_PREFIX = b"p2w-rt store.verified v1 sha256:"
"""The domain tag of a mark's signature: it can never pass for a bundle's, nor a bundle's for it."""


def heads_digest(heads: Mapping[str, tuple[int, str]]) -> str:
    """One value for every stream's head (last seq, last hash), by stream name; streams with no event left out."""
    streams = [[stream, seq, sha] for stream, (seq, sha) in sorted(heads.items()) if seq > 0]
    return DIGEST_PREFIX + content_hash({"streams": streams})


def mark_digest(mark: StoreVerified) -> str:
    """What a mark's signature covers: every field but the signature's own."""
    return DIGEST_PREFIX + content_hash(mark.model_dump(mode="json", exclude={"signed_by", "signature"}))


def signed(mark: StoreVerified, key: Ed25519PrivateKey) -> StoreVerified:
    from p2w_runtime.store._signing import sign  # cryptography, only for a mark that is signed or checked

    signature = sign(key, mark_digest(mark), MARK_SIGNED_PREFIX)
    text = {"signed_by": signature.public_key, "signature": signature.value}
    return mark.model_copy(update={name: base64.b64encode(raw).decode() for name, raw in text.items()})


def signer(mark: StoreVerified) -> bytes | None:
    """The raw public key whose valid signature the mark carries, else None (unsigned, or the signature fails)."""
    if mark.signed_by is None or mark.signature is None:
        return None
    try:
        key, value = base64.b64decode(mark.signed_by, validate=True), base64.b64decode(mark.signature, validate=True)
    except (binascii.Error, ValueError):
        return None
    from p2w_runtime.store._signing import Signature, valid

    return key if valid(Signature(key, mark_digest(mark), value), MARK_SIGNED_PREFIX) else None


async def last_mark(store: EventStore) -> tuple[StoredEvent, StoreVerified | None] | None:
    """The newest mark (None: the payload does not read as one), or None when the store has none."""
    head = await store.stream_head(MARK_STREAM)
    event = None if head is None else await store.read_event(MARK_STREAM, head.last_seq)
    if event is None:
        return None
    try:
        payload = event.decode_payload()
    except ValueError:
        return event, None
    return event, payload if isinstance(payload, StoreVerified) else None


async def append_mark(store: EventStore, report: VerifyReport) -> bool:
    """Append the report's mark, only when the whole check (the caller's included) found nothing wrong and the
    store can be written; True when it was appended."""
    if report.mark is None or not report.ok or getattr(store, "read_only", False):
        return False
    try:
        await store.append([NewEvent(stream=MARK_STREAM, payload=report.mark)])
    except ReadOnlyStore:
        return False
    return True

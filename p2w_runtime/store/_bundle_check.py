"""Verifying a whole bundle before anything of it is written: what it is, whether it is intact, who signed it.

A bundle is refused when any hash, chain link, payload or seal fails, when its header names another run or
label than its events hold, and when it carries a signature that does not verify (or the header says signed
and the signature line is gone), with or without ``--trusted-key``. Only a bundle that was never signed
imports unsigned, and the result says so.

The checks run over a private copy of the file, and the import reads that copy: a bundle rewritten in place
between verification and import cannot slip unchecked events in.
"""

from __future__ import annotations

import os
import shutil
import uuid
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from p2w_rt.schemas import GENESIS_HASH, RunStarted, StoredEvent, StreamSeal, blob_hash
from p2w_runtime.errors import clip
from p2w_runtime.scratch import new_scratch_file
from p2w_runtime.store._bundle_lines import BundleError, records
from p2w_runtime.store._chain import chain_link
from p2w_runtime.store._seal import SEAL_EVENT_TYPES, StreamEnds, seal_problem
from p2w_runtime.store._signing import Signature, fingerprint
from p2w_runtime.store._signing import valid as valid_signature
from p2w_runtime.store._tree import tree_root

MAX_RUNS_NAMED = 3
"""Runs a bundle holding several is refused naming (the first ones seen)."""


@dataclass(frozen=True, slots=True)
class VerifiedBundle:
    """A bundle every check passed: the run its events hold, its counts, and how it was signed."""

    path: Path
    run_id: str
    label: str
    events: int
    blobs: int
    signed_by: str | None
    """Fingerprint of the key whose signature verified; ``None`` for a bundle that was never signed."""
    trusted: bool
    """Whether that key is the ``--trusted-key`` the import was given."""
    copy: Path
    """The private copy every check ran over: what an import reads. ``close()`` removes it."""

    def close(self) -> None:
        self.copy.unlink(missing_ok=True)

    def __enter__(self) -> VerifiedBundle:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


def verify_bundle(path: Path, *, trusted: bytes | None = None) -> VerifiedBundle:
    """Check every hash, chain, payload, seal, the run the events hold and the signature; raise on the first
    failure. With ``trusted`` (a raw Ed25519 public key) the bundle must be signed by that key. The result holds
    the private copy the checks read (close it, or use it as a context manager)."""
    copy = _private_copy(path)
    try:
        return _verify(copy, path, trusted)
    except BaseException:
        copy.unlink(missing_ok=True)
        raise


def _private_copy(path: Path) -> Path:
    """The bundle's bytes copied once into a file only this user can write (a scratch file, mode 0600), named for
    this process so that the next p2w-rt removes it if this one is killed before it can (``p2w_runtime.scratch``)."""
    if not path.is_file():
        raise BundleError(f"{path}: no such bundle file")
    fd, copy = new_scratch_file("bundle", ".p2w")
    try:
        with os.fdopen(fd, "wb") as out, path.open("rb") as source:
            shutil.copyfileobj(source, out, 1 << 20)
    except OSError as exc:
        copy.unlink(missing_ok=True)
        raise BundleError(f"{path}: cannot copy the bundle for verification ({exc.strerror})") from None
    return copy


def _verify(copy: Path, path: Path, trusted: bytes | None) -> VerifiedBundle:
    heads: dict[str, tuple[int, str]] = {}
    blobs: set[str] = set()
    seals: list[tuple[StoredEvent, StreamSeal]] = []
    runs: dict[str, bool] = {}
    """Every run the events belong to, and whether a refusal names it."""
    started: list[tuple[StoredEvent, RunStarted]] = []
    ends = StreamEnds()
    events = 0
    header: dict[str, Any] = {}
    signature: Signature | None = None
    for kind, value in records(copy, path):
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
            link = chain_link(*heads.get(event.stream, (0, GENESIS_HASH)), event)
            if link.unlinked is not None:
                raise BundleError(f"{where} breaks the chain")
            if link.modified:
                raise BundleError(f"{where} does not match its hash (bundle tampered)")
            if (problem := event.payload_problem()) is not None:
                raise BundleError(f"{where}: {clip(problem, 300)}")
            if (after_end := ends.problem(event)) is not None:
                raise BundleError(f"{where}: {after_end} (bundle tampered)")
            if set(event.blobs) - blobs:
                raise BundleError(f"{where} references blobs not in the bundle")
            if event.type in SEAL_EVENT_TYPES:
                seals.extend((event, seal) for seal in _decoded(event, where, "seals") or [])
            elif event.type == "run.started":
                started.append((event, _decoded(event, where, None)))
            if (run := tree_root(event.stream)) not in runs:
                runs[run] = len(runs) < MAX_RUNS_NAMED
            heads[event.stream] = (event.seq, event.hash)
            events += 1
    if events != header["events"] or len(blobs) != header["blobs"]:
        raise BundleError(
            f"{path}: bundle is incomplete ({events} events, {len(blobs)} blobs; header says "
            f"{clip(header['events'])} and {clip(header['blobs'])})"
        )
    _check_signature(path, header, signature, trusted)
    run_id, label = _true_run(path, header, runs, started)
    for sealing, seal in seals:
        head = heads.get(seal.stream)
        reason = seal_problem(
            seal, head, head[1] if head and head[0] == seal.events else None, f"sealed by {sealing.type}"
        )
        if reason is not None:
            raise BundleError(f"{path}: stream {clip(seal.stream)}: {reason} (bundle tampered)")
    signed_by = fingerprint(signature.public_key) if signature is not None else None
    return VerifiedBundle(path, run_id, label, events, len(blobs), signed_by, trusted is not None, copy)


def _decoded(event: StoredEvent, where: str, field: str | None) -> Any:
    """The event's payload (or one ``field`` of it), decoded through its model and upcasters."""
    try:
        payload = event.decode().payload
    except ValueError as exc:
        raise BundleError(f"{where}: unreadable {event.type} ({clip(exc)})") from None
    return payload if field is None else getattr(payload, field, None)


def _true_run(
    path: Path, header: dict[str, Any], runs: dict[str, bool], started: list[tuple[StoredEvent, RunStarted]]
) -> tuple[str, str]:
    """The run the events hold, which must be the run and label the header names: a bundle is one run."""
    claimed = f"run {clip(header['run_id'])} ({clip(header['label'])!r})"
    if len(runs) > 1:
        named = ", ".join(clip(r, 40) for r, shown in runs.items() if shown)
        more = f" and {len(runs) - MAX_RUNS_NAMED} more" if len(runs) > MAX_RUNS_NAMED else ""
        raise BundleError(f"{path}: header names {claimed}, but the events belong to runs {named}{more}")
    own = [(e, p) for e, p in started if e.stream == next(iter(runs), header["run_id"])]
    if len(own) != 1 or own[0][0].seq != 1 or own[0][1].run_id != own[0][0].stream:
        how = "no" if not own else "a misplaced" if len(own) == 1 else f"{len(own)}"
        raise BundleError(f"{path}: {claimed}: the bundle has {how} run.started event(s) for its run")
    event, run = own[0]
    if (event.stream, run.label) != (header["run_id"], header["label"]):
        raise BundleError(
            f"{path}: header names {claimed}, but its events are run {clip(event.stream)} ({clip(run.label)!r}): "
            "the header was edited; nothing imported"
        )
    if not _is_run_id(event.stream):
        raise BundleError(
            f"{path}: the bundle's run id {clip(event.stream)!r} is not one the store gives a run (a UUID); "
            "nothing imported"
        )
    return event.stream, run.label


def _is_run_id(text: str) -> bool:
    """Whether ``text`` is in the form every run is created with (a UUID, lowercase and hyphenated: ``uuid7``).

    Anything else was made by hand, maybe to import events into a stream the store keeps for itself (its verify
    marks' ``p2w-rt.verified``), where its own appends would then land.
    """
    try:
        parsed = uuid.UUID(text)
    except ValueError:
        return False
    return str(parsed) == text


def _check_signature(path: Path, header: dict[str, Any], signature: Signature | None, trusted: bytes | None) -> None:
    """A signature present must verify; one the header promises must be present; ``trusted`` must have signed."""
    says_signed = header.get("signed", False)
    if signature is None:
        if says_signed:
            raise BundleError(f"{path}: header says signed, but the signature line is missing (removed?)")
        if trusted is not None:
            raise BundleError(f"{path}: not signed, but --trusted-key requires a signature by {fingerprint(trusted)}")
        return
    if not says_signed:
        raise BundleError(f"{path}: ends with a signature line, but its header says unsigned (bundle edited)")
    if trusted is not None and signature.public_key != trusted:
        raise BundleError(
            f"{path}: signed by key {fingerprint(signature.public_key)}, not by the trusted key {fingerprint(trusted)}"
        )
    if signature.digest != header["_digest"] or not valid_signature(signature):
        raise BundleError(
            f"{path}: signature does not match the bundle (forged, or the bundle changed after signing; "
            f"signature names key {fingerprint(signature.public_key)})"
        )

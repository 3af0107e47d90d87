"""Seals and head digests: commitments that make a deleted stream, or a stream's cut-off tail, visible.

A hash chain shows an edited or removed event in the middle of a stream, but not a stream that is gone
or that lost its last events. A seal records, for every stream of a run, how many events it had and the
hash of the last one; ``run.finished`` carries one, so does the ``episode.sealed`` a recording appends to the
run's stream as each episode finishes, and so does the ``streams.sealed`` event a judging or classifying pass
appends when it ends. A head digest condenses the same commitment for a run's
streams into one value that can be published and checked later (docs/design/integrity.md).
"""

from __future__ import annotations

from p2w_rt.schemas import StoredEvent, StreamSeal, content_hash
from p2w_runtime.store._event_store import EventStore, StreamHead
from p2w_runtime.store._tree import tree_prefix

SEAL_EVENT_TYPES = ("run.finished", "episode.sealed", "streams.sealed", "run.dataset_attached")
"""Event types whose payload carries ``seals``."""
STREAM_END_TYPES = ("episode.finished",)
"""Event types that end their stream: nothing may follow one (the episode grammar's rule, which a row inserted by
hand after a sealed episode would otherwise break unseen, since a seal only commits to a prefix)."""
DIGEST_PREFIX = "sha256:"


async def _run_heads(store: EventStore, run_id: str) -> list[StreamHead]:
    own = await store.stream_head(run_id)
    return ([own] if own is not None else []) + await store.list_streams(prefix=tree_prefix(run_id))


async def seal_streams(store: EventStore, run_id: str, *, into: str) -> list[StreamSeal]:
    """A seal over every stream of ``run_id`` except ``into``, the stream the seal is appended to.

    That stream needs none: the sealing event's own ``prev_hash`` already commits to what precedes it.
    """
    heads = await _run_heads(store, run_id)
    return [StreamSeal(stream=h.stream, events=h.last_seq, head_hash=h.last_hash) for h in heads if h.stream != into]


async def head_digest(store: EventStore, run_id: str) -> str:
    """One value for everything a run holds now: every stream of it, each by event count and last hash.

    Published with a paper's results (after the last judging pass), it covers what no seal inside the store
    can: the newest events of all, which nothing sealed yet. Any later append, a new judging pass included,
    changes it; a pass whose results are already cached appends nothing and leaves it as it was.
    """
    heads = await _run_heads(store, run_id)
    streams = [[h.stream, h.last_seq, h.last_hash] for h in heads]
    return DIGEST_PREFIX + content_hash({"run": run_id, "streams": streams})


def same_digest(actual: str, expected: str) -> bool:
    """Compare digests, accepting the expected one with or without its ``sha256:`` prefix and in any case."""
    expected = expected.strip().lower()
    return actual == (expected if expected.startswith(DIGEST_PREFIX) else DIGEST_PREFIX + expected)


def after_end_problem(end_type: str, end_seq: int) -> str:
    """What ``verify``, a bundle check and a reader say of an event that follows its stream's end."""
    return f"follows {end_type} (seq {end_seq}): nothing may follow the end of an episode; added after the fact"


class StreamEnds:
    """The streams that ended so far in one pass over events in order, to name any event that follows an end."""

    def __init__(self) -> None:
        self._ended: dict[str, tuple[str, int]] = {}

    def problem(self, event: StoredEvent) -> str | None:
        """Why ``event`` may not be where it is (its stream ended before it), else None; then note it if it ends."""
        end = self._ended.get(event.stream)
        if end is not None:
            return f"{event.type} {after_end_problem(*end)}"
        if event.type in STREAM_END_TYPES:
            self._ended[event.stream] = (event.type, event.seq)
        return None


def seal_problem(seal: StreamSeal, head: tuple[int, str] | None, sealed_hash: str | None, by: str) -> str | None:
    """What is wrong with a sealed stream given its current ``head`` (last seq, hash), or None.

    ``sealed_hash`` is the hash the stream's event ``seal.events`` has now; None when it could not be looked
    at, which the chain check reports on its own (a gap) or which the caller leaves to ``verify``.
    """
    if head is None:
        return f"stream missing: {by} with {seal.events} events"
    if head[0] < seal.events:
        return f"stream truncated: {head[0]} events, {by} with {seal.events}"
    if sealed_hash is not None and sealed_hash != seal.head_hash:
        return f"seal broken: event {seal.events} differs from the one {by}"
    return None

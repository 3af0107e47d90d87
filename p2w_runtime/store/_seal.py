"""Seals and head digests: commitments that make a deleted stream, or a stream's cut-off tail, visible.

A hash chain shows an edited or removed event in the middle of a stream, but not a stream that is gone
or that lost its last events. A seal records, for every stream of a run, how many events it had and the
hash of the last one; ``run.finished`` carries one, so does the ``episode.sealed`` a recording appends to the
run's stream as each episode finishes, and so does the ``streams.sealed`` event a judging or classifying pass
appends when it ends. A head digest condenses the same commitment for a run's
streams into one value that can be published and checked later (docs/design/integrity.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from p2w_rt.schemas import NewEvent, StoredEvent, StreamSeal, StreamsSealed, content_hash
from p2w_runtime.store._event_store import EventStore, StreamHead
from p2w_runtime.store._tree import tree_prefix, tree_root

SEAL_EVENT_TYPES = ("run.finished", "episode.sealed", "streams.sealed", "run.dataset_attached")
"""Event types whose payload carries ``seals``."""
STREAM_END_TYPES = ("episode.finished",)
"""Event types that end their stream: nothing may follow one (the episode grammar's rule, which a row inserted by
hand after a sealed episode would otherwise break unseen, since a seal only commits to a prefix)."""
DIGEST_PREFIX = "sha256:"
RESEAL_TRIES = 3
"""Seals written by one ``append_with_seal`` at most: the first, then whole ones while other writers' appends keep
landing between a seal's heads and its append."""
SEAL_SCAN_LIMIT = 10_000
"""Events of a run after its derived stream's last seal beyond which the next seal lists every stream of the run
rather than reading them all to find the few that moved."""


async def _run_heads(store: EventStore, run_id: str) -> list[StreamHead]:
    own = await store.stream_head(run_id)
    return ([own] if own is not None else []) + await store.list_streams(prefix=tree_prefix(run_id))


async def seal_streams(store: EventStore, run_id: str, *, into: str, whole: bool = False) -> list[StreamSeal]:
    """A seal over the streams of ``run_id`` but ``into``, the stream the seal is appended to: every one with
    ``whole``, else those that moved since the seal ``into`` ends with, as ``append_with_seal`` writes it; every one
    again when ``into`` does not end with a seal (its first pass, or a pass that appended results before its end) or
    when finding what moved would read more than ``SEAL_SCAN_LIMIT`` events.

    ``into`` needs no entry: the sealing event's own ``prev_hash`` commits to what precedes it. Nor does a stream
    that did not move: the seal ``into`` ends with committed to it (or, by the same rule, one before that), and the
    new seal's ``prev_hash`` commits to that seal. A label posted on a 10,000-episode run seals what it changed, not
    10,000 streams again (docs/design/integrity.md, "Seals").
    """
    moved = None if whole else await _moved_since_seal(store, run_id, into)
    if moved is None:
        heads = await _run_heads(store, run_id)
    else:  # the few streams that moved, each by its own head: not a listing of the run's 10,000
        heads = [head for stream in sorted(moved) if (head := await store.stream_head(stream)) is not None]
    return [StreamSeal(stream=h.stream, events=h.last_seq, head_hash=h.last_hash) for h in heads if h.stream != into]


async def append_with_seal(store: EventStore, run_id: str, into: str, events: Sequence[NewEvent]) -> list[StoredEvent]:
    """Append ``events`` with a ``streams.sealed`` of the run's other streams after them, in ``into``.

    A seal lists the streams that moved since the one before it, which holds only if it commits to every event
    before its own position: when another writer appended to the log between the heads being read and the seal
    being stored, a seal of every stream follows at once, read after those appends (tried again while appends keep
    landing in between, ``RESEAL_TRIES`` times at most)."""
    appended: list[StoredEvent] = []
    for attempt in range(RESEAL_TRIES):
        end = await store.log_end()
        seal = StreamsSealed(seals=await seal_streams(store, run_id, into=into, whole=attempt > 0))
        stored = await store.append([*(events if attempt == 0 else ()), NewEvent(stream=into, payload=seal)])
        appended += stored
        if stored[0].position == end + 1:
            break
    return appended


async def _moved_since_seal(store: EventStore, run_id: str, into: str) -> set[str] | None:
    """The run's streams with an event after ``into``'s last one when that is a ``streams.sealed`` (positions are
    given in commit order); None when it is not, or when more than ``SEAL_SCAN_LIMIT`` events follow it."""
    head = await store.stream_head(into)
    if head is None or head.last_type != "streams.sealed":
        return None
    sealing = await store.read_event(into, head.last_seq)
    if sealing is None or sealing.position is None:
        return None
    moved: set[str] = set()
    events = store.read_all(after_position=sealing.position, stream_prefix=run_id)
    try:
        count = 0
        async for event in events:
            count += 1
            if count > SEAL_SCAN_LIMIT:
                return None
            if tree_root(event.stream) == run_id:
                moved.add(event.stream)
    finally:
        await events.aclose()  # type: ignore[attr-defined]  # an async generator behind EventStore's AsyncIterator
    return moved


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

"""The chain link: whether a stored event continues its stream after the stream's head, in one place.

An import (``append_stored`` on every backend), a bundle check and ``verify`` ask the same question of each event:
does its seq follow the head's, does its ``prev_hash`` name the head's hash, does its content match its own hash.
They differ only in what they do with the answer (refuse, reject the file, report every problem).
"""

from __future__ import annotations

from dataclasses import dataclass

from p2w_rt.schemas import StoredEvent
from p2w_runtime.store._event_store import IntegrityError

MODIFIED = "content does not match its hash (modified)"


@dataclass(frozen=True, slots=True)
class ChainLink:
    """What is wrong with one event as the next link of its stream (``ok`` when nothing is)."""

    unlinked: str | None
    """Why the event does not follow the head (a seq gap or reorder, another ``prev_hash``), or None."""
    modified: bool
    """The event's content does not match its hash: it was edited after it was sealed."""

    @property
    def ok(self) -> bool:
        return self.unlinked is None and not self.modified


def chain_link(prev_seq: int, prev_hash: str, event: StoredEvent) -> ChainLink:
    """Check ``event`` against its stream's head (``prev_seq``, ``prev_hash``; ``0, GENESIS_HASH`` before the first)."""
    unlinked = None
    if event.seq != prev_seq + 1:
        unlinked = f"seq {event.seq} follows {prev_seq}: gap or reorder"
    elif event.prev_hash != prev_hash:
        unlinked = "prev_hash does not match the previous event's hash"
    return ChainLink(unlinked, not event.hash_matches())


def check_continues(prev_seq: int, prev_hash: str, event: StoredEvent) -> None:
    """Refuse an imported event that does not continue its stream exactly (``IntegrityError``)."""
    if not chain_link(prev_seq, prev_hash, event).ok:
        raise IntegrityError(
            f"event {event.event_id} (stream {event.stream}, seq {event.seq}) does not continue the stream's hash chain"
        )

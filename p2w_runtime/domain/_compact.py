"""Compacting what a recording left as rows: each finished episode of a run (or of the store), as a recording does
once it seals one (``_seal.py``), for runs recorded with ``P2W_COMPACT=off``, by an earlier version, or whose
recorder died between an episode's seal and its compaction."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from p2w_runtime.store import EventStore, tree_prefix

STREAMS_PER_WRITE = 64
"""Episodes compacted per write transaction: each write holds the store's lock for a few milliseconds."""


@dataclass(frozen=True, slots=True)
class Compacted:
    episodes: int
    """Finished episodes looked at."""
    events: int
    """Events moved from rows into segments (0 for those already compact, or too short to gain)."""


async def compact_finished(
    store: EventStore, run_id: str | None = None, progress: Callable[[int, int], None] | None = None
) -> Compacted:
    """Compact every finished episode of ``run_id`` (None: of the store). Running it again moves nothing."""
    heads = await store.list_streams(prefix=tree_prefix(run_id) if run_id else None)
    finished = [head.stream for head in heads if head.last_type == "episode.finished"]
    moved = 0
    for start in range(0, len(finished), STREAMS_PER_WRITE):
        moved += await store.compact(finished[start : start + STREAMS_PER_WRITE])
        if progress is not None:
            progress(min(start + STREAMS_PER_WRITE, len(finished)), len(finished))
    return Compacted(len(finished), moved)

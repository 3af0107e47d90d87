"""Reading compacted episodes in position order: their segments hold events at the positions they were recorded
at, which other streams' events may interleave (``SPARSE_CODEC``, docs/design/store.md, "Compaction").

A page in position order (``SqlEventStore._merged``) is complete up to a bound set by its rows and its contiguous
segments. Compacted segments are found apart, by the positions they span: every one whose span reaches past the
page's start and whose first event is at or before its bound, in order of their first events, a few at a time. When
the page asks for more than that, its bound comes down to just before the first event of the last one found, so
every segment that could hold an event of the page was found. A segment spans at most ``SPARSE_MAX_SPAN``
positions, so the search is a bounded range of a partial index of the compacted segments by ``first_position``;
every page looks (a read started before the first compaction still finds what a compaction moves meanwhile).

A compaction that commits between the statements of a read moves rows into a segment: the same events are then
found twice, once as rows and once in the segment, and handed out once (``by_position``). Rows are always read
before the segments of the same page, so no event is missed.
"""

from __future__ import annotations

import heapq
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from p2w_rt.schemas import StoredEvent
from p2w_runtime.store import _core as core
from p2w_runtime.store._segments import COMPACTED_SQL, SPARSE_MAX_SPAN
from p2w_runtime.store._sql_base import fixed
from p2w_runtime.store._sql_pages import AT_EVENT, decoded, segment_columns
from p2w_runtime.store._sqlalchemy import sa

if TYPE_CHECKING:
    from sqlalchemy import BindParameter, ClauseElement

SPARSE_PER_PAGE = 64
"""Compacted segments a page asks for at first: more than the episodes a recording runs at once, so a page rarely
needs a second look (``SparsePages.page`` asks for four times as many when as many straddle the page's start)."""
NO_BOUND = 2**31 - 1
"""The bound of the last page: past every position (a position is a 32-bit integer on PostgreSQL)."""


@fixed
def _sparse_segments() -> ClauseElement:
    """Compacted segments of streams under ``:prefix`` ('' for all) that may hold positions in (``:after``,
    ``:bound``], by their first position."""
    s = core.SEGMENTS.c
    after: BindParameter[int] = sa.bindparam("after", value=0)
    prefix: BindParameter[str] = sa.bindparam("prefix", value="", type_=sa.String)
    return (
        sa.select(*segment_columns(core.EVENT_COLUMNS))
        .where(
            sa.text(COMPACTED_SQL),  # as the partial index states it
            s.first_position > sa.bindparam("lowest", value=0),
            s.first_position <= sa.bindparam("bound", value=0),
            s.last_position > after,
            sa.func.substr(s.stream, 1, sa.func.length(prefix)) == prefix,
        )
        .order_by(s.first_position)
        .limit(sa.bindparam("limit", value=0))
    )


Fetch = Callable[[dict[str, Any]], Awaitable[list[tuple[Any, ...]]]]
"""Runs the ``sparse_segments`` statement with the given values, each call its own snapshot."""


@dataclass(frozen=True, slots=True)
class SparsePages:
    """What a read in position order needs of the compacted segments: how to fetch them and which events it wants."""

    fetch: Fetch
    prefix: str
    types: frozenset[str] | None

    async def page(self, after: int, bound: int | None) -> tuple[list[StoredEvent], int | None]:
        """The wanted events of compacted segments at positions in (``after``, ``bound``] in position order, and the
        page's bound: ``bound``, or lower when more segments start before it than one look returns."""
        limit = SPARSE_PER_PAGE
        while True:
            values = dict(after=after, bound=NO_BOUND if bound is None else bound, limit=limit, prefix=self.prefix)
            found = await self.fetch({**values, "lowest": after - SPARSE_MAX_SPAN})
            top = bound
            if len(found) == limit:
                top = found[-1][AT_EVENT.first_position] - 1  # type: ignore[index]  # every later one starts after
                if top <= after:  # as many straddle ``after``: look again for more
                    limit *= 4
                    continue
                top = top if bound is None else min(top, bound)
                found = found[:-1]
            return self._events(found, after, top), top

    def _events(self, found: list[tuple[Any, ...]], after: int, bound: int | None) -> list[StoredEvent]:
        events = [
            event
            for row in found
            for event in decoded(row, AT_EVENT)
            if after < (event.position or 0) and (bound is None or (event.position or 0) <= bound)
            and (self.types is None or event.type in self.types)
        ]  # fmt: skip
        events.sort(key=_position)
        return events


def _position(event: StoredEvent) -> int:
    return event.position or 0


def by_position(page: Iterable[StoredEvent], compacted: list[StoredEvent]) -> Iterator[StoredEvent]:
    """A page's rows and contiguous segments' events merged with its compacted events, each event once: a
    compaction between the page's statements shows its events both as rows and in a segment."""
    if not compacted:
        yield from page
        return
    last: tuple[int, str] | None = None
    for event in heapq.merge(page, compacted, key=_position):
        key = (_position(event), event.event_id)
        if key != last:
            yield event
        last = key

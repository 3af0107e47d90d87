"""The SQL event store every SQL backend subclasses: reading pages, blobs and counts, over the mixins of the other
capabilities.

Appending lives in ``_sql_append.py``, claims in ``_sql_claims.py``, the sessions and compiled statements in
``_sql_base.py``, the read statements in ``_sql_reads.py``, how a page of rows and segments is merged in
``_sql_pages.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar, cast

from p2w_rt.schemas import ChainedEvent, StoredEvent
from p2w_runtime.store import _core as core
from p2w_runtime.store._event_store import StreamHead
from p2w_runtime.store._rows import decompress_blob, row_to_event
from p2w_runtime.store._sql_append import SqlAppending
from p2w_runtime.store._sql_base import ID_CHUNK, Compiled, chunk_values, fixed
from p2w_runtime.store._sql_claims import SqlClaims
from p2w_runtime.store._sql_compact import SqlCompaction
from p2w_runtime.store._sql_heads import SqlHeads
from p2w_runtime.store._sql_pages import (
    AT_EVENT,
    BY_CHAINED,
    BY_POSITION,
    BY_SEQ,
    BY_STREAM_SEQ,
    Order,
    decoded,
    in_order,
    segment_chained,
    segment_stored,
    segments_per_page,
)
from p2w_runtime.store._sql_reads import all_page, filtered_kind, page_of
from p2w_runtime.store._sql_sparse import SparsePages, by_position
from p2w_runtime.store._sql_summaries import SqlSummaries
from p2w_runtime.store._sql_work import SqlWorkQueue
from p2w_runtime.store._sqlalchemy import sa

if TYPE_CHECKING:
    from sqlalchemy import BindParameter, ClauseElement, ColumnElement, Select

PAGE_SIZE = 1000
"""Rows fetched per query when streaming; bounds reader memory whatever the run size."""
STREAMS_PAGE = 5
"""``read_streams`` fetches this many times ``PAGE_SIZE`` rows per query: it reads whole runs, and each page has
a fixed cost besides its rows (docs/design/projection.md)."""
_Read = TypeVar("_Read")


@fixed
def _count() -> Select[Any]:
    """Events held as rows, and blobs: what ``count`` and ``verify``'s incremental check read, compiled ahead."""
    events = sa.select(sa.func.count()).select_from(core.EVENTS).scalar_subquery()
    return sa.select(events, sa.select(sa.func.count()).select_from(core.BLOBS).scalar_subquery())


@fixed
def _count_with_segments() -> ClauseElement:
    s = core.SEGMENTS.c
    held = sa.func.coalesce(sa.func.sum(s.last_seq - s.first_seq + 1), 0)
    return _count().add_columns(sa.select(held).scalar_subquery())


@fixed
def _blob_hashes() -> ClauseElement:
    b = core.BLOBS.c
    after: BindParameter[str] = sa.bindparam("after", value="")
    return sa.select(b.sha256).where(b.sha256 > after).order_by(b.sha256).limit(sa.bindparam("limit", value=0))


class SqlEventStore(SqlAppending, SqlCompaction, SqlWorkQueue, SqlSummaries, SqlHeads, SqlClaims):
    """The whole ``EventStore`` over SQL; a backend adds its sessions, its blob upsert and how it opens.

    Every read sees events in rows and in segments alike (``_segments.py``): one statement selects a page of rows
    and the segments overlapping it (one snapshot), and ``_merged`` hands both out in order, each segment decoded
    once per page (docs/design/store.md, "Segments").
    """

    async def stream_head(self, stream: str) -> StreamHead | None:
        async with self._reading() as session:
            return await self._head(session, stream)

    async def read_event(self, stream: str, seq: int) -> StoredEvent | None:
        event = self._with_segments("event")
        async with self._reading() as session:
            found = await session.fetch(event.sql, event.params(stream=stream, seq=seq))
        for row in found:
            if row[-1] is None:
                return row_to_event(row[:-1])
            await self._load_dictionaries([row[AT_EVENT.codec]])
            return next(e for e in decoded(row, AT_EVENT) if e.seq == seq)
        return None

    def read_stream(self, stream: str, *, after_seq: int = 0) -> AsyncIterator[StoredEvent]:
        page = self._with_segments("stream_events")
        one = {"stream": stream}
        return self._merged([page], PAGE_SIZE, BY_SEQ, (after_seq,), row_to_event, segment_stored, values=one)

    def read_streams(self, streams: Sequence[str]) -> AsyncIterator[StoredEvent]:
        """Up to ``ID_CHUNK`` streams per query, paged on (stream, seq) with ``STREAMS_PAGE`` pages: reading a
        run's episodes one query each cost more than decoding them (docs/design/projection.md)."""
        return self._of_streams("streams_events", streams, BY_STREAM_SEQ, row_to_event, segment_stored)

    def read_chained(self, streams: Sequence[str]) -> AsyncIterator[ChainedEvent]:
        """``read_streams`` selecting only a ``ChainedEvent``'s columns, each row made one in a step."""
        make = partial(tuple.__new__, ChainedEvent)
        return self._of_streams("streams_chained", streams, BY_CHAINED, make, segment_chained)

    async def _of_streams(
        self,
        name: str,
        streams: Sequence[str],
        order: Order,
        make: Callable[[tuple[Any, ...]], _Read],
        make_segment: Callable[[tuple[Any, ...]], list[_Read]],
    ) -> AsyncIterator[_Read]:
        """The statement ``name`` (compiled ahead: ``_streams_page``) over ``streams``, ``ID_CHUNK`` at a time."""
        page = self._with_segments(name)
        names = sorted(set(streams))
        for i in range(0, len(names), ID_CHUNK):
            size = PAGE_SIZE * STREAMS_PAGE
            listed = chunk_values(names[i : i + ID_CHUNK])
            async for item in self._merged([page], size, order, ("", 0), make, make_segment, values=listed):
                yield item

    def read_all(
        self, *, after_position: int = 0, stream_prefix: str | None = None, types: Sequence[str] | None = None
    ) -> AsyncIterator[StoredEvent]:
        wanted = frozenset(types) if types else None
        sparse = SparsePages(self._fetch_sparse, stream_prefix or "", wanted) if self.has_segments else None
        if stream_prefix is None and not types:  # what brings summaries up to date: compiled ahead
            page = self._with_segments("events_after")
            return self._merged(
                [page], PAGE_SIZE, BY_POSITION, (after_position,), row_to_event, segment_stored, sparse=sparse
            )
        make_segment = segment_stored
        if wanted:
            make_segment = lambda row: [e for e in decoded(row, AT_EVENT) if e.type in wanted]  # noqa: E731
        start = (after_position,)
        kind = filtered_kind(types)
        if kind is None:
            page = self._page(*all_page(types, stream_prefix))
            return self._merged([page], PAGE_SIZE, BY_POSITION, start, row_to_event, make_segment, sparse=sparse)
        bound = {f"type_{i}": name for i, name in enumerate(sorted(wanted or ()))}
        return self._merged(
            [self._with_segments(kind)], PAGE_SIZE, BY_POSITION, start, row_to_event, make_segment,
            values={"prefix": stream_prefix or "", **bound}, sparse=sparse,
        )  # fmt: skip

    async def _fetch_sparse(self, values: dict[str, Any]) -> list[tuple[Any, ...]]:
        sparse = self._statement("sparse_segments")
        async with self._reading() as session:
            found = await session.fetch(sparse.sql, sparse.params(**values))
        await self._load_dictionaries([row[AT_EVENT.codec] for row in found])
        return found

    def _page(self, rows: Select[Any], segments: Sequence[ColumnElement[bool]], *order: Any) -> Compiled:
        """``page_of`` compiled for this store: with its segments unless the database has none."""
        return self._compiled(page_of(rows, segments, *order, segments_too=self.has_segments))

    async def _merged(
        self,
        pages: Sequence[Compiled],
        size: int,
        order: Order,
        start: tuple[Any, ...],
        make: Callable[[tuple[Any, ...]], _Read],
        make_segment: Callable[[tuple[Any, ...]], list[_Read]],
        values: dict[str, Any] | None = None,
        sparse: SparsePages | None = None,
    ) -> AsyncIterator[_Read]:
        """The events of each statement of ``pages`` in turn, a page at a time (a slow consumer never holds a
        snapshot open): up to ``size`` rows, ``make`` turning each into what is yielded, and segments, each
        ``make_segment`` turning into its events, merged in ``order``; the first page after the key ``start``.

        A page is complete up to the key of its last row, if it holds ``size`` of them, and of its last segment, if
        it holds as many as were asked for: the next page starts after the lower of the two. A read in position order
        also takes the ``sparse`` events of compacted episodes in the page's range, which may lower its bound
        (``_sql_sparse.py``). ``values`` binds what
        every page of a statement compiled ahead shares (the stream it reads). The next page is fetched
        while this one is handed out, so the driver's thread reads while this one builds events (docs/design/store.md,
        "Third round").
        """
        per_page = segments_per_page(size)
        limits = {"limit": size, "segment_limit": per_page, **(values or {})}
        for page in pages:
            after = start
            fetching: asyncio.Task[list[tuple[Any, ...]]] | None = asyncio.create_task(
                self._fetch_page(page, {**limits, **order.params(after)})
            )
            try:
                while fetching is not None:
                    found = await fetching
                    fetching = None
                    rows = [row for row in found if row[-1] is None]
                    segments = [row for row in found if row[-1] is not None] if len(rows) < len(found) else []
                    if self.has_segments:  # a UNION's page has no order of its own (``page_of``): each part
                        rows.sort(key=order.row_key)  # arrives in order, so a sort is one comparison a row
                        segments.sort(key=order.segment_key)
                    if segments:
                        await self._load_dictionaries([segment[order.at.codec] for segment in segments])
                    bound = order.row_key(rows[-1]) if len(rows) == size else None
                    if len(segments) == per_page:
                        last = order.segment_key(segments[-1])
                        bound = last if bound is None or last < bound else bound
                    compacted: list[StoredEvent] = []
                    if sparse is not None:  # in position order: keys are (position,)
                        compacted, top = await sparse.page(after[0], None if bound is None else bound[0])
                        bound = None if top is None else (top,)
                    if bound is not None:
                        fetching = asyncio.create_task(self._fetch_page(page, {**limits, **order.params(bound)}))
                        await asyncio.sleep(0)  # let it reach the driver's thread before this page is handed out
                    if not segments and sparse is None:
                        for row in rows:
                            yield make(row[:-1])
                    elif not compacted:
                        for item in in_order(rows, segments, order, after, bound, make, make_segment):
                            yield item
                    else:  # only a read in position order has compacted events: it yields stored events
                        page_events = in_order(rows, segments, order, after, bound, make, make_segment)
                        for event in by_position(cast("Iterator[StoredEvent]", page_events), compacted):
                            yield cast("_Read", event)
                    if bound is not None:
                        after = bound
            finally:  # a reader that stopped early: the page fetched ahead is dropped, its connection handed back now
                if fetching is not None:
                    fetching.cancel()
                    await asyncio.gather(fetching, return_exceptions=True)

    async def _fetch_page(self, page: Compiled, after: dict[str, Any]) -> list[tuple[Any, ...]]:
        async with self._reading() as session:
            return await session.fetch(page.sql, page.params(**after))

    async def get_blob(self, sha256: str) -> bytes:
        async with self._reading() as session:
            rows = await session.fetch(self._blob_sql.sql, self._blob_sql.params(sha256=sha256))
        if not rows:
            raise KeyError(sha256)
        return decompress_blob(sha256, *rows[0])

    async def blob_hashes(self) -> AsyncIterator[str]:
        page = self._statement("blob_hashes")
        after = ""
        while True:
            async with self._reading() as session:
                rows = await session.fetch(page.sql, page.params(after=after, limit=PAGE_SIZE))
            for row in rows:
                yield row[0]
            if len(rows) < PAGE_SIZE:
                return
            after = rows[-1][0]

    async def count(self) -> tuple[int, int]:
        counting = self._with_segments("count")
        async with self._reading() as session:
            ((n_events, n_blobs, *in_segments),) = await session.fetch(counting.sql, counting.params())
        return n_events + sum(int(n) for n in in_segments), n_blobs

    async def close(self) -> None:
        await self.engine.dispose()

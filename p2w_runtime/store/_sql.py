"""The SQL event store every SQL backend subclasses: reading pages, blobs, counts and claims.

Appending lives in ``_sql_append.py``, the sessions and compiled statements in ``_sql_base.py``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from functools import partial
from typing import Any, TypeVar

from sqlalchemy import (
    BindParameter,
    ColumnElement,
    CompoundSelect,
    LargeBinary,
    Select,
    and_,
    bindparam,
    cast,
    delete,
    func,
    insert,
    null,
    or_,
    select,
    union_all,
)

from p2w_runtime.store._claims import ClaimHolder
from p2w_runtime.store._event_store import StreamHead
from p2w_runtime.store._rows import (
    BLOBS,
    CHAINED_COLUMNS,
    CLAIMS,
    EVENT_COLUMNS,
    EVENTS,
    SEGMENTS,
    decompress_blob,
    row_to_event,
)
from p2w_runtime.store._sql_append import SqlAppending
from p2w_runtime.store._sql_base import ID_CHUNK, Compiled
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
    segment_columns,
    segment_stored,
    segments_per_page,
)
from p2w_runtime.store._sql_summaries import SqlSummaries
from p2w_runtime.store._sql_work import SqlWorkQueue
from schemas import ChainedEvent, StoredEvent

PAGE_SIZE = 1000
"""Rows fetched per query when streaming; bounds reader memory whatever the run size."""
STREAMS_PAGE = 5
"""``read_streams`` fetches this many times ``PAGE_SIZE`` rows per query: it reads whole runs, and each page has
a fixed cost besides its rows (docs/design/projection.md)."""
_Read = TypeVar("_Read")


class SqlEventStore(SqlAppending, SqlWorkQueue, SqlSummaries):
    """The whole ``EventStore`` over SQL; a backend adds its sessions, its blob upsert and how it opens.

    Every read sees events in rows and in segments alike (``_segments.py``): one statement selects a page of rows
    and the segments overlapping it (one snapshot), and ``_merged`` hands both out in order, each segment decoded
    once per page (docs/design/store.md, "Segments").
    """

    async def stream_head(self, stream: str) -> StreamHead | None:
        async with self._reading() as session:
            return await self._head(session, stream)

    async def read_event(self, stream: str, seq: int) -> StoredEvent | None:
        rows = select(*EVENT_COLUMNS).where(EVENTS.c.stream == stream, EVENTS.c.seq == seq)
        segments = (SEGMENTS.c.stream == stream, SEGMENTS.c.last_seq >= seq, SEGMENTS.c.first_seq <= seq)
        async with self._reading() as session:
            found = await self._fetch_once(session, self._with_segments(rows, EVENT_COLUMNS, segments, 1))
        for row in found:
            if row[-1] is None:
                return row_to_event(row[:-1])
            return next(e for e in decoded(row, AT_EVENT) if e.seq == seq)
        return None

    def read_stream(self, stream: str, *, after_seq: int = 0) -> AsyncIterator[StoredEvent]:
        after: BindParameter[int] = bindparam("after", value=0)
        rows = select(*EVENT_COLUMNS).where(EVENTS.c.stream == stream, EVENTS.c.seq > after).order_by(EVENTS.c.seq)
        segments = (SEGMENTS.c.stream == stream, SEGMENTS.c.last_seq > after)
        page = self._page(rows, PAGE_SIZE, ("seq",), segments, SEGMENTS.c.last_seq)
        return self._merged([page], PAGE_SIZE, BY_SEQ, (after_seq,), row_to_event, segment_stored)

    def read_streams(self, streams: Sequence[str]) -> AsyncIterator[StoredEvent]:
        """Up to ``ID_CHUNK`` streams per query, paged on (stream, seq) with ``STREAMS_PAGE`` pages: reading a
        run's episodes one query each cost more than decoding them (docs/design/projection.md)."""
        pages = self._streams_pages(streams, EVENT_COLUMNS)
        return self._merged(pages, PAGE_SIZE * STREAMS_PAGE, BY_STREAM_SEQ, ("", 0), row_to_event, segment_stored)

    def read_chained(self, streams: Sequence[str]) -> AsyncIterator[ChainedEvent]:
        """``read_streams`` selecting only a ``ChainedEvent``'s columns, each row made one in a step."""
        pages = self._streams_pages(streams, CHAINED_COLUMNS)
        make = partial(tuple.__new__, ChainedEvent)
        return self._merged(pages, PAGE_SIZE * STREAMS_PAGE, BY_CHAINED, ("", 0), make, segment_chained)

    def _streams_pages(self, streams: Sequence[str], columns: Sequence[Any]) -> list[Compiled]:
        names = sorted(set(streams))
        after_stream: BindParameter[str] = bindparam("after_stream", value="")
        after: BindParameter[int] = bindparam("after", value=0)
        pages = []
        for i in range(0, len(names), ID_CHUNK):
            chunk = names[i : i + ID_CHUNK]
            rows = (
                select(*columns)
                .where(
                    EVENTS.c.stream.in_(chunk),
                    # not the row value (stream, seq) > (?, ?): SQLite then rescans the streams before it
                    or_(after_stream < EVENTS.c.stream, and_(after_stream == EVENTS.c.stream, EVENTS.c.seq > after)),
                )
                .order_by(EVENTS.c.stream, EVENTS.c.seq)
            )
            segments = (
                SEGMENTS.c.stream.in_(chunk),
                or_(
                    after_stream < SEGMENTS.c.stream,
                    and_(after_stream == SEGMENTS.c.stream, SEGMENTS.c.last_seq > after),
                ),
            )
            size, by = PAGE_SIZE * STREAMS_PAGE, ("stream", "seq")
            pages.append(self._page(rows, size, by, segments, SEGMENTS.c.stream, SEGMENTS.c.last_seq))
        return pages

    def read_all(
        self, *, after_position: int = 0, stream_prefix: str | None = None, types: Sequence[str] | None = None
    ) -> AsyncIterator[StoredEvent]:
        after: BindParameter[int] = bindparam("after", value=0)
        rows = select(*EVENT_COLUMNS).where(EVENTS.c.position > after)
        segments: list[ColumnElement[bool]] = [SEGMENTS.c.last_position > after]
        if stream_prefix is not None:
            rows = rows.where(EVENTS.c.stream.startswith(stream_prefix, autoescape=True))
            segments.append(SEGMENTS.c.stream.startswith(stream_prefix, autoescape=True))
        make_segment = segment_stored
        if types:
            rows = rows.where(EVENTS.c.type.in_(list(types)))
            wanted = frozenset(types)
            make_segment = lambda row: [e for e in decoded(row, AT_EVENT) if e.type in wanted]  # noqa: E731
        rows = rows.order_by(EVENTS.c.position)
        page = self._page(rows, PAGE_SIZE, ("position",), segments, SEGMENTS.c.last_position)
        return self._merged([page], PAGE_SIZE, BY_POSITION, (after_position,), row_to_event, make_segment)

    def _with_segments(
        self, rows: Select[Any], columns: Sequence[Any], segments: Sequence[ColumnElement[bool]], limit: int,
        *order: Any,
    ) -> Select[Any] | CompoundSelect[Any]:  # fmt: skip
        """``rows`` (selecting ``columns`` of events) with a last, empty column, then up to ``limit`` segments rows
        matching ``segments`` in ``order``, placed in the same columns (``segment_columns``) with ``data`` last."""
        rows = rows.add_columns(cast(null(), LargeBinary).label("data"))
        if not self.has_segments:
            return rows
        segment = select(*segment_columns(columns)).where(*segments).order_by(*order).limit(limit)
        return union_all(rows.subquery().select(), segment.subquery().select())

    def _page(
        self, rows: Select[Any], size: int, by: tuple[str, ...], segments: Sequence[ColumnElement[bool]], *order: Any
    ) -> Compiled:
        """A page: ``size`` rows and the next ``segments_per_page(size)`` segments, in one statement, ordered on
        the columns named ``by`` (a segment by its first event): a ``UNION`` of ordered parts has no order of its
        own."""
        columns = [c for c in rows.selected_columns]
        query = self._with_segments(rows.limit(size), columns, segments, segments_per_page(size), *order)
        if isinstance(query, CompoundSelect):
            query = query.order_by(*(query.selected_columns[name] for name in by))
        return Compiled.of(query, self.engine.dialect)

    async def _merged(
        self,
        pages: Sequence[Compiled],
        size: int,
        order: Order,
        start: tuple[Any, ...],
        make: Callable[[tuple[Any, ...]], _Read],
        make_segment: Callable[[tuple[Any, ...]], list[_Read]],
    ) -> AsyncIterator[_Read]:
        """The events of each statement of ``pages`` in turn, a page at a time (a slow consumer never holds a
        snapshot open): up to ``size`` rows, ``make`` turning each into what is yielded, and segments, each
        ``make_segment`` turning into its events, merged in ``order``; the first page after the key ``start``.

        A page is complete up to the key of its last row, if it holds ``size`` of them, and of its last segment, if
        it holds as many as were asked for: the next page starts after the lower of the two. The next page is fetched
        while this one is handed out, so the driver's thread reads while this one builds events (docs/design/store.md,
        "Third round").
        """
        per_page = segments_per_page(size)
        for page in pages:
            after = start
            fetching: asyncio.Task[list[tuple[Any, ...]]] | None = asyncio.create_task(
                self._fetch_page(page, order.params(after))
            )
            try:
                while fetching is not None:
                    found = await fetching
                    fetching = None
                    rows = [row for row in found if row[-1] is None]
                    segments = [row for row in found if row[-1] is not None] if len(rows) < len(found) else []
                    bound = order.row_key(rows[-1]) if len(rows) == size else None
                    if len(segments) == per_page:
                        last = order.segment_key(segments[-1])
                        bound = last if bound is None or last < bound else bound
                    if bound is not None:
                        fetching = asyncio.create_task(self._fetch_page(page, order.params(bound)))
                        await asyncio.sleep(0)  # let it reach the driver's thread before this page is handed out
                    if not segments:
                        for row in rows:
                            yield make(row[:-1])
                    else:
                        for _, item in in_order(rows, segments, order, after, bound, make, make_segment):
                            yield item
                    if bound is not None:
                        after = bound
            finally:
                if fetching is not None:
                    fetching.cancel()

    async def _fetch_page(self, page: Compiled, after: dict[str, Any]) -> list[tuple[Any, ...]]:
        async with self._reading() as session:
            return await session.fetch(page.sql, page.params(**after))

    async def list_streams(self, prefix: str | None = None) -> list[StreamHead]:
        found: dict[str, StreamHead] = {}
        tables = [(EVENTS.c.stream, EVENTS.c.seq, EVENTS.c.hash, EVENTS.c.type)]
        if self.has_segments:
            tables.append((SEGMENTS.c.stream, SEGMENTS.c.last_seq, SEGMENTS.c.head_hash, SEGMENTS.c.last_type))
        async with self._reading() as session:
            for stream, seq, hash_, type_ in tables:
                heads = select(stream, func.max(seq).label("seq")).group_by(stream)
                if prefix is not None:
                    heads = heads.where(stream.startswith(prefix, autoescape=True))
                last = heads.subquery()
                query = select(stream, seq, hash_, type_).join(
                    last, (stream == last.c[stream.name]) & (seq == last.c.seq)
                )
                for row in await self._fetch_once(session, query):
                    head = StreamHead(*row)
                    if head.stream not in found or found[head.stream].last_seq < head.last_seq:
                        found[head.stream] = head
        return [found[stream] for stream in sorted(found)]

    async def get_blob(self, sha256: str) -> bytes:
        async with self._reading() as session:
            rows = await session.fetch(self._blob_sql.sql, self._blob_sql.params(sha256=sha256))
        if not rows:
            raise KeyError(sha256)
        return decompress_blob(sha256, *rows[0])

    async def blob_hashes(self) -> AsyncIterator[str]:
        page = Compiled.of(
            select(BLOBS.c.sha256)
            .where(BLOBS.c.sha256 > bindparam("after", value=""))
            .order_by(BLOBS.c.sha256)
            .limit(PAGE_SIZE),
            self.engine.dialect,
        )
        after = ""
        while True:
            async with self._reading() as session:
                rows = await session.fetch(page.sql, page.params(after=after))
            for row in rows:
                yield row[0]
            if len(rows) < PAGE_SIZE:
                return
            after = rows[-1][0]

    async def count(self) -> tuple[int, int]:
        events = select(func.count()).select_from(EVENTS).scalar_subquery()
        blobs = select(func.count()).select_from(BLOBS).scalar_subquery()
        counts = [events, blobs]
        if self.has_segments:
            held = func.coalesce(func.sum(SEGMENTS.c.last_seq - SEGMENTS.c.first_seq + 1), 0)
            counts.append(select(held).scalar_subquery())
        async with self._reading() as session:
            ((n_events, n_blobs, *in_segments),) = await self._fetch_once(session, select(*counts))
        return n_events + sum(int(n) for n in in_segments), n_blobs

    # -- claims --------------------------------------------------------------------------------
    async def try_claim(self, key: str, me: ClaimHolder) -> ClaimHolder | None:
        holder_of = select(CLAIMS.c.owner, CLAIMS.c.host, CLAIMS.c.pid, CLAIMS.c.claimed_at).where(CLAIMS.c.key == key)
        async with self._writing() as session:
            rows = await self._fetch_once(session, holder_of)
            if rows:
                holder = ClaimHolder(*rows[0])
                if holder.owner == me.owner:
                    return None
                if not holder.is_stale(time.time()):
                    return holder
                await self._fetch_once(session, delete(CLAIMS).where(CLAIMS.c.key == key))
            claim = dict(key=key, owner=me.owner, host=me.host, pid=me.pid, claimed_at=me.claimed_at)
            await self._fetch_once(session, insert(CLAIMS).values(**claim))
        return None

    async def release_claim(self, key: str, me: ClaimHolder) -> None:
        async with self._writing() as session:
            await self._fetch_once(session, delete(CLAIMS).where(CLAIMS.c.key == key, CLAIMS.c.owner == me.owner))

    async def close(self) -> None:
        await self.engine.dispose()

"""The SQL event store every SQL backend subclasses: reading pages, blobs, counts and claims.

Appending lives in ``_sql_append.py``, the sessions and compiled statements in ``_sql_base.py``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from p2w_runtime.store import _core as core
from p2w_runtime.store._claims import ClaimHolder
from p2w_runtime.store._core import EVENT_FIELDS, OnFirstUse
from p2w_runtime.store._event_store import StreamHead
from p2w_runtime.store._rows import decompress_blob, row_to_event
from p2w_runtime.store._sql_append import SqlAppending
from p2w_runtime.store._sql_base import ID_CHUNK, Compiled, fixed
from p2w_runtime.store._sql_summaries import SqlSummaries
from p2w_runtime.store._sql_work import SqlWorkQueue
from schemas import ChainedEvent, StoredEvent

if TYPE_CHECKING:
    import sqlalchemy as sa
    from sqlalchemy import BindParameter, ClauseElement, Select
else:
    sa = OnFirstUse("sqlalchemy")

PAGE_SIZE = 1000
"""Rows fetched per query when streaming; bounds reader memory whatever the run size."""
STREAMS_PAGE = 5
"""``read_streams`` fetches this many times ``PAGE_SIZE`` rows per query: it reads whole runs, and each page has
a fixed cost besides its rows (docs/design/projection.md)."""
_STREAM, _SEQ, _POSITION = (EVENT_FIELDS.index(name) for name in ("stream", "seq", "position"))
"""Where a selected row holds the key the next page starts after."""
_Read = TypeVar("_Read")


@fixed
def _events_after() -> ClauseElement:
    e = core.EVENTS.c
    after = sa.select(*core.EVENT_COLUMNS).where(e.position > sa.bindparam("after"))
    return after.order_by(e.position).limit(sa.bindparam("limit"))


class SqlEventStore(SqlAppending, SqlWorkQueue, SqlSummaries):
    """The whole ``EventStore`` over SQL; a backend adds its sessions, its blob upsert and how it opens."""

    async def stream_head(self, stream: str) -> StreamHead | None:
        async with self._reading() as session:
            return await self._head(session, stream)

    async def read_event(self, stream: str, seq: int) -> StoredEvent | None:
        async with self._reading() as session:
            rows = await session.fetch(self._event_sql.sql, self._event_sql.params(stream=stream, seq=seq))
        return row_to_event(rows[0]) if rows else None

    def read_stream(self, stream: str, *, after_seq: int = 0) -> AsyncIterator[StoredEvent]:
        e = core.EVENTS.c
        page = sa.select(*core.EVENT_COLUMNS).where(e.stream == stream, e.seq > sa.bindparam("after", value=0))
        page = page.order_by(e.seq)
        return self._pages(page, after_seq, _SEQ)

    def read_streams(self, streams: Sequence[str]) -> AsyncIterator[StoredEvent]:
        """Up to ``ID_CHUNK`` streams per query, paged on (stream, seq) with ``STREAMS_PAGE`` pages: reading a
        run's episodes one query each cost more than decoding them (docs/design/projection.md)."""
        pages = self._streams_pages(streams, core.EVENT_COLUMNS)
        after = lambda row: {"after_stream": row[_STREAM], "after": row[_SEQ]}  # noqa: E731
        return self._paged(pages, PAGE_SIZE * STREAMS_PAGE, {}, after, row_to_event)

    def read_chained(self, streams: Sequence[str]) -> AsyncIterator[ChainedEvent]:
        """``read_streams`` selecting only a ``ChainedEvent``'s columns, each row made one in a step."""
        pages = self._streams_pages(streams, core.CHAINED_COLUMNS)
        after = lambda row: {"after_stream": row[0], "after": row[1]}  # noqa: E731  (stream, seq) come first
        return self._paged(pages, PAGE_SIZE * STREAMS_PAGE, {}, after, partial(tuple.__new__, ChainedEvent))

    def _streams_pages(self, streams: Sequence[str], columns: Sequence[Any]) -> list[Compiled]:
        names = sorted(set(streams))
        after_stream: BindParameter[str] = sa.bindparam("after_stream", value="")
        after: BindParameter[int] = sa.bindparam("after", value=0)
        e = core.EVENTS.c
        return [
            Compiled.of(
                sa.select(*columns)
                .where(
                    e.stream.in_(names[i : i + ID_CHUNK]),
                    # not the row value (stream, seq) > (?, ?): SQLite then rescans the streams before it
                    sa.or_(after_stream < e.stream, sa.and_(after_stream == e.stream, e.seq > after)),
                )
                .order_by(e.stream, e.seq)
                .limit(PAGE_SIZE * STREAMS_PAGE),
                self.dialect,
            )
            for i in range(0, len(names), ID_CHUNK)
        ]

    def read_all(
        self, *, after_position: int = 0, stream_prefix: str | None = None, types: Sequence[str] | None = None
    ) -> AsyncIterator[StoredEvent]:
        if stream_prefix is None and not types:  # what brings summaries up to date: compiled ahead
            limit = PAGE_SIZE
            after = lambda row: {"after": row[_POSITION], "limit": limit}  # noqa: E731
            start = {"after": after_position, "limit": limit}
            return self._paged([self._statement("events_after")], limit, start, after, row_to_event)
        e = core.EVENTS.c
        page = sa.select(*core.EVENT_COLUMNS).where(e.position > sa.bindparam("after", value=0))
        if stream_prefix is not None:
            page = page.where(e.stream.startswith(stream_prefix, autoescape=True))
        if types:
            page = page.where(e.type.in_(list(types)))
        return self._pages(page.order_by(e.position), after_position, _POSITION)

    def _pages(self, query: Select[Any], after: int, key: int) -> AsyncIterator[StoredEvent]:
        """Events of ``query`` after the key ``after`` (the value at index ``key`` of a selected row), paged."""
        page = Compiled.of(query.limit(PAGE_SIZE), self.dialect)
        return self._paged([page], PAGE_SIZE, {"after": after}, lambda row: {"after": row[key]}, row_to_event)

    async def _paged(
        self,
        pages: Sequence[Compiled],
        size: int,
        after: dict[str, Any],
        next_after: Callable[[tuple[Any, ...]], dict[str, Any]],
        make: Callable[[tuple[Any, ...]], _Read],
    ) -> AsyncIterator[_Read]:
        """The events of each statement of ``pages`` in turn, ``size`` rows at a time, each page one short read (a
        slow consumer never holds a snapshot open); a page starts after the keys ``next_after`` takes from the
        last row of the one before, the first after ``after``; ``make`` turns a row into what is yielded.

        The next page is fetched while this one is handed out, so the driver's thread reads while this one
        builds events (docs/design/store.md, "Third round").
        """
        for page in pages:
            fetching: asyncio.Task[list[tuple[Any, ...]]] | None = asyncio.create_task(self._fetch_page(page, after))
            try:
                while fetching is not None:
                    rows = await fetching
                    fetching = None
                    if len(rows) == size:
                        fetching = asyncio.create_task(self._fetch_page(page, next_after(rows[-1])))
                        await asyncio.sleep(0)  # let it reach the driver's thread before this page is handed out
                    for row in rows:
                        yield make(row)
            finally:
                if fetching is not None:
                    fetching.cancel()

    async def _fetch_page(self, page: Compiled, after: dict[str, Any]) -> list[tuple[Any, ...]]:
        async with self._reading() as session:
            return await session.fetch(page.sql, page.params(**after))

    async def list_streams(self, prefix: str | None = None) -> list[StreamHead]:
        e = core.EVENTS.c
        heads = sa.select(e.stream, sa.func.max(e.seq).label("seq")).group_by(e.stream)
        if prefix is not None:
            heads = heads.where(e.stream.startswith(prefix, autoescape=True))
        last = heads.subquery()
        query = (
            sa.select(e.stream, e.seq, e.hash, e.type)
            .join(last, (e.stream == last.c.stream) & (e.seq == last.c.seq))
            .order_by(e.stream)
        )
        async with self._reading() as session:
            return [StreamHead(*row) for row in await self._fetch_once(session, query)]

    async def get_blob(self, sha256: str) -> bytes:
        async with self._reading() as session:
            rows = await session.fetch(self._blob_sql.sql, self._blob_sql.params(sha256=sha256))
        if not rows:
            raise KeyError(sha256)
        return decompress_blob(sha256, *rows[0])

    async def blob_hashes(self) -> AsyncIterator[str]:
        page = Compiled.of(
            sa.select(core.BLOBS.c.sha256)
            .where(core.BLOBS.c.sha256 > sa.bindparam("after", value=""))
            .order_by(core.BLOBS.c.sha256)
            .limit(PAGE_SIZE),
            self.dialect,
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
        events = sa.select(sa.func.count()).select_from(core.EVENTS).scalar_subquery()
        blobs = sa.select(sa.func.count()).select_from(core.BLOBS).scalar_subquery()
        async with self._reading() as session:
            ((n_events, n_blobs),) = await self._fetch_once(session, sa.select(events, blobs))
        return n_events, n_blobs

    # -- claims --------------------------------------------------------------------------------
    async def try_claim(self, key: str, me: ClaimHolder) -> ClaimHolder | None:
        c = core.CLAIMS.c
        holder_of = sa.select(c.owner, c.host, c.pid, c.claimed_at).where(c.key == key)
        async with self._writing() as session:
            rows = await self._fetch_once(session, holder_of)
            if rows:
                holder = ClaimHolder(*rows[0])
                if holder.owner == me.owner:
                    return None
                if not holder.is_stale(time.time()):
                    return holder
                await self._fetch_once(session, sa.delete(core.CLAIMS).where(core.CLAIMS.c.key == key))
            claim = dict(key=key, owner=me.owner, host=me.host, pid=me.pid, claimed_at=me.claimed_at)
            await self._fetch_once(session, sa.insert(core.CLAIMS).values(**claim))
        return None

    async def release_claim(self, key: str, me: ClaimHolder) -> None:
        async with self._writing() as session:
            claims = core.CLAIMS
            await self._fetch_once(session, sa.delete(claims).where(claims.c.key == key, claims.c.owner == me.owner))

    async def close(self) -> None:
        await self.engine.dispose()

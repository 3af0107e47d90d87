"""The part of the recorder every SQL backend shares: rows <-> events, sealing, paging."""

from __future__ import annotations

import asyncio
from abc import abstractmethod
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import sqlalchemy.exc
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from p2w_runtime.store._recorder import IntegrityError, Recorder, StreamHead
from p2w_runtime.store._rows import (
    BLOBS,
    EVENT_COLUMNS,
    EVENTS,
    compress_blobs,
    decompress_blob,
    event_to_row,
    row_to_event,
)
from schemas import GENESIS_HASH, NewEvent, StoredEvent

PAGE_SIZE = 1000
"""Rows fetched per query when streaming; bounds reader memory whatever the run size."""


class SqlRecorder(Recorder):
    """Recorder logic over any SQLAlchemy async engine; backends add connection setup and upserts."""

    def __init__(self, engine: AsyncEngine, label: str) -> None:
        self.engine = engine
        self.label = label

    # -- backend hooks -------------------------------------------------------------------------
    @abstractmethod
    async def _write_connection(self) -> AsyncConnection:
        """A connection whose next transaction holds the database's write lock from its start."""

    @abstractmethod
    async def _insert_blobs_ignoring_duplicates(self, conn: AsyncConnection, rows: list[dict[str, Any]]) -> None:
        """Insert blob rows; a hash already stored is skipped (content addressing)."""

    # -- writing -------------------------------------------------------------------------------
    async def append(self, events: Sequence[NewEvent], blobs: Mapping[str, bytes] | None = None) -> list[StoredEvent]:
        if not events and not blobs:
            return []
        # hash-checked and compressed in a worker thread (zstd and sha256 release the GIL) while this one seals
        compressing = asyncio.get_running_loop().run_in_executor(None, compress_blobs, blobs) if blobs else None
        conn = await self._write_connection()
        try:
            async with conn.begin():
                await self._check_blobs_present(conn, events, set(blobs or ()))
                heads: dict[str, tuple[int, str]] = {}
                position = (await conn.execute(select(func.max(EVENTS.c.position)))).scalar() or 0
                sealed: list[StoredEvent] = []
                rows: list[dict[str, Any]] = []
                for new in events:
                    if new.stream not in heads:
                        head = await self._head(conn, new.stream)
                        heads[new.stream] = (head.last_seq, head.last_hash) if head else (0, GENESIS_HASH)
                    seq, prev = heads[new.stream]
                    position += 1
                    stored = StoredEvent.seal(new, seq=seq + 1, prev_hash=prev, position=position)
                    heads[new.stream] = (stored.seq, stored.hash)
                    sealed.append(stored)
                    rows.append(event_to_row(stored, position))
                if compressing is not None:
                    await self._insert_blobs_ignoring_duplicates(conn, await compressing)
                if rows:
                    await conn.execute(EVENTS.insert(), rows)
        except sqlalchemy.exc.IntegrityError as exc:
            raise IntegrityError(f"append refused by {self.label}: {exc.orig}") from exc
        finally:
            if compressing is not None:
                _settle(compressing)
            await conn.close()
        return sealed

    async def append_stored(self, events: Sequence[StoredEvent], blobs: Mapping[str, bytes] | None = None) -> int:
        blob_rows = await asyncio.get_running_loop().run_in_executor(None, compress_blobs, blobs) if blobs else []
        conn = await self._write_connection()
        try:
            async with conn.begin():
                ids = [e.event_id for e in events]
                existing: dict[str, str] = {}
                for i in range(0, len(ids), 500):
                    chunk = ids[i : i + 500]
                    query = select(EVENTS.c.event_id, EVENTS.c.hash).where(EVENTS.c.event_id.in_(chunk))
                    existing.update((r.event_id, r.hash) for r in await conn.execute(query))
                for event in events:
                    if existing.get(event.event_id, event.hash) != event.hash:
                        raise IntegrityError(
                            f"event {event.event_id} (stream {event.stream}, seq {event.seq}) is already stored "
                            f"with different content"
                        )
                fresh = [e for e in events if e.event_id not in existing]
                await self._check_blobs_present(conn, fresh, set(blobs or ()))
                heads: dict[str, tuple[int, str]] = {}
                position = (await conn.execute(select(func.max(EVENTS.c.position)))).scalar() or 0
                rows = []
                for event in fresh:
                    if event.stream not in heads:
                        head = await self._head(conn, event.stream)
                        heads[event.stream] = (head.last_seq, head.last_hash) if head else (0, GENESIS_HASH)
                    seq, prev = heads[event.stream]
                    if event.seq != seq + 1 or event.prev_hash != prev or event.compute_hash() != event.hash:
                        raise IntegrityError(
                            f"event {event.event_id} (stream {event.stream}, seq {event.seq}) does not continue "
                            f"the stream's hash chain"
                        )
                    heads[event.stream] = (event.seq, event.hash)
                    position += 1
                    rows.append(event_to_row(event, position))
                if blob_rows:
                    await self._insert_blobs_ignoring_duplicates(conn, blob_rows)
                if rows:
                    await conn.execute(EVENTS.insert(), rows)
                return len(rows)
        except sqlalchemy.exc.IntegrityError as exc:
            raise IntegrityError(f"import refused by {self.label}: {exc.orig}") from exc
        finally:
            await conn.close()

    async def _check_blobs_present(self, conn: AsyncConnection, events: Sequence[Any], given: set[str]) -> None:
        wanted = {h for e in events for h in _referenced_blobs(e)} - given
        if not wanted:
            return
        result = await conn.execute(select(BLOBS.c.sha256).where(BLOBS.c.sha256.in_(sorted(wanted))))
        missing = wanted - {r[0] for r in result}
        if missing:
            raise IntegrityError(f"events reference blobs that are not stored: {', '.join(sorted(missing))[:200]}")

    # -- reading -------------------------------------------------------------------------------
    async def _head(self, conn: AsyncConnection, stream: str) -> StreamHead | None:
        row = (
            await conn.execute(
                select(EVENTS.c.seq, EVENTS.c.hash, EVENTS.c.type)
                .where(EVENTS.c.stream == stream)
                .order_by(EVENTS.c.seq.desc())
                .limit(1)
            )
        ).first()
        return StreamHead(stream, row.seq, row.hash, row.type) if row else None

    async def stream_head(self, stream: str) -> StreamHead | None:
        async with self.engine.connect() as conn:
            return await self._head(conn, stream)

    async def read_stream(self, stream: str, *, after_seq: int = 0) -> AsyncIterator[StoredEvent]:
        while True:
            async with self.engine.connect() as conn:
                rows = (
                    await conn.execute(
                        select(*EVENT_COLUMNS)
                        .where(EVENTS.c.stream == stream, EVENTS.c.seq > after_seq)
                        .order_by(EVENTS.c.seq)
                        .limit(PAGE_SIZE)
                    )
                ).all()
            for row in rows:
                yield row_to_event(row)
            if len(rows) < PAGE_SIZE:
                return
            after_seq = rows[-1].seq

    async def read_all(
        self, *, after_position: int = 0, stream_prefix: str | None = None, types: Sequence[str] | None = None
    ) -> AsyncIterator[StoredEvent]:
        while True:
            query = select(*EVENT_COLUMNS).where(EVENTS.c.position > after_position)
            if stream_prefix is not None:
                query = query.where(EVENTS.c.stream.startswith(stream_prefix, autoescape=True))
            if types:
                query = query.where(EVENTS.c.type.in_(list(types)))
            async with self.engine.connect() as conn:
                rows = (await conn.execute(query.order_by(EVENTS.c.position).limit(PAGE_SIZE))).all()
            for row in rows:
                yield row_to_event(row)
            if len(rows) < PAGE_SIZE:
                return
            after_position = rows[-1].position

    async def list_streams(self, prefix: str | None = None) -> list[StreamHead]:
        last = select(EVENTS.c.stream, func.max(EVENTS.c.seq).label("seq")).group_by(EVENTS.c.stream)
        if prefix is not None:
            last = last.where(EVENTS.c.stream.startswith(prefix, autoescape=True))
        last = last.subquery()
        query = (
            select(EVENTS.c.stream, EVENTS.c.seq, EVENTS.c.hash, EVENTS.c.type)
            .join(last, (EVENTS.c.stream == last.c.stream) & (EVENTS.c.seq == last.c.seq))
            .order_by(EVENTS.c.stream)
        )
        async with self.engine.connect() as conn:
            return [StreamHead(r.stream, r.seq, r.hash, r.type) for r in await conn.execute(query)]

    async def get_blob(self, sha256: str) -> bytes:
        async with self.engine.connect() as conn:
            row = (await conn.execute(select(BLOBS).where(BLOBS.c.sha256 == sha256))).first()
        if row is None:
            raise KeyError(sha256)
        return decompress_blob(row.sha256, row.codec, row.data)

    async def blob_hashes(self) -> AsyncIterator[str]:
        after = ""
        while True:
            async with self.engine.connect() as conn:
                rows = (
                    await conn.execute(
                        select(BLOBS.c.sha256).where(BLOBS.c.sha256 > after).order_by(BLOBS.c.sha256).limit(PAGE_SIZE)
                    )
                ).all()
            for row in rows:
                yield row[0]
            if len(rows) < PAGE_SIZE:
                return
            after = rows[-1][0]

    async def count(self) -> tuple[int, int]:
        async with self.engine.connect() as conn:
            events = (await conn.execute(select(func.count()).select_from(EVENTS))).scalar_one()
            blobs = (await conn.execute(select(func.count()).select_from(BLOBS))).scalar_one()
        return events, blobs

    async def close(self) -> None:
        await self.engine.dispose()


def _settle(future: asyncio.Future[Any]) -> None:
    """After a failed append the blobs are not needed: cancel their compression or consume its error."""
    if not future.done():
        future.cancel()
    elif not future.cancelled():
        future.exception()


def _referenced_blobs(event: NewEvent | StoredEvent) -> list[str]:
    if isinstance(event, StoredEvent):
        return event.blobs
    return event.payload.blob_hashes()

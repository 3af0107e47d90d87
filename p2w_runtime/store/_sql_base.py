"""What every SQL backend's store is built on: one driver connection per transaction (``Session``), statements
compiled once per dialect (``Compiled``), and the hooks a backend supplies.

Statements are SQLAlchemy Core over the SQLModel tables, compiled once for the backend's dialect; the
hot paths (append, import, reading pages) run them on the driver connection through a ``Session``, one
driver call per statement. Going through SQLAlchemy's async adaptation costs three to four thread
hand-offs per statement, which made a five-event append take 2-3 ms instead of 0.6 ms
(docs/design/store.md, "Third round").
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sqlalchemy import BindParameter, Dialect, bindparam, func, insert, select, union_all
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler

from p2w_runtime.store._event_store import EventStore, StreamHead
from p2w_runtime.store._log_end import LogEnd
from p2w_runtime.store._rows import BLOBS, EVENT_COLUMNS, EVENTS, RUN_LABELS, SEGMENTS, WORK_ITEMS

ID_CHUNK = 500
"""Values per ``IN (...)`` list: well under every backend's bound-parameter limit."""


class Session(ABC):
    """One driver connection, as the hot paths use it."""

    @abstractmethod
    async def fetch(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Run one statement and return all its rows."""

    @abstractmethod
    async def execute_many(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        """Run one statement once per row of values."""

    async def insert_events(self, sql: str, rows: Iterable[Sequence[Any]], count: int) -> None:
        """Insert ``count`` events rows (``sql`` is the plain insert); a backend may use a faster path for a large
        batch. ``rows`` may seal each event as it is consumed: an error raised by it fails the whole insert."""
        await self.execute_many(sql, list(rows))


@dataclass(frozen=True, slots=True)
class Compiled:
    """A Core statement compiled for one dialect: its SQL text and how to order its parameters."""

    sql: str
    names: tuple[str, ...]
    defaults: dict[str, Any]

    @classmethod
    def of(cls, statement: ClauseElement, dialect: Dialect) -> Compiled:
        compiled = statement.compile(dialect=dialect, compile_kwargs={"render_postcompile": True})
        assert isinstance(compiled, SQLCompiler)  # statements, not DDL: they carry positional parameter order
        return cls(str(compiled), tuple(compiled.positiontup or ()), dict(compiled.params))

    def params(self, **values: Any) -> tuple[Any, ...]:
        return tuple(values[n] if n in values else self.defaults[n] for n in self.names)


class SqlStoreBase(EventStore):
    """An event store over a SQLAlchemy async engine; backends supply sessions and the blob upsert."""

    def __init__(self, engine: AsyncEngine, label: str) -> None:
        self.engine = engine
        self.label = label
        self._stored_blobs: set[str] = set()
        """Blob hashes known to be committed: blobs are never deleted, so these need no compressing again."""
        self._log_end: LogEnd | None = None
        """Where this writer's last commit left the log (``_log_end.py``)."""
        self._log_end_current = False
        """Whether the last write found ``_log_end`` still current, so the next ``append`` may trust it unread."""
        self.has_segments = True
        """Whether the database has the ``segments`` table: not a file of the earlier schema opened read-only."""

    # -- statements, each compiled on first use: a listing runs two of them (docs/design/startup.md) -------------
    def _compiled(self, statement: ClauseElement) -> Compiled:
        return Compiled.of(statement, self.engine.dialect)

    @cached_property
    def _max_position(self) -> Compiled:
        last = select(func.max(EVENTS.c.position))
        if self.has_segments:
            return self._compiled(last.add_columns(select(func.max(SEGMENTS.c.last_position)).scalar_subquery()))
        return self._compiled(last)

    @cached_property
    def _head_sql(self) -> Compiled:
        """The last row of a stream and its last segment: the head is whichever has the higher seq."""
        stream: BindParameter[str] = bindparam("stream")
        row = select(EVENTS.c.seq, EVENTS.c.hash, EVENTS.c.type).where(EVENTS.c.stream == stream)
        row = row.order_by(EVENTS.c.seq.desc()).limit(1)
        if not self.has_segments:
            return self._compiled(row)
        segment = select(SEGMENTS.c.last_seq, SEGMENTS.c.head_hash, SEGMENTS.c.last_type)
        segment = segment.where(SEGMENTS.c.stream == stream).order_by(SEGMENTS.c.last_seq.desc()).limit(1)
        return self._compiled(union_all(row.subquery().select(), segment.subquery().select()))

    @cached_property
    def _event_sql(self) -> Compiled:
        return self._compiled(
            select(*EVENT_COLUMNS).where(EVENTS.c.stream == bindparam("stream"), EVENTS.c.seq == bindparam("seq"))
        )

    @cached_property
    def _blob_sql(self) -> Compiled:
        return self._compiled(select(BLOBS.c.codec, BLOBS.c.data).where(BLOBS.c.sha256 == bindparam("sha256")))

    @cached_property
    def _insert_events(self) -> str:
        return self._compiled(insert(EVENTS)).sql

    @cached_property
    def _insert_segments(self) -> str:
        return self._compiled(insert(SEGMENTS)).sql

    @cached_property
    def _insert_blobs(self) -> str:
        return self._compiled(self._insert_ignoring_duplicates(BLOBS)).sql

    @cached_property
    def _insert_label(self) -> str:
        return self._compiled(self._insert_ignoring_duplicates(RUN_LABELS)).sql

    @cached_property
    def _insert_work(self) -> str:
        return self._compiled(self._insert_ignoring_duplicates(WORK_ITEMS)).sql

    @cached_property
    def _label_holder(self) -> Compiled:
        return self._compiled(select(RUN_LABELS.c.run_id).where(RUN_LABELS.c.label == bindparam("label")))

    # -- backend hooks -------------------------------------------------------------------------
    @abstractmethod
    def _writing(self) -> AbstractAsyncContextManager[Session]:
        """A session inside a transaction that holds the write lock from its start; committed on a clean exit.

        Driver errors leave it as ``IntegrityError`` (a constraint refused the write) or ``StoreError``.
        """

    @abstractmethod
    def _reading(self) -> AbstractAsyncContextManager[Session]:
        """A session for a few reads; driver errors leave it as ``StoreError``."""

    def _claiming(self) -> AbstractAsyncContextManager[Session]:
        """A transaction for coordination state (work items); a backend whose writers share one lock need not
        take it here."""
        return self._writing()

    @abstractmethod
    def _insert_ignoring_duplicates(self, table: Any) -> ClauseElement:
        """An insert into ``table`` that skips a row whose primary key is already stored (a blob's hash, a label)."""

    # -- shared by writing and reading -----------------------------------------------------------
    async def _position(self, session: Session) -> int:
        return max(position or 0 for position in (await session.fetch(self._max_position.sql))[0])

    async def _fetch_once(self, session: Session, statement: ClauseElement) -> list[tuple[Any, ...]]:
        """Run a statement whose values are part of it (an ``IN`` list): compiled for this one call."""
        compiled = Compiled.of(statement, self.engine.dialect)
        return await session.fetch(compiled.sql, compiled.params())

    async def _head(self, session: Session, stream: str) -> StreamHead | None:
        rows = await session.fetch(self._head_sql.sql, self._head_sql.params(stream=stream))
        return StreamHead(stream, *max(rows)) if rows else None

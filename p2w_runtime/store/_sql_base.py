"""What every SQL backend's store is built on: one driver connection per transaction (``Session``), statements
compiled once per dialect (``Compiled``), and the hooks a backend supplies.

Statements are SQLAlchemy Core over the SQLModel tables, compiled once for the backend's dialect (or ahead of
time: a backend's ``precompiled`` statements, by name of ``FIXED``, need no SQLAlchemy at all); the
hot paths (append, import, reading pages) run them on the driver connection through a ``Session``, one
driver call per statement. Going through SQLAlchemy's async adaptation costs three to four thread
hand-offs per statement, several times the append itself (docs/design/store.md, "Third round").
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import zstandard

from p2w_runtime.store import _core as core
from p2w_runtime.store._dictionaries import dictionary_of, is_loaded, load
from p2w_runtime.store._event_store import EventStore, IntegrityError, StreamHead
from p2w_runtime.store._log_end import LogEnd
from p2w_runtime.store._sqlalchemy import sa

if TYPE_CHECKING:
    from sqlalchemy import BindParameter, Dialect, Select
    from sqlalchemy.ext.asyncio import AsyncEngine
    from sqlalchemy.sql import ClauseElement

_Build = TypeVar("_Build", bound="Callable[[], ClauseElement]")

ID_CHUNK = 500
"""Values per ``IN (...)`` list: well under every backend's bound-parameter limit."""


def in_chunk() -> list[BindParameter[str]]:
    """``ID_CHUNK`` bound values ``:v0`` ... for an ``IN`` list in a statement compiled ahead (``chunk_values``)."""
    return [sa.bindparam(f"v{n}", type_=sa.String) for n in range(ID_CHUNK)]


def chunk_values(chunk: Sequence[str]) -> dict[str, str]:
    """1 to ``ID_CHUNK`` values as ``in_chunk``'s parameters, padded with the last one (a repeat changes no
    ``IN``): one statement compiled once serves every list, where compiling each list cost a SQLAlchemy import
    at start-up and a compilation per call (docs/design/startup.md)."""
    return {f"v{n}": chunk[min(n, len(chunk) - 1)] for n in range(ID_CHUNK)}


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
        assert isinstance(
            compiled, sa.sql.compiler.SQLCompiler
        )  # statements, not DDL: they carry positional parameter order
        return cls(str(compiled), tuple(compiled.positiontup or ()), dict(compiled.params))

    def params(self, **values: Any) -> tuple[Any, ...]:
        """The values in the statement's order; a parameter not given takes its default (None when it has none)."""
        return tuple(values[n] if n in values else self.defaults.get(n) for n in self.names)


FIXED: dict[str, Callable[[], ClauseElement]] = {}
"""The statements every SQL store runs as they are (values are bound parameters), by name: a backend may ship them
compiled (``SqlStoreBase.precompiled``), and ``_precompile.py`` compiles them for SQLite."""


def fixed(build: _Build, name: str = "") -> _Build:
    """Register ``build`` in ``FIXED`` under ``name`` or its own (without the leading underscore); a name registered
    twice is refused, since the later one would silently replace the statement the earlier module meant."""
    name = name or build.__name__.lstrip("_")
    if name in FIXED:
        raise ValueError(f"FIXED statement {name!r} is registered twice")
    FIXED[name] = build
    return build


SKIPPING_DUPLICATES = ("blobs", "run_labels", "work_items")
"""The tables written by ``_insert_ignoring_duplicates``."""


def or_skip_name(table: str) -> str:
    """The name of ``table``'s insert that skips duplicates, among a backend's statements compiled ahead."""
    return f"insert_or_skip_{table}"


@fixed
def _insert_events() -> ClauseElement:
    return sa.insert(core.EVENTS)


@fixed
def _insert_segments() -> ClauseElement:
    return sa.insert(core.SEGMENTS)


@fixed
def _max_position() -> Select[Any]:
    return sa.select(sa.func.max(core.EVENTS.c.position))


@fixed
def _head() -> Select[Any]:
    e = core.EVENTS.c
    return sa.select(e.seq, e.hash, e.type).where(e.stream == sa.bindparam("stream")).order_by(e.seq.desc()).limit(1)


@fixed
def _max_position_with_segments() -> ClauseElement:
    last_segment = sa.select(sa.func.max(core.SEGMENTS.c.last_position)).scalar_subquery()
    return _max_position().add_columns(last_segment)


@fixed
def _head_with_segments() -> ClauseElement:
    """The last row of a stream and its last segment: the head is whichever has the higher seq."""
    s = core.SEGMENTS.c
    segment = sa.select(s.last_seq, s.head_hash, s.last_type).where(s.stream == sa.bindparam("stream"))
    segment = segment.order_by(s.last_seq.desc()).limit(1)
    return sa.union_all(_head().subquery().select(), segment.subquery().select())


@fixed
def _blob() -> ClauseElement:
    b = core.BLOBS.c
    return sa.select(b.codec, b.data).where(b.sha256 == sa.bindparam("sha256"))


@fixed
def _label_holder() -> ClauseElement:
    return sa.select(core.RUN_LABELS.c.run_id).where(core.RUN_LABELS.c.label == sa.bindparam("label"))


class SqlStoreBase(EventStore):
    """An event store over a SQLAlchemy async engine; backends supply sessions and the blob upsert."""

    engine: AsyncEngine
    precompiled: ClassVar[Mapping[str, Compiled]] = {}
    """``FIXED`` statements compiled ahead for this backend's dialect: running them imports no SQLAlchemy."""

    def __init__(self, engine: AsyncEngine | None, label: str) -> None:
        if engine is not None:
            self.engine = engine  # a backend that makes its engine when first needed passes None (SQLite)
        self.label = label
        self._compiled_here: dict[str, Compiled] = {}
        """``FIXED`` statements this store compiled (those not ``precompiled``)."""
        self._stored_blobs: set[str] = set()
        """Blob hashes known to be committed: blobs are never deleted, so these need no compressing again."""
        self._log_end: LogEnd | None = None
        """Where this writer's last commit left the log (``_log_end.py``)."""
        self._log_end_current = False
        """Whether the last write found ``_log_end`` still current, so the next ``append`` may trust it unread."""
        self.has_segments = True
        """Whether the database has the ``segments`` table: not a file of the earlier schema opened read-only."""

    @property
    def dialect(self) -> Dialect:
        """What statements are compiled for (the engine's dialect)."""
        return self.engine.dialect

    # -- statements, each compiled on first use unless compiled ahead (docs/design/startup.md) -----------------
    def _compiled(self, statement: ClauseElement) -> Compiled:
        return Compiled.of(statement, self.dialect)

    def _statement(self, name: str) -> Compiled:
        """A ``FIXED`` statement: compiled ahead for this backend, else compiled on its first use here."""
        found = self.precompiled.get(name) or self._compiled_here.get(name)
        if found is None:
            found = self._compiled_here[name] = self._compiled(FIXED[name]())
        return found

    @cached_property
    def _max_position(self) -> Compiled:
        return self._with_segments("max_position")

    @cached_property
    def _head_sql(self) -> Compiled:
        return self._with_segments("head")

    def _with_segments(self, name: str) -> Compiled:
        """The ``FIXED`` statement ``name`` that reads rows and segments alike, or rows alone in a database of the
        earlier schema opened read-only (no ``segments`` table, and none can be added)."""
        return self._statement(f"{name}_with_segments" if self.has_segments else name)

    @cached_property
    def _blob_sql(self) -> Compiled:
        return self._statement("blob")

    @cached_property
    def _insert_events(self) -> str:
        return self._statement("insert_events").sql

    @cached_property
    def _insert_segments(self) -> str:
        return self._statement("insert_segments").sql

    @cached_property
    def _insert_blobs(self) -> str:
        return self._or_skip(core.BLOBS)

    @cached_property
    def _insert_label(self) -> str:
        return self._or_skip(core.RUN_LABELS)

    @cached_property
    def _insert_work(self) -> str:
        return self._or_skip(core.WORK_ITEMS)

    def _or_skip(self, table: Any) -> str:
        """``_insert_ignoring_duplicates(table)``, compiled ahead where the backend ships it (``or_skip_name``)."""
        ahead = self.precompiled.get(or_skip_name(table.name))
        return ahead.sql if ahead is not None else self._compiled(self._insert_ignoring_duplicates(table)).sql

    @cached_property
    def _label_holder(self) -> Compiled:
        return self._statement("label_holder")

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

    @staticmethod
    @abstractmethod
    def _insert_ignoring_duplicates(table: Any) -> ClauseElement:
        """An insert into ``table`` that skips a row whose primary key is already stored (a blob's hash, a label).

        Each backend has its own syntax, so these are not ``FIXED``; a backend may ship them compiled ahead."""

    # -- shared by writing and reading -----------------------------------------------------------
    async def _position(self, session: Session) -> int:
        return max(position or 0 for position in (await session.fetch(self._max_position.sql))[0])

    async def _fetch_once(self, session: Session, statement: ClauseElement) -> list[tuple[Any, ...]]:
        """Run a statement whose values are part of it (an ``IN`` list): compiled for this one call."""
        compiled = Compiled.of(statement, self.dialect)
        return await session.fetch(compiled.sql, compiled.params())

    async def _load_dictionaries(self, codecs: Iterable[str]) -> None:
        """Load the dictionaries segments of ``codecs`` need (``_dictionaries.py``): one missing or changed stays
        unloaded, and decoding a segment that needs it raises ``CorruptSegment``, which ``verify`` reports."""
        for sha in {dictionary_of(codec) for codec in codecs}:
            if sha is not None and not is_loaded(sha):
                try:
                    load(sha, await self.get_blob(sha))
                except (KeyError, zstandard.ZstdError, IntegrityError):
                    continue

    async def _head(self, session: Session, stream: str) -> StreamHead | None:
        rows = await session.fetch(self._head_sql.sql, self._head_sql.params(stream=stream))
        return StreamHead(stream, *max(rows)) if rows else None

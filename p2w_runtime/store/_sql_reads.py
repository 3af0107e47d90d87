"""The statements a SQL store reads events with, each selecting a page of rows and the segments overlapping it in
one statement (``_sql_pages.py`` merges them): one event, one stream, many streams, the whole log after a position,
and the log filtered by type and stream prefix.

Each page read is ``FIXED`` twice: reading rows and segments alike, and rows alone for a database of the earlier
schema (``SqlStoreBase._with_segments`` picks one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from p2w_runtime.store import _core as core
from p2w_runtime.store._segments import COMPACTED_LIKE
from p2w_runtime.store._sql_base import fixed, in_chunk
from p2w_runtime.store._sql_pages import with_segments, without_segments
from p2w_runtime.store._sqlalchemy import sa

if TYPE_CHECKING:
    from sqlalchemy import BindParameter, ClauseElement, ColumnElement, Select


def _event_rows() -> Select[Any]:
    e = core.EVENTS.c
    return sa.select(*core.EVENT_COLUMNS).where(e.stream == sa.bindparam("stream"), e.seq == sa.bindparam("seq"))


@fixed
def _event() -> ClauseElement:
    return without_segments(_event_rows())


@fixed
def _event_with_segments() -> ClauseElement:
    s = core.SEGMENTS.c
    stream: BindParameter[str] = sa.bindparam("stream")
    seq: BindParameter[int] = sa.bindparam("seq")
    return with_segments(_event_rows(), (s.stream == stream, s.first_seq <= seq, s.last_seq >= seq), 1)


def _all_after(*, segments_too: bool) -> ClauseElement:
    """A page of ``read_all`` without filters (what brings summaries up to date): compiled ahead."""
    after: BindParameter[int] = sa.bindparam("after", value=0)
    rows = sa.select(*core.EVENT_COLUMNS).where(core.EVENTS.c.position > after).order_by(core.EVENTS.c.position)
    segments_after = (core.SEGMENTS.c.last_position > after, core.SEGMENTS.c.codec.not_like(COMPACTED_LIKE))
    return page_of(rows, segments_after, core.SEGMENTS.c.last_position, segments_too=segments_too)


def _one_stream(*, segments_too: bool) -> ClauseElement:
    """A page of ``read_stream``: the stream is bound, so one statement compiled ahead reads any stream."""
    after: BindParameter[int] = sa.bindparam("after", value=0)
    stream: BindParameter[str] = sa.bindparam("stream", value="")
    e, s = core.EVENTS.c, core.SEGMENTS.c
    rows = sa.select(*core.EVENT_COLUMNS).where(e.stream == stream, e.seq > after).order_by(e.seq)
    return page_of(rows, (s.stream == stream, s.last_seq > after), s.last_seq, segments_too=segments_too)


def _streams_page(*, chained: bool, segments_too: bool) -> ClauseElement:
    """A page of ``read_streams`` (or, ``chained``, ``read_chained``: only a ``ChainedEvent``'s columns) over
    ``ID_CHUNK`` streams bound as an ``in_chunk``."""
    columns = core.CHAINED_COLUMNS if chained else core.EVENT_COLUMNS
    after_stream: BindParameter[str] = sa.bindparam("after_stream", value="")
    after: BindParameter[int] = sa.bindparam("after", value=0)
    listed = in_chunk()
    e, s = core.EVENTS.c, core.SEGMENTS.c
    rows = (
        sa.select(*columns)
        .where(
            e.stream.in_(listed),
            # not the row value (stream, seq) > (?, ?): SQLite then rescans the streams before it
            sa.or_(after_stream < e.stream, sa.and_(after_stream == e.stream, e.seq > after)),
        )
        .order_by(e.stream, e.seq)
    )
    segments = (
        s.stream.in_(listed),
        sa.or_(after_stream < s.stream, sa.and_(after_stream == s.stream, s.last_seq > after)),
    )
    return page_of(rows, segments, s.stream, s.last_seq, segments_too=segments_too)


def page_of(
    rows: Select[Any], segments: Sequence[ColumnElement[bool]], *order: Any, segments_too: bool
) -> ClauseElement:
    """A page: up to ``:limit`` rows and the next ``:segment_limit`` segments, in one statement. A ``UNION`` of
    ordered parts has no order of its own, and ordering it in SQL copied every selected row, payload and all, into a
    temporary B-tree (twice the time of the read itself); the reader (``SqlEventStore._merged``) sorts the page instead,
    one comparison a row for parts that arrive in order (docs/design/store.md, "a page's order made by the reader")."""
    rows = rows.limit(sa.bindparam("limit", value=0))
    if not segments_too:
        return without_segments(rows)
    return with_segments(rows, segments, sa.bindparam("segment_limit", value=0), *order)


FILTER_SLOTS = 8
"""Types a filtered read binds into its statement compiled ahead (``filtered_page``); a read of more types compiles
its own (``all_page``)."""
FILTERED = ("filtered_untyped", "filtered_typed", "filtered_indexed")
"""The filtered reads compiled ahead: of any type; of the types bound; of lifecycle types (read by their index)."""


def filtered_page(*, segments_too: bool, kind: str) -> ClauseElement:
    """A page of ``read_all`` over the streams starting with ``:prefix`` ('' for every stream) after ``:after``, of
    the types bound to ``:type_0`` to ``:type_7`` unless ``kind`` is ``filtered_untyped`` (slots left unbound hold
    '', which no event's type is). Compiled ahead, so a viewer catching up with a run's usage imports no SQLAlchemy;
    ``filtered_indexed`` repeats the lifecycle index's condition, which SQLite needs to use that partial index."""
    after: BindParameter[int] = sa.bindparam("after", value=0)
    prefix: BindParameter[str] = sa.bindparam("prefix", value="", type_=sa.String)
    e, s = core.EVENTS.c, core.SEGMENTS.c

    def under(stream: ColumnElement[str]) -> ColumnElement[bool]:  # substr, not LIKE: no escaping of a bound value
        return sa.func.substr(stream, 1, sa.func.length(prefix)) == prefix

    rows = sa.select(*core.EVENT_COLUMNS).where(e.position > after, under(e.stream))
    if kind != "filtered_untyped":
        rows = rows.where(
            e.type.in_([sa.bindparam(f"type_{i}", value="", type_=sa.String) for i in range(FILTER_SLOTS)])
        )
    if kind == "filtered_indexed":
        rows = rows.where(sa.text(core.TYPE_INDEXED_SQL))
    segments = (s.last_position > after, s.codec.not_like(COMPACTED_LIKE), under(s.stream))
    return page_of(rows.order_by(e.position), segments, s.last_position, segments_too=segments_too)


def filtered_kind(types: Sequence[str] | None) -> str | None:
    """Which ``FILTERED`` statement reads ``types`` (None: too many for its slots)."""
    if not types:
        return "filtered_untyped"
    if len(set(types)) > FILTER_SLOTS:
        return None
    return "filtered_indexed" if set(types) <= set(core.TYPE_INDEXED) else "filtered_typed"


def all_page(types: Sequence[str] | None, prefix: str | None) -> tuple[Select[Any], list[ColumnElement[bool]], Any]:
    """A page of ``read_all`` with filters, as ``SqlEventStore._page`` takes it: rows of ``types`` (none: every type)
    in streams under ``prefix`` (none: every stream), and the segments that may hold such events.

    On SQLite only the lifecycle types have an index (``TYPE_INDEXED``); other typed reads walk the log by position
    from ``after``, as an untyped read does (docs/design/store.md, "Appends, fifth round").
    """
    after: BindParameter[int] = sa.bindparam("after", value=0)
    e, s = core.EVENTS.c, core.SEGMENTS.c
    rows = sa.select(*core.EVENT_COLUMNS).where(e.position > after)
    segments: list[ColumnElement[bool]] = [s.last_position > after, s.codec.not_like(COMPACTED_LIKE)]
    if prefix is not None:
        rows = rows.where(e.stream.startswith(prefix, autoescape=True))
        segments.append(s.stream.startswith(prefix, autoescape=True))
    if types:
        rows = rows.where(e.type.in_(list(types)))
        if set(types) <= set(core.TYPE_INDEXED):
            rows = rows.where(sa.text(core.TYPE_INDEXED_SQL))  # what lets SQLite use its partial index
    return rows.order_by(e.position), segments, s.last_position


_PAGES: dict[str, Callable[..., ClauseElement]] = {
    "stream_events": _one_stream,
    "events_after": _all_after,
    "streams_events": partial(_streams_page, chained=False),
    "streams_chained": partial(_streams_page, chained=True),
}
for _name, _build in _PAGES.items():
    fixed(partial(_build, segments_too=False), _name)
    fixed(partial(_build, segments_too=True), f"{_name}_with_segments")
for _kind in FILTERED:
    fixed(partial(filtered_page, segments_too=False, kind=_kind), _kind)
    fixed(partial(filtered_page, segments_too=True, kind=_kind), f"{_kind}_with_segments")

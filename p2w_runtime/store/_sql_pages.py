"""How a SQL read pages through rows and segments together: where a segment's fields sit in a selected row, the key
each read orders by, and a page's rows and segments' events merged in order (docs/design/store.md, "Segments")."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from p2w_rt.schemas import ChainedEvent, StoredEvent
from p2w_runtime.store import _core as core
from p2w_runtime.store._core import CHAINED_FIELDS, EVENT_FIELDS
from p2w_runtime.store._segments import segment_events
from p2w_runtime.store._sqlalchemy import sa

if TYPE_CHECKING:
    from sqlalchemy import BindParameter, ColumnElement, CompoundSelect, Select

STREAM, SEQ, POSITION = (EVENT_FIELDS.index(name) for name in ("stream", "seq", "position"))
"""Where a selected row holds the key the next page starts after."""
_Read = TypeVar("_Read")
EVENTS_PER_SEGMENT = 16
"""The fewest events a segment holds (``SEGMENT_MIN_EVENTS`` as the store writes): a page selects ``size`` rows and
``size // EVENTS_PER_SEGMENT`` segments. A value of the reads' own: tests and benchmarks raise ``SEGMENT_MIN_EVENTS``
to write rows only, and a copy of it taken while raised made every page of a process one segment, ~450 statements
where 8 do (docs/design/store.md, "Segments")."""

_SEGMENT_PLACES = {
    "stream": "stream", "seq": "first_seq", "position": "first_position", "schema_version": "last_seq",
    "type": "codec", "prev_hash": "prev_hash", "hash": "head_hash",
}  # fmt: skip
"""Where a page's segments rows put a segment's fields: in the events column of the same type, so one statement
selects both (``UNION ALL``); ``data`` follows in a column of its own."""


def segment_columns(columns: Sequence[Any]) -> list[Any]:
    """What a segments row selects in place of events ``columns``: its fields where they fit, typed NULLs elsewhere."""
    segments = core.SEGMENTS.c
    return [
        segments[_SEGMENT_PLACES[c.name]] if c.name in _SEGMENT_PLACES else sa.cast(sa.null(), c.type) for c in columns
    ] + [segments.data]


def without_segments(rows: Select[Any]) -> Select[Any]:
    """``rows`` (a select of events columns) with the empty ``data`` column a page's rows carry."""
    return rows.add_columns(sa.cast(sa.null(), sa.LargeBinary).label("data"))


def with_segments(
    rows: Select[Any], segments: Sequence[ColumnElement[bool]], limit: int | BindParameter[int], *order: Any
) -> CompoundSelect[Any]:
    """``rows`` (``without_segments``), then up to ``limit`` segments rows matching ``segments`` in ``order``,
    placed in the same columns (``segment_columns``) with ``data`` last: one statement, so one snapshot."""
    columns = list(rows.selected_columns)
    segment = sa.select(*segment_columns(columns)).where(*segments).order_by(*order).limit(limit)
    return sa.union_all(without_segments(rows).subquery().select(), segment.subquery().select())


def segments_per_page(size: int) -> int:
    """Segments a page selects beside ``size`` rows: about as many events again."""
    return max(1, size // EVENTS_PER_SEGMENT)


@dataclass(frozen=True, slots=True)
class At:
    """Where a selected row of one column set holds what decoding a segment needs (``_SEGMENT_PLACES``)."""

    stream: int
    first_seq: int
    last_seq: int
    first_position: int | None
    prev_hash: int
    head_hash: int
    codec: int

    @classmethod
    def of(cls, names: Sequence[str]) -> At:
        """Where the columns named ``names`` put a segment's fields."""
        at = {name: names.index(name) for name in _SEGMENT_PLACES if name in names}
        return cls(
            at["stream"], at["seq"], at["schema_version"], at.get("position"), at["prev_hash"], at["hash"], at["type"]
        )


AT_EVENT, AT_CHAINED = At.of(EVENT_FIELDS), At.of(CHAINED_FIELDS)


def decoded(row: tuple[Any, ...], at: At) -> list[StoredEvent]:
    position = row[at.first_position] if at.first_position is not None else 0
    return segment_events(
        row[at.stream], row[at.first_seq], row[at.last_seq], position, row[at.prev_hash], row[at.head_hash],
        row[at.codec], row[-1],
    )  # fmt: skip


def segment_stored(row: tuple[Any, ...]) -> list[StoredEvent]:
    return decoded(row, AT_EVENT)


def segment_chained(row: tuple[Any, ...]) -> list[ChainedEvent]:
    return [ChainedEvent.of(e) for e in decoded(row, AT_CHAINED)]


@dataclass(frozen=True, slots=True)
class Order:
    """How a read orders its events: the key of a selected row, the key of a segment's last event, the key of an
    event or chained event it yields, the bound values of the page after a key, and where its segments' fields
    are."""

    row_key: Callable[[tuple[Any, ...]], tuple[Any, ...]]
    segment_key: Callable[[tuple[Any, ...]], tuple[Any, ...]]
    key: Callable[[Any], tuple[Any, ...]]
    params: Callable[[tuple[Any, ...]], dict[str, Any]]
    at: At = AT_EVENT


BY_POSITION = Order(
    lambda row: (row[POSITION],),
    lambda row: (row[AT_EVENT.first_position] + row[AT_EVENT.last_seq] - row[AT_EVENT.first_seq],),  # type: ignore[index]
    lambda event: (event.position,),
    lambda key: {"after": key[0]},
)
BY_SEQ = Order(
    lambda row: (row[SEQ],),
    lambda row: (row[AT_EVENT.last_seq],),
    lambda event: (event.seq,),
    lambda key: {"after": key[0]},
)
BY_STREAM_SEQ = Order(
    lambda row: (row[STREAM], row[SEQ]),
    lambda row: (row[AT_EVENT.stream], row[AT_EVENT.last_seq]),
    lambda event: (event.stream, event.seq),
    lambda key: {"after_stream": key[0], "after": key[1]},
)
BY_CHAINED = Order(
    lambda row: (row[0], row[1]),  # (stream, seq) come first
    lambda row: (row[AT_CHAINED.stream], row[AT_CHAINED.last_seq]),
    lambda event: (event.stream, event.seq),
    BY_STREAM_SEQ.params,
    AT_CHAINED,
)


def in_order(
    rows: list[tuple[Any, ...]],
    segments: list[tuple[Any, ...]],
    order: Order,
    after: tuple[Any, ...],
    bound: tuple[Any, ...] | None,
    make: Callable[[tuple[Any, ...]], _Read],
    make_segment: Callable[[tuple[Any, ...]], list[_Read]],
) -> Iterator[_Read]:
    """A page's rows and its segments' events after ``after`` and up to ``bound`` (None: all), by key.

    No row's key and no other segment's last key falls inside a segment's range, so a segment lies wholly on one side
    of the bound and of each row: rows and segments are put in order by a row's key and a segment's last key, and a
    segment is decoded only when its turn comes. A reader that stops early (a first screen, a page of a timeline)
    decodes only the segments it reached; one past the bound is left to the next page, which selects it again.
    A page of rows alone (a log of rows, a stream being recorded), sorted by ``SqlEventStore._merged``, is
    handed out as it is, at one key comparison a row, since every event of a ``verify`` passes here."""
    if not segments:
        row_key = order.row_key
        for row in rows:
            if bound is not None and row_key(row) > bound:
                return
            yield make(row[:-1])
        return
    units = [(order.row_key(row), False, i) for i, row in enumerate(rows)]
    units += [(order.segment_key(segment), True, i) for i, segment in enumerate(segments)]
    units.sort(key=lambda unit: (unit[0], unit[1]))
    for key, is_segment, i in units:
        if bound is not None and key > bound:
            return
        if not is_segment:
            yield make(rows[i][:-1])
            continue
        for event in make_segment(segments[i]):
            if order.key(event) > after:
                yield event

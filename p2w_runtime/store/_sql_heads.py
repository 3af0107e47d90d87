"""Each stream's head as the SQL stores read it: the last (seq, hash, type) a table holds per stream, rows and
segments alike (``list_streams`` takes the higher of the two).

Under a prefix, one ``GROUP BY`` over the table's ``(stream, seq)`` index. For every stream (what ``verify``'s
incremental check and ``migrate`` read), a walk down that index from its end instead: one seek a stream, each landing
on that stream's last entry, where the ``GROUP BY`` reads every entry of the index, one per event
(docs/design/integrity.md, "Speed").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from p2w_runtime.store import _core as core
from p2w_runtime.store._event_store import StreamHead
from p2w_runtime.store._sql_base import SqlStoreBase, fixed
from p2w_runtime.store._sqlalchemy import sa

if TYPE_CHECKING:
    from sqlalchemy import BindParameter, ClauseElement, ColumnElement, Table


def _heads(stream: ColumnElement[str], seq: ColumnElement[int], hash_: Any, type_: Any) -> ClauseElement:
    """Each stream's last (seq, hash, type) held in one table, for streams starting with ``:prefix`` ('' for all).

    The prefix is compared as a ``substr``, not a ``LIKE``: the statement is compiled once for every prefix, and a
    bound ``LIKE`` pattern would need its ``%`` and ``_`` escaped by the caller."""
    prefix: BindParameter[str] = sa.bindparam("prefix", value="", type_=sa.String)
    heads = (
        sa.select(stream, sa.func.max(seq).label("seq"))
        .where(sa.func.substr(stream, 1, sa.func.length(prefix)) == prefix)
        .group_by(stream)
        .subquery()
    )
    return sa.select(stream, seq, hash_, type_).join(heads, (stream == heads.c.stream) & (seq == heads.c.seq))


def _every_head(table: Table, key: str, seq: str, hash_: str, type_: str) -> ClauseElement:
    """Every stream's last (seq, hash, type) held in ``table``, by a recursive walk down its ``(stream, seq)`` index:
    from the greatest entry, each step seeks the greatest entry of a lesser stream (the head of the stream before)
    and reads its row by the primary key ``key``. The first step is a subquery: a ``LIMIT`` beside a recursive
    ``UNION ALL`` would bound the whole walk."""
    t = table.c
    names = (key, "stream", seq, hash_, type_)
    first = sa.select(*(t[name] for name in names)).order_by(t.stream.desc(), t[seq].desc()).limit(1).subquery()
    walk = sa.select(*first.c).cte("walk", recursive=True)
    step, probe = table.alias("step"), table.alias("probe")
    before = (
        sa.select(probe.c[key])
        .where(probe.c.stream < walk.c.stream)
        .order_by(probe.c.stream.desc(), probe.c[seq].desc())
        .limit(1)
        .scalar_subquery()
    )
    walk = walk.union_all(sa.select(*(step.c[name] for name in names)).join_from(walk, step, step.c[key] == before))
    return sa.select(walk.c.stream, walk.c[seq], walk.c[hash_], walk.c[type_])


@fixed
def _stream_heads() -> ClauseElement:
    e = core.EVENTS.c
    return _heads(e.stream, e.seq, e.hash, e.type)


@fixed
def _segment_heads() -> ClauseElement:
    s = core.SEGMENTS.c
    return _heads(s.stream, s.last_seq, s.head_hash, s.last_type)


@fixed
def _every_stream_head() -> ClauseElement:
    return _every_head(core.EVENTS, "position", "seq", "hash", "type")


@fixed
def _every_segment_head() -> ClauseElement:
    return _every_head(core.SEGMENTS, "first_position", "last_seq", "head_hash", "last_type")


class SqlHeads(SqlStoreBase):
    """``list_streams``: under a prefix by ``GROUP BY``, the whole store by the walk."""

    async def list_streams(self, prefix: str | None = None) -> list[StreamHead]:
        """The higher of each stream's heads in rows and in segments, a ``StreamHead`` made for that one only."""
        found: dict[str, tuple[Any, ...]] = {}
        names = ["stream_heads", "segment_heads"] if prefix else ["every_stream_head", "every_segment_head"]
        async with self._reading() as session:
            for name in names if self.has_segments else names[:1]:
                heads = self._statement(name)
                for row in await session.fetch(heads.sql, heads.params(prefix=prefix) if prefix else heads.params()):
                    held = found.get(row[0])
                    if held is None or held[1] < row[1]:
                        found[row[0]] = row
        return [StreamHead(*found[stream]) for stream in sorted(found)]

"""Read models kept beside the log (``SummaryRows``) over SQL: two plain tables, written under the write lock.

The store keeps rows and a mark; what they mean is their owner's (the domain's run and episode summaries,
docs/design/summaries.md). The statements are SQLAlchemy Core over the SQLModel tables, so SQLite and PostgreSQL
run the same code; a listing's (``summary_mark``, ``summaries``, ``summaries_of_group``) are ``FIXED``, so a backend
can run them compiled ahead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from p2w_runtime.store import _core as core
from p2w_runtime.store._event_store import StoreError, Summary
from p2w_runtime.store._sql_base import ID_CHUNK, SqlStoreBase, fixed
from p2w_runtime.store._sqlalchemy import sa

if TYPE_CHECKING:
    from sqlalchemy import ClauseElement, Select


def _summary_rows() -> Select[Any]:
    s = core.SUMMARIES.c
    return sa.select(s.kind, s.key, s.grp, s.ordinal, s.body)


@fixed
def _summary_mark() -> ClauseElement:
    return sa.select(core.MARKS.c.position).where(core.MARKS.c.model == sa.bindparam("model"))


@fixed
def _insert_summary() -> ClauseElement:
    return sa.insert(core.SUMMARIES)


@fixed
def _delete_summary() -> ClauseElement:
    s = core.SUMMARIES.c
    return sa.delete(core.SUMMARIES).where(s.kind == sa.bindparam("kind"), s.key == sa.bindparam("key"))


@fixed
def _insert_mark() -> ClauseElement:
    return sa.insert(core.MARKS)


@fixed
def _move_mark() -> ClauseElement:
    marks = core.MARKS
    return sa.update(marks).where(marks.c.model == sa.bindparam("model")).values(position=sa.bindparam("until"))


@fixed
def _summaries() -> ClauseElement:
    s = core.SUMMARIES.c
    return _summary_rows().where(s.kind == sa.bindparam("kind")).order_by(s.grp, s.ordinal, s.key)


@fixed
def _summaries_of_group() -> ClauseElement:
    s = core.SUMMARIES.c
    of_group = _summary_rows().where(s.kind == sa.bindparam("kind"), s.grp == sa.bindparam("grp"))
    return of_group.order_by(s.grp, s.ordinal, s.key)


class SqlSummaries(SqlStoreBase):
    """``SummaryRows`` for every SQL backend."""

    async def log_end(self) -> int:
        async with self._reading() as session:
            return await self._position(session)

    async def summary_mark(self, model: str) -> int | None:
        query = self._statement("summary_mark")
        try:
            async with self._reading() as session:
                rows = await session.fetch(query.sql, query.params(model=model))
        except StoreError:
            if getattr(self, "read_only", False):
                return None  # a file written before the tables existed, opened read-only: nothing can create them
            raise
        return rows[0][0] if rows else 0

    async def read_summaries(
        self, kind: str, *, group: str | None = None, keys: Sequence[str] | None = None
    ) -> list[Summary]:
        if keys is None:  # a listing: one statement, compiled ahead
            query = self._statement("summaries" if group is None else "summaries_of_group")
            async with self._reading() as session:
                rows = await session.fetch(query.sql, query.params(kind=kind, grp=group))
            return [Summary(*row) for row in rows]
        s = core.SUMMARIES.c
        base = _summary_rows().where(s.kind == kind)
        if group is not None:
            base = base.where(s.grp == group)
        wanted = sorted(set(keys))
        found: list[Summary] = []
        async with self._reading() as session:
            for i in range(0, len(wanted), ID_CHUNK):
                chunk = base.where(s.key.in_(wanted[i : i + ID_CHUNK]))
                found.extend(Summary(*row) for row in await self._fetch_once(session, chunk))
        found.sort(key=lambda row: (row.group, row.ordinal, row.key))
        return found

    async def write_summaries(self, model: str, rows: Sequence[Summary], *, since: int, until: int) -> bool:
        """Statements compiled ahead only: the first listing after a recording brings the rows up to date."""
        read_mark = self._statement("summary_mark")
        async with self._writing() as session:
            mark = await session.fetch(read_mark.sql, read_mark.params(model=model))
            if (mark[0][0] if mark else 0) != since:
                return False
            if rows:
                stale = self._statement("delete_summary")
                await session.execute_many(stale.sql, [stale.params(kind=r.kind, key=r.key) for r in rows])
                insert = self._statement("insert_summary")
                await session.execute_many(
                    insert.sql,
                    [insert.params(kind=r.kind, key=r.key, grp=r.group, ordinal=r.ordinal, body=r.body) for r in rows],
                )
            moved = self._statement("move_mark" if mark else "insert_mark")
            await session.fetch(moved.sql, moved.params(model=model, until=until, position=until))
        return True

    async def clear_summaries(self, model: str, kinds: Sequence[str]) -> None:
        async with self._writing() as session:
            await self._fetch_once(session, sa.delete(core.SUMMARIES).where(core.SUMMARIES.c.kind.in_(list(kinds))))
            await self._fetch_once(session, sa.delete(core.MARKS).where(core.MARKS.c.model == model))

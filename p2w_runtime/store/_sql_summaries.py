"""Read models kept beside the log (``SummaryRows``) over SQL: two plain tables, written under the write lock.

The store keeps rows and a mark; what they mean is their owner's (the domain's run and episode summaries,
docs/design/summaries.md). The statements are SQLAlchemy Core over the SQLModel tables, so SQLite and PostgreSQL
run the same code.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property

from sqlalchemy import delete, insert, select, update

from p2w_runtime.store._event_store import StoreError, Summary
from p2w_runtime.store._sql_base import ID_CHUNK, SqlStoreBase
from p2w_runtime.store._tables import SummaryMarkRow, SummaryRow

SUMMARIES = SummaryRow.metadata.tables[SummaryRow.__tablename__]
MARKS = SummaryMarkRow.metadata.tables[SummaryMarkRow.__tablename__]
_COLUMNS = (SUMMARIES.c.kind, SUMMARIES.c.key, SUMMARIES.c.grp, SUMMARIES.c.ordinal, SUMMARIES.c.body)
_ORDER = (SUMMARIES.c.grp, SUMMARIES.c.ordinal, SUMMARIES.c.key)


class SqlSummaries(SqlStoreBase):
    """``SummaryRows`` for every SQL backend."""

    @cached_property
    def _insert_summary(self) -> str:
        return self._compiled(insert(SUMMARIES)).sql

    async def log_end(self) -> int:
        async with self._reading() as session:
            return await self._position(session)

    async def summary_mark(self, model: str) -> int | None:
        query = select(MARKS.c.position).where(MARKS.c.model == model)
        try:
            async with self._reading() as session:
                rows = await self._fetch_once(session, query)
        except StoreError:
            if getattr(self, "read_only", False):
                return None  # a file written before the tables existed, opened read-only: nothing can create them
            raise
        return rows[0][0] if rows else 0

    async def read_summaries(
        self, kind: str, *, group: str | None = None, keys: Sequence[str] | None = None
    ) -> list[Summary]:
        base = select(*_COLUMNS).where(SUMMARIES.c.kind == kind)
        if group is not None:
            base = base.where(SUMMARIES.c.grp == group)
        if keys is None:
            queries = [base.order_by(*_ORDER)]
        else:
            wanted = sorted(set(keys))
            queries = [
                base.where(SUMMARIES.c.key.in_(wanted[i : i + ID_CHUNK])) for i in range(0, len(wanted), ID_CHUNK)
            ]
        found: list[Summary] = []
        async with self._reading() as session:
            for query in queries:
                found.extend(Summary(*row) for row in await self._fetch_once(session, query))
        if keys is not None:
            found.sort(key=lambda s: (s.group, s.ordinal, s.key))
        return found

    async def write_summaries(self, model: str, rows: Sequence[Summary], *, since: int, until: int) -> bool:
        async with self._writing() as session:
            mark = await self._fetch_once(session, select(MARKS.c.position).where(MARKS.c.model == model))
            if (mark[0][0] if mark else 0) != since:
                return False
            by_kind: dict[str, list[str]] = {}
            for row in rows:
                by_kind.setdefault(row.kind, []).append(row.key)
            for kind, keys in by_kind.items():
                for i in range(0, len(keys), ID_CHUNK):
                    chunk = keys[i : i + ID_CHUNK]
                    stale = delete(SUMMARIES).where(SUMMARIES.c.kind == kind, SUMMARIES.c.key.in_(chunk))
                    await self._fetch_once(session, stale)
            if rows:
                await session.execute_many(
                    self._insert_summary, [(r.kind, r.key, r.group, r.ordinal, r.body) for r in rows]
                )
            if mark:
                await self._fetch_once(session, update(MARKS).where(MARKS.c.model == model).values(position=until))
            else:
                await self._fetch_once(session, insert(MARKS).values(model=model, position=until))
        return True

    async def clear_summaries(self, model: str, kinds: Sequence[str]) -> None:
        async with self._writing() as session:
            await self._fetch_once(session, delete(SUMMARIES).where(SUMMARIES.c.kind.in_(list(kinds))))
            await self._fetch_once(session, delete(MARKS).where(MARKS.c.model == model))

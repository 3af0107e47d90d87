"""The work queue of ``record --worker`` over SQL: tasks leased to one worker at a time, taken over on expiry.

Every operation is one statement, compiled once per store: a claim is ``UPDATE ... WHERE task_id = (SELECT the
first free task FOR UPDATE SKIP LOCKED) RETURNING task_id`` (PostgreSQL: concurrent workers skip each other's row
instead of queueing behind it; SQLite ignores the clause, its ``BEGIN IMMEDIATE`` already serialises claims).
Claims do not take the event log's write lock. The queue pattern and its cost: docs/design/postgres.md.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING

from p2w_runtime.store import _core as core
from p2w_runtime.store._claims import ClaimHolder
from p2w_runtime.store._event_store import WorkItem
from p2w_runtime.store._sql_base import Compiled, SqlStoreBase
from p2w_runtime.store._sqlalchemy import sa

if TYPE_CHECKING:
    from sqlalchemy import ColumnElement, Dialect
    from sqlalchemy.sql.dml import Update


class SqlWorkQueue(SqlStoreBase):
    async def seed_work(self, run_id: str, task_ids: Sequence[str]) -> None:
        rows = [(run_id, task, None, None, None, 0.0, False) for task in dict.fromkeys(task_ids)]
        async with self._claiming() as session:
            await session.execute_many(self._insert_work, rows)

    async def claim_work(self, run_id: str, me: ClaimHolder, lease_s: float) -> str | None:
        now = time.time()
        claim = self._work_sql.claim
        params = claim.params(run=run_id, now=now, w_owner=me.owner, w_host=me.host, w_pid=me.pid, until=now + lease_s)
        async with self._claiming() as session:
            rows = await session.fetch(claim.sql, params)
        return str(rows[0][0]) if rows else None

    async def renew_work(self, run_id: str, task_id: str, me: ClaimHolder, lease_s: float) -> bool:
        renew = self._work_sql.renew
        params = renew.params(run=run_id, task=task_id, mine=me.owner, until=time.time() + lease_s)
        async with self._claiming() as session:
            return bool(await session.fetch(renew.sql, params))

    async def finish_work(self, run_id: str, task_id: str, me: ClaimHolder) -> None:
        finish = self._work_sql.finish
        async with self._claiming() as session:
            await session.fetch(finish.sql, finish.params(run=run_id, task=task_id, mine=me.owner))

    async def release_work(self, run_id: str, task_id: str, me: ClaimHolder) -> None:
        release = self._work_sql.release
        async with self._claiming() as session:
            await session.fetch(release.sql, release.params(run=run_id, task=task_id, mine=me.owner))

    async def work_items(self, run_id: str) -> list[WorkItem]:
        w = core.WORK_ITEMS.c
        query = (
            sa.select(w.task_id, w.owner, w.host, w.pid, w.lease_until, w.done)
            .where(w.run_id == run_id)
            .order_by(w.task_id)
        )
        async with self._reading() as session:
            rows = await self._fetch_once(session, query)
        return [WorkItem(task, owner, host, pid, lease, bool(done)) for task, owner, host, pid, lease, done in rows]

    @cached_property
    def _work_sql(self) -> _WorkStatements:
        return _WorkStatements(self.dialect)


class _WorkStatements:
    """The queue's statements for one dialect, each ``RETURNING`` the task it changed (SQLite 3.35+, PostgreSQL)."""

    def __init__(self, dialect: Dialect) -> None:
        w = core.WORK_ITEMS.c
        free = (
            sa.select(w.task_id)
            .where(
                w.run_id == sa.bindparam("run"),
                w.done.is_(False),
                sa.or_(w.owner.is_(None), w.lease_until < sa.bindparam("now")),
            )
            .order_by(w.task_id)
            .limit(1)
            .with_for_update(skip_locked=True)
            .scalar_subquery()
        )
        self.claim = self._of(
            sa.update(core.WORK_ITEMS)
            .where(w.run_id == sa.bindparam("run"), w.task_id == free)
            .values(
                owner=sa.bindparam("w_owner"),
                host=sa.bindparam("w_host"),
                pid=sa.bindparam("w_pid"),
                lease_until=sa.bindparam("until"),
            ),
            dialect,
        )
        self.renew = self._of(
            sa.update(core.WORK_ITEMS).where(_mine()).values(lease_until=sa.bindparam("until")), dialect
        )
        self.finish = self._of(sa.update(core.WORK_ITEMS).where(_mine()).values(done=True), dialect)
        self.release = self._of(
            sa.update(core.WORK_ITEMS)
            .where(_mine(), w.done.is_(False))
            .values(owner=None, host=None, pid=None, lease_until=0.0),
            dialect,
        )

    @staticmethod
    def _of(statement: Update, dialect: Dialect) -> Compiled:
        return Compiled.of(statement.returning(core.WORK_ITEMS.c.task_id), dialect)


def _mine() -> ColumnElement[bool]:
    w = core.WORK_ITEMS.c
    return sa.and_(w.run_id == sa.bindparam("run"), w.task_id == sa.bindparam("task"), w.owner == sa.bindparam("mine"))

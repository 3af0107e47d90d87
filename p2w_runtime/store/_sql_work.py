"""The work queue of ``record --worker`` over SQL: tasks leased to one worker at a time, taken over on expiry.

A claim selects the first free task ``FOR UPDATE SKIP LOCKED`` (PostgreSQL: concurrent workers skip each other's
row instead of queueing behind it; SQLite ignores the clause, its ``BEGIN IMMEDIATE`` already serialises
claims) and leases it in the same transaction. Claims do not take the event log's write lock.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from sqlalchemy import ColumnElement, and_, or_, select, update

from p2w_runtime.store._claims import ClaimHolder
from p2w_runtime.store._event_store import WorkItem
from p2w_runtime.store._rows import WORK_ITEMS
from p2w_runtime.store._sql_base import SqlStoreBase

W = WORK_ITEMS.c


class SqlWorkQueue(SqlStoreBase):
    async def seed_work(self, run_id: str, task_ids: Sequence[str]) -> None:
        rows = [(run_id, task, None, None, None, 0.0, False) for task in dict.fromkeys(task_ids)]
        async with self._claiming() as session:
            await session.execute_many(self._insert_work, rows)

    async def claim_work(self, run_id: str, me: ClaimHolder, lease_s: float) -> str | None:
        now = time.time()
        free = (
            select(W.task_id)
            .where(W.run_id == run_id, W.done.is_(False), or_(W.owner.is_(None), W.lease_until < now))
            .order_by(W.task_id)
            .limit(1)
            .with_for_update(skip_locked=True)
        )
        async with self._claiming() as session:
            rows = await self._fetch_once(session, free)
            if not rows:
                return None
            task_id = str(rows[0][0])
            lease = dict(owner=me.owner, host=me.host, pid=me.pid, lease_until=now + lease_s)
            await self._fetch_once(session, update(WORK_ITEMS).where(_item(run_id, task_id)).values(**lease))
        return task_id

    async def renew_work(self, run_id: str, task_id: str, me: ClaimHolder, lease_s: float) -> bool:
        mine = and_(_item(run_id, task_id), W.owner == me.owner)
        async with self._claiming() as session:
            held = await self._fetch_once(session, select(W.task_id).where(mine))
            if held:
                await self._fetch_once(
                    session, update(WORK_ITEMS).where(mine).values(lease_until=time.time() + lease_s)
                )
        return bool(held)

    async def finish_work(self, run_id: str, task_id: str, me: ClaimHolder) -> None:
        mine = and_(_item(run_id, task_id), W.owner == me.owner)
        async with self._claiming() as session:
            await self._fetch_once(session, update(WORK_ITEMS).where(mine).values(done=True))

    async def release_work(self, run_id: str, task_id: str, me: ClaimHolder) -> None:
        mine = and_(_item(run_id, task_id), W.owner == me.owner, W.done.is_(False))
        free = dict(owner=None, host=None, pid=None, lease_until=0.0)
        async with self._claiming() as session:
            await self._fetch_once(session, update(WORK_ITEMS).where(mine).values(**free))

    async def work_items(self, run_id: str) -> list[WorkItem]:
        query = (
            select(W.task_id, W.owner, W.host, W.pid, W.lease_until, W.done)
            .where(W.run_id == run_id)
            .order_by(W.task_id)
        )
        async with self._reading() as session:
            rows = await self._fetch_once(session, query)
        return [WorkItem(task, owner, host, pid, lease, bool(done)) for task, owner, host, pid, lease, done in rows]


def _item(run_id: str, task_id: str) -> ColumnElement[bool]:
    return and_(W.run_id == run_id, W.task_id == task_id)

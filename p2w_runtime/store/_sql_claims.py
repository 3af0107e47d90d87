"""Run claims over SQL (``RunCoordination``): one row per claimed key, taken from a stale holder in the same write
transaction, renewed and released only by its owner."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from p2w_runtime.store import _core as core
from p2w_runtime.store._claims import ClaimHolder
from p2w_runtime.store._sql_base import SqlStoreBase, fixed
from p2w_runtime.store._sqlalchemy import sa

if TYPE_CHECKING:
    from sqlalchemy import ClauseElement


@fixed
def _claim_holder() -> ClauseElement:
    c = core.CLAIMS.c
    return sa.select(c.owner, c.host, c.pid, c.claimed_at).where(c.key == sa.bindparam("key"))


@fixed
def _claim_holders() -> ClauseElement:
    """By a prefix compared as it is (``LIKE`` would take ``_`` and ``%`` in a label for wildcards, and SQLite's
    ignores case)."""
    c = core.CLAIMS.c
    under = sa.func.substr(c.key, 1, sa.bindparam("size")) == sa.bindparam("prefix")
    return sa.select(c.owner, c.host, c.pid, c.claimed_at).where(under).order_by(c.key)


@fixed
def _drop_claim() -> ClauseElement:
    return sa.delete(core.CLAIMS).where(core.CLAIMS.c.key == sa.bindparam("key"))


@fixed
def _insert_claim() -> ClauseElement:
    c = core.CLAIMS.c
    columns = (c.key, c.owner, c.host, c.pid, c.claimed_at)
    return sa.insert(core.CLAIMS).values({column: sa.bindparam(column.key) for column in columns})


@fixed
def _renew_claim() -> ClauseElement:
    """``RETURNING`` the key, so that a claim taken over (no row is the owner's) is told from a renewed one."""
    c = core.CLAIMS.c
    mine = sa.and_(c.key == sa.bindparam("key"), c.owner == sa.bindparam("owner"))
    return sa.update(core.CLAIMS).where(mine).values(claimed_at=sa.bindparam("now")).returning(c.key)


@fixed
def _release_claim() -> ClauseElement:
    c = core.CLAIMS.c
    return sa.delete(core.CLAIMS).where(c.key == sa.bindparam("key"), c.owner == sa.bindparam("owner"))


class SqlClaims(SqlStoreBase):
    """``try_claim``, ``renew_claim``, ``release_claim``, ``claim_holder`` and ``claim_holders`` of a SQL store."""

    async def try_claim(self, key: str, me: ClaimHolder) -> ClaimHolder | None:
        holder_of, stale, claim = (self._statement(n) for n in ("claim_holder", "drop_claim", "insert_claim"))
        async with self._writing() as session:
            rows = await session.fetch(holder_of.sql, holder_of.params(key=key))
            if rows:
                holder = ClaimHolder(*rows[0])
                if holder.owner == me.owner:
                    return None
                if not holder.is_stale(time.time()):
                    return holder
                await session.fetch(stale.sql, stale.params(key=key))
            mine = dict(key=key, owner=me.owner, host=me.host, pid=me.pid, claimed_at=me.claimed_at)
            await session.fetch(claim.sql, claim.params(**mine))
        return None

    async def claim_holder(self, key: str) -> ClaimHolder | None:
        holder_of = self._statement("claim_holder")
        async with self._reading() as session:
            rows = await session.fetch(holder_of.sql, holder_of.params(key=key))
        holder = ClaimHolder(*rows[0]) if rows else None
        return None if holder is None or holder.is_stale(time.time()) else holder

    async def claim_holders(self, prefix: str) -> list[ClaimHolder]:
        holders_of = self._statement("claim_holders")
        async with self._reading() as session:
            rows = await session.fetch(holders_of.sql, holders_of.params(prefix=prefix, size=len(prefix)))
        now = time.time()
        return [holder for row in rows if not (holder := ClaimHolder(*row)).is_stale(now)]

    async def renew_claim(self, key: str, me: ClaimHolder) -> bool:
        renew = self._statement("renew_claim")
        async with self._writing() as session:
            return bool(await session.fetch(renew.sql, renew.params(key=key, owner=me.owner, now=time.time())))

    async def release_claim(self, key: str, me: ClaimHolder) -> None:
        release = self._statement("release_claim")
        async with self._writing() as session:
            await session.fetch(release.sql, release.params(key=key, owner=me.owner))

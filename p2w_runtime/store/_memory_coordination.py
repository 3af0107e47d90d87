"""Run coordination in memory (``RunCoordination``): claims and the work queue of ``record --worker``, kept by the
memory store under its one lock; they coordinate the tasks and threads of one process only."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from p2w_runtime.store._claims import ClaimHolder
from p2w_runtime.store._event_store import WorkItem


class MemoryCoordination:
    """A base of ``MemoryEventStore``: its claims and work items."""

    _lock: threading.Lock
    """The store's one lock."""

    def __init__(self) -> None:
        self._claims: dict[str, ClaimHolder] = {}
        self._work: dict[str, dict[str, WorkItem]] = {}
        """Each run's work items by task id."""

    async def try_claim(self, key: str, me: ClaimHolder) -> ClaimHolder | None:
        with self._lock:
            holder = self._claims.get(key)
            if holder is not None:
                if holder.owner == me.owner:
                    return None
                if not holder.is_stale(time.time()):
                    return holder
            self._claims[key] = me
        return None

    async def renew_claim(self, key: str, me: ClaimHolder) -> bool:
        with self._lock:
            holder = self._claims.get(key)
            if holder is None or holder.owner != me.owner:
                return False
            self._claims[key] = replace(holder, claimed_at=time.time())
        return True

    async def release_claim(self, key: str, me: ClaimHolder) -> None:
        with self._lock:
            holder = self._claims.get(key)
            if holder is not None and holder.owner == me.owner:
                del self._claims[key]

    async def claim_holder(self, key: str) -> ClaimHolder | None:
        with self._lock:
            holder = self._claims.get(key)
        return None if holder is None or holder.is_stale(time.time()) else holder

    async def claim_holders(self, prefix: str) -> list[ClaimHolder]:
        with self._lock:
            held = [self._claims[key] for key in sorted(self._claims) if key.startswith(prefix)]
        now = time.time()
        return [holder for holder in held if not holder.is_stale(now)]

    async def seed_work(self, run_id: str, task_ids: Sequence[str]) -> None:
        with self._lock:
            items = self._work.setdefault(run_id, {})
            for task in task_ids:
                items.setdefault(task, WorkItem(task, None, None, None, 0.0, False))

    async def claim_work(self, run_id: str, me: ClaimHolder, lease_s: float) -> str | None:
        now = time.time()
        with self._lock:
            items = self._work.get(run_id, {})
            for task in sorted(items):
                item = items[task]
                if not item.done and (item.owner is None or item.lease_until < now):
                    items[task] = replace(item, owner=me.owner, host=me.host, pid=me.pid, lease_until=now + lease_s)
                    return task
        return None

    async def renew_work(self, run_id: str, task_id: str, me: ClaimHolder, lease_s: float) -> bool:
        until = time.time() + lease_s
        return self._update_mine(run_id, task_id, me, lambda item: replace(item, lease_until=until))

    async def finish_work(self, run_id: str, task_id: str, me: ClaimHolder) -> None:
        self._update_mine(run_id, task_id, me, lambda item: replace(item, done=True))

    async def release_work(self, run_id: str, task_id: str, me: ClaimHolder) -> None:
        def free(item: WorkItem) -> WorkItem:
            return item if item.done else replace(item, owner=None, host=None, pid=None, lease_until=0.0)

        self._update_mine(run_id, task_id, me, free)

    def _update_mine(self, run_id: str, task_id: str, me: ClaimHolder, change: Callable[[WorkItem], WorkItem]) -> bool:
        """Change ``me``'s work item; False (nothing changed) if it is not ``me``'s."""
        with self._lock:
            items = self._work.get(run_id, {})
            item = items.get(task_id)
            if item is None or item.owner != me.owner:
                return False
            items[task_id] = change(item)
        return True

    async def work_items(self, run_id: str) -> list[WorkItem]:
        with self._lock:
            items = self._work.get(run_id, {})
            return [items[task] for task in sorted(items)]

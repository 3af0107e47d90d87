"""The contract for several writers: unique labels and ``RunCoordination``'s claims (docs/design/concurrency.md)."""

from __future__ import annotations

import asyncio
import os
import socket
import time

import pytest

from p2w_rt.schemas import uuid7
from p2w_runtime.store import ClaimHolder, EventStore, LabelTaken
from p2w_runtime.store.contract._base import StoreFixture
from p2w_runtime.store.contract.builders import run_started


def _holder(owner: str, *, pid: int | None = None, host: str | None = None, at: float | None = None) -> ClaimHolder:
    return ClaimHolder(owner, host or socket.gethostname(), pid or os.getpid(), time.time() if at is None else at)


class CoordinationContract(StoreFixture):
    """Labels unique per store; claims taken, refused, released and taken over from dead holders."""

    async def test_a_label_taken_by_one_run_refuses_the_next_run_whole(self, store: EventStore) -> None:
        first, second = uuid7(), uuid7()
        await store.append([run_started(first, "nightly", agent="a", model="m")])
        with pytest.raises(LabelTaken, match=f"label 'nightly' is already used by run {first}"):
            await store.append([run_started(second, "nightly", agent="a", model="m")])
        assert [e.stream async for e in store.read_all(types=["run.started"])] == [first]
        assert await store.stream_head(second) is None  # the refused append wrote nothing

    async def test_a_claim_is_held_until_released_and_only_by_its_owner(self, store: EventStore) -> None:
        a, b = _holder("a"), _holder("b")
        assert await store.try_claim("k", a) is None
        assert await store.try_claim("k", a) is None  # the owner again: still its own
        assert await store.try_claim("k", b) == a  # taken: b is told by whom
        await store.release_claim("k", b)  # not b's to release
        assert await store.try_claim("k", b) == a
        await store.release_claim("k", a)
        assert await store.try_claim("k", b) is None

    async def test_a_claims_holder_is_seen_without_taking_the_claim(self, store: EventStore) -> None:
        a, b = _holder("a"), _holder("b")
        assert await store.claim_holder("k") is None
        assert await store.try_claim("k", a) is None
        assert await store.claim_holder("k") == a
        assert await store.claim_holder("k") == a  # looking took nothing: still a's alone
        await store.release_claim("k", a)
        assert await store.claim_holder("k") is None
        assert await store.try_claim("k", b) is None  # nobody looking kept it
        dead = _holder("dead", pid=2**22 + 1)
        assert await store.try_claim("gone", dead) is None
        assert await store.claim_holder("gone") is None  # a dead holder holds nothing

    async def test_the_live_holders_under_a_prefix_are_seen_in_key_order(self, store: EventStore) -> None:
        a, b, dead = _holder("a"), _holder("b"), _holder("dead", pid=2**22 + 1)
        assert await store.claim_holders("join/x_1/") == []
        for key, holder in (("join/x_1/b", b), ("join/x_1/a", a), ("join/x_1/z", dead), ("join/X_1/c", a)):
            assert await store.try_claim(key, holder) is None
        for key in ("join/xy1/d", "join/x_10/e", "join/x_1", "record/x_1"):  # a wildcard, a longer label, no slash
            assert await store.try_claim(key, _holder(key)) is None
        assert await store.claim_holders("join/x_1/") == [a, b]  # not the dead one, another case, nor a look-alike
        assert await store.claim_holder("join/x_1/a") == a  # looking took nothing
        await store.release_claim("join/x_1/a", a)
        assert await store.claim_holders("join/x_1/") == [b]

    async def test_a_claim_of_a_dead_or_expired_holder_is_taken_over(self, store: EventStore) -> None:
        gone = _holder("gone", pid=2**22 + 1)  # above the kernel's pid_max: no such process
        far = _holder("far", host="elsewhere.invalid", at=time.time() - 7 * 3600)
        near = _holder("near", host="elsewhere.invalid")
        for key, holder in (("dead", gone), ("old", far), ("live", near)):
            assert await store.try_claim(key, holder) is None
        me = _holder("me")
        assert await store.try_claim("dead", me) is None
        assert await store.try_claim("old", me) is None
        assert await store.try_claim("live", me) == near  # another host's fresh claim is waited for

    async def test_a_claim_of_another_host_is_kept_by_its_renewals_and_taken_over_when_they_stop(
        self, store: EventStore
    ) -> None:
        long_ago = time.time() - 7 * 3600  # held for hours
        kept = _holder("kept", host="elsewhere.invalid", at=long_ago)
        dropped = _holder("dropped", host="elsewhere.invalid", at=time.time() - 11 * 60)  # unrenewed for 11 minutes
        me = _holder("me")
        for key, holder in (("kept", kept), ("dropped", dropped)):
            assert await store.try_claim(key, holder) is None
        assert await store.renew_claim("kept", kept)
        assert await store.renew_claim("kept", me) is False  # only its owner renews it
        taken = await store.try_claim("kept", me)
        assert taken is not None and taken.owner == "kept" and taken.claimed_at > long_ago
        assert await store.try_claim("dropped", me) is None  # stale after ten missed renewals
        assert await store.renew_claim("dropped", dropped) is False  # its holder learns it was taken over
        await store.release_claim("kept", kept)
        assert await store.renew_claim("kept", kept) is False  # released: nothing to renew

    async def test_work_items_are_leased_to_one_worker_and_taken_over_when_the_lease_runs_out(
        self, store: EventStore
    ) -> None:
        await store.seed_work("run", ["t1", "t2"])
        await store.seed_work("run", ["t2", "t1"])  # every worker seeds: nothing doubles
        a, b, c = _holder("a"), _holder("b"), _holder("c")
        assert await store.claim_work("run", a, 60) == "t1"
        assert await store.claim_work("run", b, 0.2) == "t2"
        assert await store.claim_work("run", c, 60) is None  # both leased
        assert await store.renew_work("run", "t2", b, 0.2)
        await asyncio.sleep(0.3)  # b stops renewing (killed): its lease runs out
        assert await store.claim_work("run", c, 60) == "t2"
        assert not await store.renew_work("run", "t2", b, 60)  # b has lost it
        await store.finish_work("run", "t2", b)  # not b's to finish
        assert [(i.task_id, i.owner, i.done) for i in await store.work_items("run")] == [
            ("t1", "a", False),
            ("t2", "c", False),
        ]
        await store.finish_work("run", "t1", a)
        await store.finish_work("run", "t2", c)
        assert all(i.done for i in await store.work_items("run"))
        assert await store.claim_work("run", b, 60) is None
        assert await store.work_items("other") == []

    async def test_a_released_task_is_free_at_once_and_only_its_holder_releases_it(self, store: EventStore) -> None:
        a, b = _holder("a"), _holder("b")
        await store.seed_work("run", ["t1"])
        assert await store.claim_work("run", a, 3600) == "t1"
        await store.release_work("run", "t1", b)  # not b's to give back
        assert await store.claim_work("run", b, 3600) is None
        await store.release_work("run", "t1", a)
        assert [(i.owner, i.lease_until, i.done) for i in await store.work_items("run")] == [(None, 0.0, False)]
        assert await store.claim_work("run", b, 3600) == "t1"  # long before a's lease would have run out
        await store.finish_work("run", "t1", b)
        await store.release_work("run", "t1", b)  # a done task stays done
        assert [(i.owner, i.done) for i in await store.work_items("run")] == [(b.owner, True)]

    async def test_concurrent_claims_never_hand_one_task_to_two_workers(self, store: EventStore) -> None:
        tasks = [f"t{i:02d}" for i in range(12)]
        await store.seed_work("run", tasks)
        workers = [_holder(f"w{i}") for i in range(4)]

        async def drain(me: ClaimHolder) -> list[str]:
            got = []
            while (task := await store.claim_work("run", me, 60)) is not None:
                got.append(task)
            return got

        taken = await asyncio.gather(*(drain(w) for w in workers))
        assert sorted(t for got in taken for t in got) == tasks

"""One process records a run at a time: its first recording from before ``run.started`` until it is closed, or a
resume (``record``, ``record --exec`` and the recording API alike; docs/design/concurrency.md). A second would close
the first one's open attempts as dead and collide with its next ones, so it is refused in one line before it writes
anything. Workers share a run by design (leases on its tasks, and a presence claim each, ``joining``), and may not
join a run one process records alone (``check_not_recorded_alone``)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from p2w_runtime.domain._runs import RunInfo
from p2w_runtime.errors import UserError
from p2w_runtime.store import ClaimHolder, EventStore, WorkItem, renewing_claims, this_process


@asynccontextmanager
async def holding_run(
    store: EventStore, label: str, *, then: str = "resume it once that one has ended, for what it leaves to do"
) -> AsyncIterator[None]:
    """Hold the claim ``record/LABEL`` while run ``label`` is recorded by one process: its first recording, from
    before its ``run.started`` until it is closed, or a resume. A resume meanwhile would close the recorder's open
    attempts as dead and collide with its next ones (and close the run ``interrupted`` under its feet), so it is
    refused in one line before it writes anything. Keyed by label, which is unique, so the claim is taken before the
    run exists, and renewed while it is held, so that a recording of hours on another host is not taken for dead.
    A holder killed -9 leaves a claim the next one takes over (its process is gone, or its renewals stopped).

    A holder that finds its claim taken over (its renewals failed for ``STALE_AFTER_S``: the database out of reach,
    the process frozen) is warned and not stopped: the recording API's claim outlives the call that took it, and a
    stopped ``record`` would close the run as interrupted beside its new holder, which has closed this one's open
    attempts already, so their next writes are refused (``StreamEnded``). ``then``: how to go on, in the refusal."""
    me, key = this_process(), _claim_key(label)
    if (holder := await store.try_claim(key, me)) is not None:
        raise UserError(f"run {label!r} is being recorded by another process ({holder.describe()}); {then}")
    try:
        async with renewing_claims(store, [key], me):
            yield
    finally:
        await asyncio.shield(store.release_claim(key, me))


@asynccontextmanager
async def resuming(store: EventStore, run: RunInfo) -> AsyncIterator[None]:
    """``holding_run`` for a resume of ``run``, which is refused too while workers share it: leases on its tasks
    (``record --worker``) or presence claims (``joining``), neither of them ``record/LABEL``. A killed worker's
    lease runs out; a killed joiner's claim is stale."""
    async with holding_run(store, run.label):
        now = time.time()
        leased = [f"process {i.pid} on {i.host}" for i in await store.work_items(run.run_id) if _leased(i, now)]
        live = sorted({*leased, *(holder.describe() for holder in await live_joiners(store, run.label))})
        if live:
            raise UserError(
                f"run {run.label!r} is being recorded by workers ({', '.join(live)}); "
                "resume it once they have ended, or join them (record --worker, open_run(join=True))"
            )
        yield


@asynccontextmanager
async def joining(store: EventStore, label: str) -> AsyncIterator[None]:
    """Hold ``join/LABEL/OWNER`` while this recorder shares run ``label`` (``open_run(join=True)``, a worker of
    ``record --worker`` from before its check until it ends, leases or none): a claim of its own, so joiners never
    refuse each other, that tells a resume (``resuming``) and the joiners closing the run (``live_joiners``) that it
    still records. Taken before the joiner looks for a lone recorder, as that one takes ``record/LABEL`` before it
    looks for joiners, so of two starting together at least one sees the other; and before it looks whether the
    run is finished (``RunRecording.check_open``), under the claim the last joiner holds while it looks for joiners
    and finishes the run. Renewed while held, as ``holding_run``'s. A joiner killed -9 leaves a stale claim, which
    counts no longer (its process is gone, or its renewals stopped)."""
    me = this_process()
    key = f"{_join_prefix(label)}{me.owner}"
    await store.try_claim(key, me)  # its own key: nobody else holds it
    try:
        async with renewing_claims(store, [key], me):
            yield
    finally:
        await asyncio.shield(store.release_claim(key, me))


async def live_joiners(store: EventStore, label: str) -> list[ClaimHolder]:
    """The live recorders sharing run ``label`` through ``joining``."""
    return await store.claim_holders(_join_prefix(label))


async def check_not_recorded_alone(store: EventStore, label: str) -> None:
    """Refuse to join run ``label`` (a worker, ``open_run(join=True)``) while one process records it alone: the
    joiner would take that recorder's open attempts for a dead worker's and record their tasks again beside it. One
    line naming the run and the process; nothing written. The claim is only looked at: workers starting together
    would otherwise find each other holding it for the instant of their check."""
    if (holder := await store.claim_holder(_claim_key(label))) is not None:
        raise UserError(
            f"run {label!r} is being recorded by one process alone ({holder.describe()}), not by workers; "
            "resume it once that one has ended, for what it leaves to do"
        )


def _claim_key(label: str) -> str:
    return f"record/{label}"


def _join_prefix(label: str) -> str:
    """``/`` in the label escaped (and ``%``, which escapes it): else the joiners of run ``a/b`` would be found under
    run ``a``'s prefix, keeping it open and refusing its resume."""
    return f"join/{label.replace('%', '%25').replace('/', '%2F')}/"


def _leased(item: WorkItem, now: float) -> bool:
    return not item.done and item.owner is not None and item.lease_until > now

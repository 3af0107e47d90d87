"""`record --label L --worker`: several processes, on one machine or many, record one run together.

Each worker joins the run labelled L (the first one creates it; the label's primary key decides who), present in
it (``joining``) until it ends so that a lone resume is refused meanwhile, makes every selected task a work item, and
loops: lease a free task, record it, mark it done. The loop knows no agent:
it is given "record this attempt at this task" (``RecordTask``): the own agent's ``Episode`` under ``record``, an
outside agent's process under ``record --exec CMD --worker``. A lease is renewed
every third of ``LEASE_S`` while the episode runs; a worker killed mid-episode stops renewing, the lease runs
out, and the next worker closes the half episode as ``aborted`` ("abandoned", so ``counted()`` never counts
it) and records the task again as ``TASK#n``. The worker that finds every item done finishes the run, once.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TypeVar

import structlog

from p2w_runtime.agent._episode import EpisodeOutcome
from p2w_runtime.agent._run import NewRun, ProgressCallback, RunProgress, plan_run
from p2w_runtime.domain import (
    RunInfo,
    RunRecording,
    TaskLike,
    UnknownRun,
    check_not_recorded_alone,
    find_run,
    joining,
)
from p2w_runtime.errors import UserError
from p2w_runtime.store import ClaimHolder, EventStore, LabelTaken, StoreError, StreamEnded, this_process

log = structlog.get_logger(__name__)

LEASE_S = float(os.environ.get("P2W_WORKER_LEASE_S", "60"))
"""How long a task stays a worker's without a renewal. Env ``P2W_WORKER_LEASE_S`` (tests shorten it)."""
POLL_S = min(1.0, LEASE_S / 3)
ABANDONED_DETAIL = "abandoned: its worker stopped renewing the lease (killed or cut off)"

T = TypeVar("T", bound=TaskLike)
RecordTask = Callable[[T, int], Awaitable[EpisodeOutcome]]
"""Record attempt number n at a task (stream ``TASK#n``; n decided by the worker, from the attempts stored) and say
how it ended; cancelled when the lease is lost or the worker stopped, the attempt then ends as aborted."""


@asynccontextmanager
async def joined_run(store: EventStore, new: NewRun) -> AsyncIterator[str]:
    """``join_run`` with this worker's presence in the run (``joining``) held while the block runs: taken before the
    worker looks for a lone recorder and held until it ends, so that a ``record --resume`` starting while it holds
    no lease (before its first, or waiting for the others' tasks) is refused (``resuming``), and of the two starting
    together at least one sees the other."""
    async with joining(store, new.label):
        yield await join_run(store, new)


async def join_run(store: EventStore, new: NewRun) -> str:
    """The run labelled ``new.label``: found, or started by this worker if no other got there first.

    Every worker then seeds the work items (``work``), so a run whose creator died before it seeded them is
    completed by whoever joins next; a worker that selected other tasks than the run was started with is refused.
    """
    try:
        found = await find_run(store, new.label)
    except UnknownRun:
        try:
            return (await plan_run(store, new, resume=None)).run_id
        except LabelTaken:  # another worker started it between our look and our append
            found = await find_run(store, new.label)
    await check_joinable(store, found, [t.task_id for t in new.tasks])
    return found.run_id


async def check_joinable(store: EventStore, found: RunInfo, mine: Sequence[str]) -> None:
    """``UserError`` unless a worker that selected the tasks ``mine`` can record in run ``found``: not being recorded
    by one process alone, unfinished or finished by workers (then there is nothing left to do), and started with the
    same tasks."""
    label = found.label
    await check_not_recorded_alone(store, label)
    if found.status != "unfinished" and not await store.work_items(found.run_id):
        raise UserError(f"run {label} ({found.run_id}) is {found.status} and was not recorded by workers")
    recorded = found.started.config.tasks
    if recorded is not None and sorted(recorded) != sorted(mine):
        raise UserError(
            f"run {label} ({found.run_id}) records {len(recorded)} tasks ({_few(recorded)}); this worker selected "
            f"{len(mine)} ({_few(mine)}): give the same --tasks, --level, --task and --limit as the other workers"
        )


def _few(ids: Sequence[str]) -> str:
    shown = sorted(ids)[:3]
    return ", ".join(shown) + (", ..." if len(ids) > len(shown) else "")


async def work(
    store: EventStore,
    run_id: str,
    tasks: Sequence[T],
    record: RecordTask[T],
    *,
    concurrency: int,
    progress: ProgressCallback | None = None,
) -> list[EpisodeOutcome]:
    """Record leased tasks of ``run_id`` with ``record`` until every item is done (``concurrency`` at a time), then
    finish the run unless another worker did; this worker's outcomes."""
    by_id = {t.task_id: t for t in tasks}
    await store.seed_work(run_id, list(by_id))
    me = this_process()
    state = RunProgress(total=len(by_id))
    started, told = time.monotonic(), set[str]()

    async def lane() -> None:
        while True:
            task_id = await store.claim_work(run_id, me, LEASE_S)
            if task_id is None:
                items = await store.work_items(run_id)
                state.done = sum(i.done for i in items)
                _notify(progress, state)
                if all(i.done for i in items):
                    return
                if "waiting" not in told:
                    told.add("waiting")
                    leased = sorted({f"{i.host}:{i.pid}" for i in items if not i.done and i.owner is not None})
                    log.info("waiting for tasks leased by other workers", run_id=run_id, holders=leased)
                await asyncio.sleep(POLL_S)  # the rest is leased: wait for it to finish or to be abandoned
                continue
            if "claimed" not in told:
                told.add("claimed")
                log.info("first claim", task=task_id, after_s=round(time.monotonic() - started, 3))
            state.running += 1
            _notify(progress, state)
            try:
                outcome = await _record_leased(store, run_id, by_id[task_id], me, record)
            except asyncio.CancelledError:  # stopped (Ctrl-C): the episode closed itself as aborted; free the task now
                await asyncio.shield(store.release_work(run_id, task_id, me))
                log.info("released the lease of an interrupted episode", task=task_id)
                raise
            finally:
                state.running -= 1
            if outcome is not None:
                state.tokens += outcome.tokens
                state.outcomes.append(outcome)
            await store.finish_work(run_id, task_id, me)

    await asyncio.gather(*(lane() for _ in range(max(1, concurrency))))
    await finish_run(store, run_id)
    return state.outcomes


async def _record_leased(
    store: EventStore, run_id: str, task: T, me: ClaimHolder, record: RecordTask[T]
) -> EpisodeOutcome | None:
    """Record ``task`` while renewing its lease; None if it is not this worker's to record (an earlier holder
    recorded it already, or another worker took the lease over)."""
    taken = await RunRecording(store, run_id).take_over(task.task_id, ABANDONED_DETAIL)
    if taken is None:  # recorded, but its worker died before marking it done
        return None
    for stream in taken.closed:
        log.info("took over an abandoned episode", task=task.task_id, stream=stream)
    recording = asyncio.ensure_future(record(task, taken.attempt))
    lost = asyncio.Event()

    async def keep_lease() -> None:
        while not recording.done():
            await asyncio.sleep(LEASE_S / 3)
            try:
                held = await store.renew_work(run_id, task.task_id, me, LEASE_S)
            except StoreError as exc:  # the episode's own next write meets it too, and says so; try again meanwhile
                log.info("lease not renewed", task=task.task_id, error=str(exc))
                continue
            if not held:
                log.warning("lost the lease; stopping the episode", task=task.task_id)
                lost.set()
                recording.cancel()
                return

    renewing = asyncio.ensure_future(keep_lease())
    try:
        return await recording
    except StreamEnded:  # another worker took the task over and closed this attempt before this one noticed
        log.warning("lost the lease; another worker closed this attempt", task=task.task_id)
        return None
    except asyncio.CancelledError:
        this = asyncio.current_task()
        if lost.is_set() and this is not None and not this.cancelling():  # the task is another worker's now
            return None
        raise
    finally:
        renewing.cancel()


async def finish_run(store: EventStore, run_id: str) -> None:
    """Append ``run.finished`` with its seals, once whichever worker gets here first (a claim decides)."""
    await RunRecording(store, run_id).close_once()


def _notify(progress: ProgressCallback | None, state: RunProgress) -> None:
    if progress is not None:
        progress(state)

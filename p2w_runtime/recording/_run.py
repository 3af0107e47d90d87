"""``open_run``: a run of any agent, new or resumed by its label, and the episodes still to record in it.

A recorder that was killed leaves attempts without ``episode.finished``; they never count (``counted``). The next
``open_run`` with the same label refuses until ``resume=True`` is passed, and then closes them as ``aborted`` and
records their tasks again as ``TASK#n``, as ``record --resume`` does for the own agent. One process records a run at
a time, as under ``record``: ``open_run`` holds the claim ``record/LABEL`` (``holding_run``) from before the run starts
or resumes until ``close``, so a resume meanwhile (a script's or ``record --resume``) is refused instead of closing
the live attempts as dead (under ``fork --exec`` p2w-rt holds it for the agent). Recorders that ``join`` a run
share it by design: each holds a presence claim of its own (``joining``) until its ``close``, which refuses a resume
the same way and lets only the last of them finish the run; one arriving as the last one finishes it is either seen by
it or finds the run finished (``RunRecording.check_open``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from p2w_rt.schemas import ForkPoint, RunFinished, Scheme
from p2w_runtime.data import TaskSet
from p2w_runtime.domain import (
    CarriedDataset,
    RunInfo,
    RunRecording,
    RunSpec,
    TaskLike,
    carry_dataset,
    check_not_recorded_alone,
    check_task_ids,
    holding_run,
    joining,
    list_runs,
    live_joiners,
    resume_run,
    resuming,
    start_run,
)
from p2w_runtime.errors import UserError
from p2w_runtime.recording._episode import EpisodeRecorder
from p2w_runtime.recording._replay import ReplayLink, forked, replay_url, replayed_task
from p2w_runtime.recording._same_tasks import check_same, provenance_of
from p2w_runtime.store import EventStore, LabelTaken, MemoryEventStore


class Recording:
    """One open run; ``episode(task)`` records an attempt at a task, ``close()`` writes ``run.finished``.

    ``async with`` closes the run on exit, as ``interrupted`` when the block raised (so it can be resumed).
    """

    def __init__(
        self,
        run: RunRecording,
        label: str,
        scheme: Scheme | None,
        tasks: Sequence[TaskLike],
        replay: ReplayLink | None = None,
        fork: ForkPoint | None = None,
        claim: AsyncExitStack | None = None,
        joined: bool = False,
    ) -> None:
        self.run = run
        self._claim = claim
        """Holds ``record/LABEL`` until ``close``, or this joiner's presence (``joining``)."""
        self._joined = joined
        self.store = run.store
        self.replay = replay
        """Set when p2w-rt re-executes the agent (``P2W_REPLAY``): the store is then one in memory."""
        self.fork = fork
        """Set under ``p2w-rt fork --exec``: where each episode branched off its source."""
        self.run_id = run.run_id
        self.label = label
        self.scheme = scheme
        self.tasks = {task.task_id: task for task in tasks}
        self.finished: RunFinished | None = None
        self._closing, self._closed = asyncio.Lock(), False

    def todo(self) -> list[TaskLike]:
        """The run's tasks that have no counted episode yet, in task order (all of them in a new run)."""
        return self.run.todo(self.tasks.values())

    def episode(self, task: TaskLike | str, *, attempt: int | None = None) -> EpisodeRecorder:
        """A recorder for the next attempt at ``task`` (a task of the run, or its id); use it with ``async with``.
        ``attempt`` numbers it when another decides which attempt it is (a worker, from the attempts stored by all)."""
        if self._closed:  # its claim is given back: another process may be recording the run now
            raise UserError(f"run {self.label!r} is closed: open it with resume=True to record more of it")
        found = self.tasks.get(task if isinstance(task, str) else task.task_id)
        if found is None:
            name = task if isinstance(task, str) else task.task_id
            raise UserError(f"run {self.label!r}: task {name!r} is not one of its {len(self.tasks)} tasks")
        episode_id = self.run.episode_id(found.task_id, attempt)
        return EpisodeRecorder(
            self.store, self.run_id, episode_id, found, scheme=self.scheme, on_end=self.run.ended, replay=self.replay,
            fork=self.fork,
        )  # fmt: skip

    async def close(self, *, interrupted: bool = False) -> RunFinished:
        """Write ``run.finished`` (derived from the log, like every writer of runs) and give the run's claim back.
        A recorder that joined the run gives its presence back and writes it only if it was the last one recording;
        else it returns what the log says so far, not written, and the run stays open for the others.

        Once: a second close (a script's own ``close()`` inside ``async with``) writes nothing and returns the
        first's result, as the claim that let the first write is given back; a resume (``open_run``) may close the
        run again. Closes at once wait for the first."""
        async with self._closing:
            if self._closed:
                if self.finished is None:
                    raise UserError(
                        f"run {self.label!r}: its close did not end and the run is no longer held; "
                        "open it with resume=True to close it"
                    )
                return self.finished
            self._closed = True
            try:
                if self._joined:
                    self.finished = await self.run.close_last(self._leave, interrupted=interrupted)
                else:
                    self.finished = await self.run.close(interrupted=interrupted)
            finally:
                await self._release()
            return self.finished

    async def _leave(self) -> bool:
        """Give this joiner's presence back; whether other joiners still record the run."""
        await self._release()
        return bool(await live_joiners(self.store, self.label))

    async def _release(self) -> None:
        if self._claim is not None:
            await self._claim.aclose()

    @asynccontextmanager
    async def leaving(self) -> AsyncIterator[None]:
        """Give this joiner's presence back at the end of the block, closing nothing: for a worker of ``record --exec
        CMD --worker``, whose run the last worker finishes (``work``)."""
        try:
            yield
        finally:
            await self._release()

    async def __aenter__(self) -> Recording:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if not self._closed:  # closed by the script already: that close stands, and its error if it failed
            await self.close(interrupted=kind is not None)


async def open_run(
    store: EventStore,
    *,
    label: str,
    agent: str,
    model: str,
    tasks: TaskSet | Sequence[TaskLike],
    only: Iterable[str] | None = None,
    history: Path | None = None,
    scheme: Scheme | None = None,
    dataset_id: str | None = None,
    config: dict[str, Any] | None = None,
    resume: bool = False,
    join: bool = False,
    carried: CarriedDataset | bool = True,
) -> Recording:
    """Start run ``label`` of ``agent`` on ``tasks`` (a Persona2Web ``TaskSet``, or any tasks with their ids; ``only``
    the ones with these ids), or with ``resume=True`` continue the run that holds the label; ``UserError`` when the
    label is taken and ``resume`` was not asked, or when the run was recorded by another agent, model, scheme or task
    set; ``BadTaskId`` when a task's id cannot name an episode (``check_task_id``). ``join=True`` opens a run that
    several recorders share (``record --exec CMD --worker``): started by whichever comes first, the others get it as it
    is, nothing of it closed (their episodes are still being recorded); a run one process records alone (not joined) is
    refused in one line naming it. Each joiner holds the claim ``join/LABEL/OWNER`` until its ``close``: a resume
    meanwhile is refused in one line naming the live joiners, and only the last joiner's ``close`` writes
    ``run.finished`` (a joiner killed -9 counts no longer; if it was the last, the run stays unfinished until resumed).
    A finished run is refused in one line (resume it instead), also when the last joiner finishes it while this one
    joins (``RunRecording.check_open``).

    A new run carries its dataset beside its start, as the own agent's runs do, so ``replay``, ``classify`` and
    ``rerun`` need no folders on any machine: the task files of a ``TaskSet`` (with each one's answer key) and the
    memory banks in ``history`` of the tasks' personas. ``carried=False`` carries nothing; a ``CarriedDataset``
    (``carry_dataset``) is stored as given. Under ``p2w-rt rerun --exec`` (``P2W_REPLAY`` set) ``store`` is left
    alone and nothing is carried, unless the episode is forked (``P2W_FORK``): see ``_replay.py``."""
    listed = _chosen(tasks, only, label)
    replay, fork = None, forked()
    if (url := replay_url()) is not None:  # re-executed by p2w-rt: one task is to do, written nowhere unless forked
        resume, join, replay = False, False, ReplayLink(url)
        if fork is None:
            store, carried = MemoryEventStore(), False
        else:  # a fork: a new run in the agent's store (or the one the same fork left), p2w-rt's label, live model
            label, model, resume = fork.label, fork.model, fork.resume
            config = {**(config or {}), "fork_of": fork.point.source_stream, "fork_at_step": fork.point.at_step}
        task_id = replayed_task()
        listed = [task for task in listed if task.task_id == task_id]
        if not listed:
            raise UserError(f"run {label!r}: the re-executed task {task_id!r} is not one of the agent's tasks")
    point = fork.point if fork is not None and replay is not None else None
    ids = [task.task_id for task in listed]
    if replay is None or fork is not None:  # an episode re-executed into memory keeps the id it was recorded under
        check_task_ids(ids, f"run {label!r}")
    provenance = provenance_of(tasks, listed, dataset_id)
    existing = await _labelled(store, label)
    if existing is not None and not (resume or join):
        kept = existing.started.config.tasks
        raise UserError(
            f"run {label!r} already exists ({existing.status}, {existing.episodes} of "
            f"{len(ids if kept is None else kept)} tasks counted): open it with resume=True to record "
            "the tasks still to do, or choose another label"
        )
    claim = AsyncExitStack()
    if join:  # present before looking for a lone recorder, which looks for joiners once it holds the run
        await claim.enter_async_context(joining(store, label))
    elif point is None:  # one process records the run: refused in one line naming it, before anything is written
        await claim.enter_async_context(resuming(store, existing) if existing else holding_run(store, label))
    # else a fork's: p2w-rt holds it for its agent, from before its look at the label until the agent has ended
    try:
        if existing is None:
            spec = RunSpec(
                label=label,
                agent=agent,
                model=model,
                scheme=scheme,
                provenance=provenance,
                config={**(config or {}), "tasks": ids, "recorder": "p2w_runtime.recording"},
                carried=_carried(carried, tasks, listed, history),
            )
            try:
                started = await start_run(store, spec)
                return Recording(started, label, scheme, listed, replay, point, claim, joined=join)
            except LabelTaken:  # another worker started it between our look and our append
                if not join:
                    raise
                existing = await _labelled(store, label)
                assert existing is not None
        if join:  # as a worker of `record` does: a run one process records alone is not shared
            await check_not_recorded_alone(store, label)
        await check_same(
            store, existing, agent=agent, model=model, scheme=scheme, tasks=tasks, listed=listed,
            dataset_id=provenance.dataset_id,
        )  # fmt: skip
        run = await resume_run(store, existing.run_id, abort=not join)
        if join:  # present already: the last recorder closing now sees this one, or has finished the run
            await run.check_open(label)
        return Recording(run, label, scheme, listed, replay, point, claim, joined=join)
    except BaseException:
        await claim.aclose()
        raise


async def _labelled(store: EventStore, label: str) -> RunInfo | None:
    return next((run for run in await list_runs(store) if run.label == label), None)


def _chosen(tasks: TaskSet | Sequence[TaskLike], only: Iterable[str] | None, label: str) -> list[TaskLike]:
    """The tasks to record: all of ``tasks``, or those named by ``only`` (in its order); a name not among them is a
    ``UserError``."""
    listed: list[TaskLike] = list(tasks)
    if only is not None:
        by_id = {task.task_id: task for task in listed}
        unknown = [name for name in only if name not in by_id]
        if unknown:
            raise UserError(f"run {label!r}: no task {unknown[0]!r} among the {len(listed)} tasks given")
        listed = [by_id[name] for name in only]
    if not listed:
        raise UserError(f"run {label!r}: no tasks to record")
    return listed


def _carried(
    carried: CarriedDataset | bool, tasks: TaskSet | Sequence[TaskLike], listed: list[TaskLike], history: Path | None
) -> CarriedDataset:
    if isinstance(carried, CarriedDataset):
        return carried
    if not carried:
        return CarriedDataset(None, {})
    found = carry_dataset(tasks if isinstance(tasks, TaskSet) else None, listed, history)
    return found if found.files is not None and (found.files.tasks or found.files.banks) else CarriedDataset(None, {})

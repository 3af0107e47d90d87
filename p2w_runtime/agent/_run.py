"""A recording run: one browser, one context per episode, episodes concurrent up to a limit, resumable."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from p2w_rt.schemas import EmbedderRef
from p2w_runtime.agent._config import AgentConfig
from p2w_runtime.agent._episode import Episode, EpisodeOutcome
from p2w_runtime.browser import BrowserSession
from p2w_runtime.data import Task, TaskSet
from p2w_runtime.domain import (
    NOT_AN_OUTCOME,
    CarriedDataset,
    EpisodeRef,
    Provenance,
    RunInfo,
    RunRecording,
    RunSpec,
    resume_run,
    start_run,
)
from p2w_runtime.llm import LlmClient
from p2w_runtime.retrieval import HistoryRetriever
from p2w_runtime.store import EventStore

log = structlog.get_logger(__name__)

AGENT_NAME = "p2w-rt"


@dataclass
class RunProgress:
    """What the progress bar shows; updated as episodes start and end."""

    total: int
    done: int = 0
    failed: int = 0
    running: int = 0
    tokens: int = 0
    outcomes: list[EpisodeOutcome] = field(default_factory=list)

    async def track(
        self, gate: asyncio.Semaphore, progress: ProgressCallback | None, work: Callable[[], Awaitable[EpisodeOutcome]]
    ) -> EpisodeOutcome:
        """Run one episode's ``work`` once ``gate`` lets it, counted as running, then as done (failed when it ended
        in error or blocked), telling ``progress`` at each change; every recorder's episodes go through it."""
        async with gate:
            self.running += 1
            _notify(progress, self)
            try:
                outcome = await work()
            finally:
                self.running -= 1
            self.done += 1
            self.failed += outcome.end_reason in {"error", "blocked"}
            self.tokens += outcome.tokens
            self.outcomes.append(outcome)
            _notify(progress, self)
            return outcome


ProgressCallback = Callable[["RunProgress"], None]


@dataclass(frozen=True)
class RunPlan:
    run: RunRecording
    todo: list[tuple[Task, str]]
    """(task, episode id) still to record."""
    kept: list[EpisodeRef]
    """Episodes that already count from an earlier attempt of this run (``counted``)."""

    @property
    def run_id(self) -> str:
        return self.run.run_id


@dataclass(frozen=True)
class NewRun:
    """What ``record`` starts a run with: alone (``plan_run``) or as the first of its workers (``join_run``)."""

    tasks: Sequence[Task]
    dataset: TaskSet
    label: str
    model: str
    config: AgentConfig
    run_config: dict[str, Any]
    carried: CarriedDataset | None = None
    """The files its ``run.started`` names (stored beside it)."""
    embedder: EmbedderRef | None = None

    def spec(self) -> RunSpec:
        here = Provenance.here(self.dataset.dataset_id, self.dataset.content_hash)
        settings = {**self.config.as_dict(), **self.run_config}
        return RunSpec(
            self.label, AGENT_NAME, self.model, self.config.scheme, here, settings,
            carried=self.carried, embedder=self.embedder,
        )  # fmt: skip


async def plan_run(store: EventStore, new: NewRun, resume: RunInfo | None) -> RunPlan:
    """Start ``new``, or pick up ``resume``: tasks whose episode counts stay, unfinished attempts are closed as
    aborted, and every other task of ``new.tasks`` is recorded again as ``TASK#n``."""
    run = await start_run(store, new.spec()) if resume is None else await resume_run(store, resume.run_id)
    todo = [(t, run.episode_id(t.task_id)) for t in run.todo(new.tasks)]
    kept = [run.counted[t.task_id] for t in new.tasks if t.task_id in run.counted]
    if resume is not None:
        log.info("resuming run", run_id=run.run_id, kept=len(kept), aborted=run.aborted, todo=len(todo))
    return RunPlan(run, todo, kept)


async def record_episodes(
    store: EventStore,
    plan: RunPlan,
    *,
    browser: BrowserSession,
    llm: LlmClient,
    retriever: HistoryRetriever | None,
    config: AgentConfig,
    concurrency: int,
    progress: ProgressCallback | None = None,
) -> list[EpisodeOutcome]:
    """Record every planned episode, ``concurrency`` at a time; closes the run when all are done.

    Cancellation (Ctrl-C), or an episode that cannot go on (Chromium will not start again), lets running episodes
    record themselves as aborted, then marks the run interrupted, so ``--resume`` can pick it up: never completed
    with tasks left unrecorded.
    """
    state = RunProgress(total=len(plan.todo) + len(plan.kept), done=len(plan.kept))
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(task: Task, episode_id: str) -> EpisodeOutcome:
        def episode() -> Episode:  # made once the gate lets it in, as before
            return Episode(
                task,
                run_id=plan.run_id,
                episode_id=episode_id,
                store=store,
                browser=browser,
                llm=llm,
                retriever=retriever,
                config=config,
            )

        return await state.track(gate, progress, lambda: episode().run())

    episodes = [asyncio.ensure_future(one(task, episode_id)) for task, episode_id in plan.todo]
    interrupted = False
    try:
        await asyncio.gather(*episodes)
    except asyncio.CancelledError:
        interrupted = True
        raise
    except Exception:
        interrupted = True
        for running in episodes:
            running.cancel()
        await asyncio.gather(*episodes, return_exceptions=True)
        raise
    finally:
        for outcome in state.outcomes:
            plan.run.ended(outcome.task_id, outcome.end_reason not in NOT_AN_OUTCOME)
        await plan.run.close(interrupted=interrupted)
    return state.outcomes


def _notify(progress: ProgressCallback | None, state: RunProgress) -> None:
    if progress is not None:
        progress(state)

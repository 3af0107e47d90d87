"""A recording run: one browser, one context per episode, episodes concurrent up to a limit, resumable."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import structlog

from p2w_runtime.agent._config import AgentConfig
from p2w_runtime.agent._episode import Episode, EpisodeOutcome
from p2w_runtime.browser import BrowserSession
from p2w_runtime.data import Task, TaskSet
from p2w_runtime.llm import LlmClient
from p2w_runtime.provenance import code_version, git_sha, host, package_versions
from p2w_runtime.retrieval import HistoryRetriever
from p2w_runtime.store import Recorder, RunInfo, seal_streams
from schemas import EpisodeFinished, EpisodeStarted, NewEvent, RunFinished, RunStarted, uuid7

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


ProgressCallback = Callable[[RunProgress], None]


@dataclass(frozen=True)
class RunPlan:
    run_id: str
    todo: list[tuple[Task, str]]
    """(task, episode id) still to record."""
    kept: int
    """Episodes already finished in an earlier attempt of this run."""


async def plan_run(
    store: Recorder,
    tasks: Sequence[Task],
    dataset: TaskSet,
    *,
    label: str,
    model: str,
    config: AgentConfig,
    run_config: dict,
    resume: RunInfo | None,
) -> RunPlan:
    """Start a new run, or pick up ``resume``: finished episodes stay, unfinished ones are closed as aborted."""
    if resume is None:
        run_id = uuid7()
        await store.append(
            [
                NewEvent(
                    stream=run_id,
                    payload=RunStarted(
                        run_id=run_id,
                        label=label,
                        agent=AGENT_NAME,
                        backbone_model=model,
                        scheme=config.scheme,
                        dataset_id=dataset.dataset_id,
                        dataset_hash=dataset.content_hash,
                        code_version=code_version(),
                        git_sha=git_sha(),
                        packages=package_versions(),
                        config={**config.as_dict(), **run_config},
                        host=host(),
                    ),
                )
            ]
        )
        return RunPlan(run_id, [(t, t.task_id) for t in tasks], 0)
    run_id = resume.run_id
    attempts: Counter[str] = Counter()
    finished: set[str] = set()
    closing: list[NewEvent] = []
    for head in await store.list_streams(prefix=f"{run_id}/"):
        started = await _episode_started(store, head.stream)
        if started is None:
            continue
        attempts[started.task_id] += 1
        if head.last_type == "episode.finished":
            finished.add(started.task_id)
        else:
            closing.append(
                NewEvent(
                    stream=head.stream,
                    payload=EpisodeFinished(end_reason="aborted", detail="unfinished when the run was resumed"),
                )
            )
    if closing:
        await store.append(closing)
    todo = [
        (t, t.task_id if not attempts[t.task_id] else f"{t.task_id}#{attempts[t.task_id] + 1}")
        for t in tasks
        if t.task_id not in finished
    ]
    log.info("resuming run", run_id=run_id, kept=len(finished), aborted=len(closing), todo=len(todo))
    return RunPlan(run_id, todo, len(finished))


async def _episode_started(store: Recorder, stream: str) -> EpisodeStarted | None:
    """The opening event of an episode stream (None for derived streams such as judgments)."""
    async for event in store.read_stream(stream):
        payload = event.decode().payload
        return payload if isinstance(payload, EpisodeStarted) else None
    return None


async def record_episodes(
    store: Recorder,
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

    Cancellation (Ctrl-C) lets running episodes record themselves as aborted, then marks the
    run interrupted, so ``--resume`` can pick it up.
    """
    state = RunProgress(total=len(plan.todo) + plan.kept, done=plan.kept)
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(task: Task, episode_id: str) -> EpisodeOutcome:
        async with gate:
            state.running += 1
            _notify(progress, state)
            try:
                episode = Episode(
                    task,
                    run_id=plan.run_id,
                    episode_id=episode_id,
                    store=store,
                    browser=browser,
                    llm=llm,
                    retriever=retriever,
                    config=config,
                )
                outcome = await episode.run()
            finally:
                state.running -= 1
            state.done += 1
            state.failed += outcome.end_reason in {"error", "blocked"}
            state.tokens += outcome.tokens
            state.outcomes.append(outcome)
            _notify(progress, state)
            return outcome

    status = "completed"
    try:
        await asyncio.gather(*(one(task, episode_id) for task, episode_id in plan.todo))
    except asyncio.CancelledError:
        status = "interrupted"
        raise
    finally:
        reasons = Counter(o.end_reason for o in state.outcomes)
        costs = [o.cost_usd for o in state.outcomes if o.cost_usd is not None]
        await store.append(
            [
                NewEvent(
                    stream=plan.run_id,
                    payload=RunFinished(
                        status=status,
                        episodes=len(state.outcomes) + plan.kept,
                        end_reasons=dict(reasons),
                        cost_usd=round(sum(costs), 6) if costs else None,
                        seals=await seal_streams(store, plan.run_id, into=plan.run_id),
                    ),
                )
            ]
        )
    return state.outcomes


def _notify(progress: ProgressCallback | None, state: RunProgress) -> None:
    if progress is not None:
        progress(state)

"""`p2w-rt record` as a function: load tasks, start what the agent needs, record one run."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Sequence
from dataclasses import dataclass
from typing import Protocol

from p2w_runtime.agent._episode import Episode, EpisodeOutcome
from p2w_runtime.agent._request import RecordRequest
from p2w_runtime.agent._resume import resumed_request, selection_config
from p2w_runtime.agent._run import NewRun, ProgressCallback, plan_run, record_episodes
from p2w_runtime.agent._sources import folder_config, new_run_files, sources
from p2w_runtime.agent._worker import joined_run, work
from p2w_runtime.browser import BrowserSession
from p2w_runtime.data import BankFolder, DataError, Task, TaskSet, find_memory_bank
from p2w_runtime.domain import attempt_id, check_label_free, check_task_ids, find_run, holding_run, resuming
from p2w_runtime.llm import LlmClient, PriceTable
from p2w_runtime.retrieval import HistoryRetriever, load_embedder
from p2w_runtime.store import EventStore

ROLE_PARAMS = {"planner": {"temperature": 0.0}, "generator": {"temperature": 0.0}}


@dataclass(frozen=True)
class RecordSummary:
    run_id: str
    label: str
    kept: int
    outcomes: list[EpisodeOutcome]


def select_tasks(dataset: TaskSet, request: RecordRequest) -> list[Task]:
    """The tasks ``request`` selects; a ``--task`` given twice is refused, since it would be recorded twice at once."""
    twice = next((t for i, t in enumerate(request.task_ids) if t in request.task_ids[:i]), None)
    if twice is not None:
        raise DataError(f"--task {twice} is given twice; name each task once")
    tasks = [dataset.get(t) for t in request.task_ids] if request.task_ids else list(dataset)
    if request.level is not None:
        tasks = [t for t in tasks if t.level == request.level]
    tasks = tasks[: request.limit] if request.limit else tasks
    if not tasks:
        source = request.profiles or request.tasks_dir
        raise DataError(f"no task in {source} matches level={request.level} ids={list(request.task_ids)}")
    return tasks


async def record(
    store: EventStore,
    request: RecordRequest,
    progress: ProgressCallback | None = None,
    *,
    hosting: SiteHosting | None = None,
) -> RecordSummary:
    """Record one run (or continue ``request.resume``); user errors surface before any browsing starts."""
    resume = None
    if request.resume:
        resume = await find_run(store, request.resume)
        request = resumed_request(resume, request)
    dataset, banks = await sources(store, request, resume)
    tasks = select_tasks(dataset, request)
    config, model = request.config, request.model
    label = request.label or f"{config.scheme}-{model}"
    check_task_ids((t.task_id for t in tasks), f"run {label!r}")
    retriever = None
    if config.scheme != "no-history":
        if isinstance(banks, BankFolder):
            for persona in sorted({t.persona for t in tasks}):
                find_memory_bank(banks.history_dir, persona)
        embedder = await asyncio.to_thread(load_embedder, request.embedder)
        retriever = HistoryRetriever(banks, embedder, request.cache_dir)
    if resume is None and not request.worker:
        await check_label_free(store, label)
    carried = new_run_files(request, dataset, tasks) if resume is None else None
    embedder_ref = retriever.embedder.ref if retriever is not None else None
    run_config = {
        **folder_config(request),
        **selection_config(request, [t.task_id for t in tasks]),
        "concurrency": request.concurrency,
        "base_url": request.base_url,
        "embedder": request.embedder or "default",
    }
    llm = LlmClient(
        model,
        base_url=request.base_url,
        api_key=request.api_key,
        role_params=ROLE_PARAMS,
        retry=request.retry,
        timeout_s=request.llm_timeout_s,
        prices=PriceTable.default(request.prices),
    )
    new = NewRun(tasks, dataset, label, model, config, run_config, carried, embedder_ref)
    # a worker joins before the browser starts, so that a run the workers cannot join is refused at once; present
    # in the run from then until it ends
    joined: contextlib.AbstractAsyncContextManager[str | None]
    joined = joined_run(store, new) if request.worker else contextlib.nullcontext(None)
    async with joined as worker_run, llm, hosted_browser(tasks, request.chromium, hosting) as browser:
        if worker_run is not None:
            run_id = worker_run

            def episode(task: Task, attempt: int) -> Awaitable[EpisodeOutcome]:
                episode_id = attempt_id(task.task_id, attempt)
                return Episode(
                    task, run_id=run_id, episode_id=episode_id, store=store, browser=browser, llm=llm,
                    retriever=retriever, config=config,
                ).run()  # fmt: skip

            mine = await work(store, run_id, tasks, episode, concurrency=request.concurrency, progress=progress)
            return RecordSummary(run_id, label, 0, mine)
        # one process records the run, from before its start (or resume) to its close; workers share theirs
        async with resuming(store, resume) if resume is not None else holding_run(store, label):
            plan = await plan_run(store, new, resume)
            outcomes = await record_episodes(
                store,
                plan,
                browser=browser,
                llm=llm,
                retriever=retriever,
                config=config,
                concurrency=request.concurrency,
                progress=progress,
            )
    return RecordSummary(plan.run_id, resume.label if resume else label, len(plan.kept), outcomes)


class StartsAt(Protocol):
    """Where Chromium goes first: a task's start page, or a curated link that ``import-curation`` fetches."""

    @property
    def start_url(self) -> str: ...


class SiteHosting(Protocol):
    """Serves sites that the tasks start on and the open web does not have (the bundled demo sites).

    The runtime knows no such sites; ``p2w_runtime.demo.sites.DemoHosting`` is the one the CLI passes.
    """

    def serving(self, tasks: Sequence[StartsAt]) -> contextlib.AbstractAsyncContextManager[list[str]]:
        """Serve what ``tasks`` need while the context is open; its value is Chromium's extra arguments."""
        ...


@contextlib.asynccontextmanager
async def hosted_browser(
    tasks: list[Task], chromium: str | None, hosting: SiteHosting | None
) -> AsyncIterator[BrowserSession]:
    """Chromium, with what ``hosting`` serves for the tasks reachable from it."""
    async with contextlib.AsyncExitStack() as stack:
        args = await stack.enter_async_context(hosting.serving(tasks)) if hosting is not None else []
        async with BrowserSession(chromium, extra_args=args) as session:
            yield session

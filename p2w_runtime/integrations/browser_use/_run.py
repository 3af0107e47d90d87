"""`record --agent browser-use`: Persona2Web tasks run by ``browser_use.Agent`` in Chromium, recorded live.

The same task selection (folder, ``--level``, ``--task``, ``--limit``), schemes ``no-history`` and ``on-demand``
(the history as the ``memory_access`` action), ``--concurrency`` and ``--resume`` as the own agent; each episode
drives its own Chromium (the one p2w-rt finds, Debian's /usr/bin/chromium here) over CDP, and Playwright attaches
to that same browser at the end for the final state the own agent records (DOM with typed values, AX tree,
full-page screenshot, stylesheets).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import openai
from playwright.async_api import Page, Playwright, async_playwright

from p2w_rt.schemas import EndReason
from p2w_runtime.agent import EpisodeOutcome, RecordRequest, RecordSummary, RunProgress, SiteHosting, select_tasks
from p2w_runtime.browser import LAUNCH_ARGS, close_profile, find_chromium
from p2w_runtime.data import Task, load_tasks
from p2w_runtime.domain import carry_dataset, find_run
from p2w_runtime.errors import UserError
from p2w_runtime.integrations.browser_use._recorder import (
    BROWSER_USE_VERSION,
    MEMORY_ACTION,
    StepRecorder,
    check_version,
    memory_tools,
    recorded_chat,
)
from p2w_runtime.recording import Recording, open_run
from p2w_runtime.retrieval import HistoryRetriever, load_embedder
from p2w_runtime.scratch import scratch_folder
from p2w_runtime.store import EventStore

AGENT = "browser-use"
_T = TypeVar("_T")
ProgressCallback = Callable[[RunProgress], None]
_QUIET = {
    "ANONYMIZED_TELEMETRY": "false",
    "BROWSER_USE_CLOUD_SYNC": "false",
    "BROWSER_USE_SETUP_LOGGING": "false",
    "TIMEOUT_BrowserStartEvent": "120",
    "TIMEOUT_BrowserLaunchEvent": "120",
}
"""No telemetry, no cloud, no logging set-up of its own: Browser-Use reads these when it is imported. Starting
Chromium may take 120 s, not Browser-Use's 30: on a loaded 2-core machine (a CI run) its start once took longer and
failed the whole run. A value the user set wins."""


async def record_browser_use(
    store: EventStore, request: RecordRequest, progress: ProgressCallback | None = None, *, hosting: SiteHosting
) -> RecordSummary:
    """Record (or continue ``request.resume``) one Browser-Use run; user errors come before any browsing."""
    check_version()
    scheme = request.config.scheme
    if scheme == "pre-execution":
        raise UserError(
            "--agent browser-use records --scheme no-history or on-demand (pre-execution is the own agent's)"
        )
    if request.worker:
        raise UserError("--agent browser-use records with --concurrency, not --worker")
    if request.profiles is not None or request.config.har_bodies or request.config.capture_links:
        raise UserError(
            "--agent browser-use records Persona2Web tasks (--tasks), without --profiles, --har or --capture-links"
        )
    dataset = load_tasks(request.tasks_dir)
    label, model, resume = request.label, request.model, request.resume is not None
    if request.resume is not None:
        found = await find_run(store, request.resume)
        label, model, scheme = found.label, found.started.backbone_model, found.started.scheme or "no-history"
        tasks = [dataset.get(t) for t in found.started.config.tasks or []]
    else:
        tasks = select_tasks(dataset, request)
    label = label or f"{scheme}-{AGENT}-{model}"
    retriever = None
    if scheme != "no-history":
        embedder = await asyncio.to_thread(load_embedder, request.embedder)
        retriever = HistoryRetriever(request.history_dir, embedder, request.cache_dir)
    carried = carry_dataset(dataset, tasks, request.history_dir) if not resume else False
    run = await open_run(
        store,
        label=label,
        agent=AGENT,
        model=model,
        tasks=tasks,
        scheme=scheme,
        dataset_id=dataset.dataset_id,
        config={
            "browser_use": BROWSER_USE_VERSION,
            "max_steps": request.config.max_steps,
            "base_url": request.base_url,
        },
        resume=resume,
        carried=carried,
    )
    client = openai.AsyncOpenAI(
        base_url=request.base_url, api_key=request.api_key or "unset", max_retries=request.retry.max_retries,
        timeout=request.llm_timeout_s,
    )  # fmt: skip
    todo = run.todo()
    state = RunProgress(total=len(tasks), done=len(tasks) - len(todo))
    gate = asyncio.Semaphore(request.concurrency)
    async with run, hosting.serving(todo) as chromium_args, async_playwright() as attach:
        chromium = find_chromium(request.chromium)

        def one(task: Any) -> Awaitable[EpisodeOutcome]:
            return record_episode(
                run, task, client=client, model=model, retriever=retriever,
                chromium=chromium, chromium_args=chromium_args, max_steps=request.config.max_steps,
                attach=attach,
            )  # fmt: skip

        await asyncio.gather(*(state.track(gate, progress, functools.partial(one, task)) for task in todo))
    return RecordSummary(run.run_id, run.label, len(tasks) - len(todo), state.outcomes)


AGENT_SETTINGS: dict[str, Any] = {
    "use_vision": False,
    "use_judge": False,
    "enable_planning": False,
    "calculate_cost": False,
    "directly_open_url": False,
    "enable_signal_handler": False,
    "message_compaction": False,
    "max_failures": 3,
}
"""How every recorded Browser-Use agent runs: text observations (the scripted model reads no images), no
judge/planning/compaction calls of its own (they would be model calls outside Persona2Web's loop), no signal
handler (Ctrl-C is ``record``'s, which closes the episode as aborted)."""


def _browser_session(chromium: str, chromium_args: list[str], folder: Path) -> Any:
    """A Browser-Use session on p2w-rt's Chromium (``find_chromium``), headless, no extensions fetched, with the
    recorder's launch arguments and the demo sites' resolver rules; its profile and downloads in ``folder``."""
    for name, value in _QUIET.items():
        os.environ.setdefault(name, value)
    from browser_use import BrowserProfile, BrowserSession

    _remove_import_downloads()
    profile = BrowserProfile(
        executable_path=chromium,
        headless=True,
        args=[*LAUNCH_ARGS, *chromium_args],
        user_data_dir=folder / "profile",
        downloads_path=folder / "downloads",
        enable_default_extensions=False,
        keep_alive=True,
        highlight_elements=False,
        dom_highlight_elements=False,
    )
    return BrowserSession(browser_profile=profile)


@contextlib.asynccontextmanager
async def browser_use_session(chromium: str, chromium_args: list[str]) -> AsyncIterator[Any]:
    """A Browser-Use session in a folder of its own, killed on exit and removed with what Chromium made for it in
    the temp dir, however the episode ended (error, cancellation)."""
    with scratch_folder("browser-use") as folder:
        session = _browser_session(chromium, chromium_args, folder)
        try:
            yield session
        finally:
            with contextlib.suppress(Exception):
                await session.kill()
            await close_profile(folder / "profile")


def remove_agent_files(agent: Any) -> None:
    """Remove the folder ``browser_use.Agent`` makes for itself in the temp dir (its file system and a screenshot of
    every step); Browser-Use has no option to put it elsewhere and never removes it."""
    shutil.rmtree(agent.agent_directory, ignore_errors=True)


def _remove_import_downloads() -> None:
    """Browser-Use's module-level default profile (``DEFAULT_BROWSER_PROFILE``, used by no session of ours) makes an
    empty ``browser-use-downloads-XXXXXXXX`` folder in the temp dir when Browser-Use is imported: removed if still
    empty."""
    from browser_use.browser.session import DEFAULT_BROWSER_PROFILE

    if DEFAULT_BROWSER_PROFILE.downloads_path is not None:
        with contextlib.suppress(OSError):
            Path(DEFAULT_BROWSER_PROFILE.downloads_path).rmdir()


async def record_episode(
    run: Recording,
    task: Task,
    *,
    client: openai.AsyncOpenAI,
    model: str,
    retriever: HistoryRetriever | Callable[[], HistoryRetriever] | None,
    chromium: str,
    chromium_args: list[str],
    max_steps: int,
    attach: Playwright,
    recorder: type[StepRecorder] = StepRecorder,
) -> EpisodeOutcome:
    """One Browser-Use attempt at ``task``, recorded from its first step to its final page, which ``attach`` (one
    Playwright driver for the run) reads over CDP; ``retriever`` may be a function making it (``rerun``: replay mode
    answers from the recording and makes none). ``recorder``: the hooks' class (``benchmarks/bench_browser_use.py``
    times them in a subclass)."""
    async with browser_use_session(chromium, chromium_args) as session:
        from browser_use import Agent, Tools

        async with run.episode(task) as episode:
            steps = recorder(episode)
            tools: Tools[Any] = Tools()
            if retriever is not None:
                memory_tools(tools, episode, retriever, client, model)
            agent: Agent[Any, Any] = Agent(
                task=task.intent,
                llm=recorded_chat(client, model, steps.observe_step),
                browser_session=session,
                tools=tools,
                register_new_step_callback=steps.on_model_output,
                initial_actions=[{"navigate": {"url": task.start_url, "new_tab": False}}],
                extend_system_message=_HISTORY_NOTE if retriever is not None else None,
                **AGENT_SETTINGS,
            )
            steps.agent = agent
            try:
                history = await not_cancelled_inside(agent.run(max_steps=max_steps, on_step_end=steps.on_step_end))
                async with _attached_page(session, attach) as page:
                    await episode.final_state(page)
                answer = history.final_result()
                reason: EndReason = "answered" if history.is_done() else "max_steps"
                if history.is_done() and not history.is_successful() and not answer:
                    reason = "error"
                finished = await episode.end(reason, answer)
            except CancelledInside as failed:
                finished = await episode.end("error", detail=str(failed))
            finally:
                remove_agent_files(agent)
        return EpisodeOutcome(
            episode.stream, task.task_id, finished.end_reason, finished.answer, finished.steps,
            episode.tokens, finished.cost_usd, finished.detail,
        )  # fmt: skip


class CancelledInside(Exception):
    """Browser-Use cancelled work of its own (an event handler of its bus, a parent event's timeout) and the
    cancellation reached its caller: the episode failed, the recording was not stopped."""


async def not_cancelled_inside(work: Awaitable[_T]) -> _T:
    """``work``, with a ``CancelledError`` that did not come from cancelling this task raised as ``CancelledInside``.

    A cancellation is a ``BaseException``: left as it is, Browser-Use's own (seen once under load, its browser start
    interrupted while another episode ran) ended the episode as ``aborted`` and stopped the whole run. Only this
    task's cancellation (Ctrl-C, the run stopping: ``Task.cancelling()``) stays one, and is raised when the work
    returns if Browser-Use caught it and went on (its bus catches ``CancelledError`` in places), so a Ctrl-C is
    never lost.
    """
    task = asyncio.current_task()
    try:
        done = await work
    except asyncio.CancelledError as cancelled:
        if task is None or task.cancelling():
            raise
        raise CancelledInside(f"browser-use cancelled its own work: {cancelled or 'CancelledError'}") from cancelled
    if task is not None and task.cancelling():
        raise asyncio.CancelledError("cancelled while browser-use worked, which went on")  # a Ctrl-C it caught
    return done


_HISTORY_NOTE = (
    f"The user's browsing and purchase history can be asked with the `{MEMORY_ACTION}` action. When the task depends "
    "on the user's habits or preferences (which site they use, sizes, brands, diet, budget), ask it before choosing."
)


@contextlib.asynccontextmanager
async def _attached_page(session: Any, attach: Playwright) -> AsyncIterator[Page]:
    """The page Browser-Use ended on, as a Playwright ``Page`` attached to the same Chromium over CDP."""
    url = await session.get_current_page_url()
    browser = await attach.chromium.connect_over_cdp(session.cdp_url)
    try:
        pages = [p for context in browser.contexts for p in context.pages]
        if not pages:
            raise UserError("browser-use left no page open to record the final state of")
        yield next((p for p in reversed(pages) if p.url == url), pages[-1])
    finally:
        await browser.close()

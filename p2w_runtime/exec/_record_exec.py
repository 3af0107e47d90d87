"""`record --exec CMD`: any agent, in any language, recorded with no change to its code.

Per selected task p2w-rt starts a Chromium it observes over CDP (``ObservedChromium``), opens the task's start page
in it, and starts CMD once with the episode's environment:

- ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``: the recording proxy (``RecordProxy``), forwarding to ``--base-url`` with
  ``--api-key``; the key the agent gets names its episode and is worth nothing elsewhere;
- ``P2W_CDP_URL``: the browser (its default context holds the start page); ``P2W_TASK_ID``, ``P2W_TASK_FILE`` (JSON:
  task_id, intent, start_url, persona, level), ``P2W_ANSWER_FILE``, ``P2W_MODEL`` (``--model``);
- ``OTEL_EXPORTER_OTLP_ENDPOINT``: the same local server, for an agent that exports OpenTelemetry spans.

The episode reads: the start page (step 1), then per model call the page when it changed, the call, and the
navigations that followed as ``goto`` actions; the agent's tool spans as actions and rationales; the final state;
the end (its answer, or its exit status and standard error). Task selection, ``--concurrency``, ``--resume`` and
progress are ``record``'s; so is ``--worker``: the worker loop of ``p2w_runtime.agent`` leases the tasks and records
each through this module's episode. The run's agent is ``exec:NAME`` (NAME: the command's script or program), which a
resume or another worker must name again.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
from collections.abc import Callable
from pathlib import Path, PurePath

from playwright.async_api import Playwright, async_playwright

from p2w_rt.schemas import EpisodeFinished, canonical_json
from p2w_runtime.agent import (
    COMMAND_DIGEST,
    EpisodeOutcome,
    RecordRequest,
    RecordSummary,
    RunProgress,
    SiteHosting,
    check_joinable,
    check_resume_options,
    select_tasks,
    selection_config,
    work,
)
from p2w_runtime.browser import find_chromium
from p2w_runtime.data import load_tasks
from p2w_runtime.domain import TaskLike, UnknownRun, carry_dataset, find_run, run_tasks
from p2w_runtime.errors import UserError
from p2w_runtime.exec._agent_process import AgentExit, check_program, exited, run_agent, task_file
from p2w_runtime.exec._observer import ObservedChromium
from p2w_runtime.exec._record_proxy import ProxiedEpisode, RecordProxy
from p2w_runtime.exec._spans import SpanSink
from p2w_runtime.llm import PriceTable, check_url
from p2w_runtime.recording import EpisodeRecorder, Recording, open_run
from p2w_runtime.redaction import redact_text
from p2w_runtime.scratch import scratch_folder
from p2w_runtime.store import EventStore

ProgressCallback = Callable[[RunProgress], None]
_INTERPRETERS = ("python", "node", "deno", "bun", "sh", "bash", "ruby", "perl", "uv", "npx", "tsx")
_INLINE_CODE = ("-c", "-e", "-E", "-p", "--eval", "--print")
"""Interpreter flags whose value is the code itself (``sh -c``, ``python -c``, ``node -e``, ``perl -E``)."""


def command_digest(command: list[str]) -> str:
    """What tells a resume's command from the one that recorded the run, stored as a digest (the command may hold
    a secret), of each argument's last path component (the same command from another folder or machine agrees)."""
    return hashlib.sha256(canonical_json([PurePath(arg).name for arg in command])).hexdigest()


def agent_name(command: list[str]) -> str:
    """``exec:NAME``: the script an interpreter runs (``python agent.py`` -> ``exec:agent.py``), else the program;
    a name, never a path of this machine. Inline code names its interpreter (``exec:bash -c``): the code is no
    name, and may hold a secret (``sh -c "./agent --token ..."``) that would go into the run's agent and label."""
    program = Path(command[0]).name
    if not program.startswith(_INTERPRETERS):
        return f"exec:{program}"
    for arg in command[1:]:
        if arg in _INLINE_CODE or (arg[:1] == "-" and arg[1:2] != "-" and arg.endswith("c")):  # bash -lc
            return f"exec:{program} {arg}"
        if not arg.startswith("-"):
            return f"exec:{Path(arg).name}"
    return f"exec:{program}"


async def record_exec(
    store: EventStore,
    request: RecordRequest,
    command: list[str],
    progress: ProgressCallback | None = None,
    *,
    hosting: SiteHosting,
    timeout_s: float | None = None,
) -> RecordSummary:
    """Record (or continue ``request.resume``) one run of ``command``, each agent killed after ``timeout_s``; user
    errors come before any browsing."""
    if not command:
        raise UserError("--exec: give the command that runs the agent")
    check_program(command[0])
    if request.base_url is None:
        raise UserError("--exec needs --base-url: the OpenAI-compatible endpoint its recording proxy forwards to")
    check_url(request.base_url)  # as the own agent's client does: a bad URL fails here, not at every model call
    if request.profiles is not None or request.config.capture_links:
        raise UserError("--exec records Persona2Web tasks (--tasks), without --profiles or --capture-links")
    agent, digest = agent_name(command), command_digest(command)
    scheme = request.config.scheme if "--scheme" in request.given else None
    label, model, resume, found = request.label, request.model, request.resume is not None, None
    keep_har = request.config.har_bodies
    if request.resume is not None:
        found = await find_run(store, request.resume)
        # what a resume cannot honour is refused in one line, as the own agent's is; so is a --tasks folder that
        # holds other files than the run carries
        check_resume_options(found, request, agent=agent, command_digest=digest)
        given = request.tasks_dir if "--tasks" in request.given else None
        dataset = await run_tasks(store, found, given, offer_other=False)
        label, model, scheme = found.label, found.started.backbone_model, found.started.scheme
        tasks = [dataset.get(t) for t in found.started.config.tasks or []]
        keep_har = found.started.config.har_bodies
    else:
        dataset = load_tasks(request.tasks_dir)
        tasks = select_tasks(dataset, request)
    label = label or f"{agent.replace(':', '-')}-{model}"
    if request.worker:  # a run the workers cannot share is refused first, in the words of the own agent's workers
        with contextlib.suppress(UnknownRun):
            await check_joinable(store, await find_run(store, label), [t.task_id for t in tasks])
    # one process records the run (first or resumed): open_run holds its claim until it is closed; workers share it
    run = await open_run(
        store,
        label=label,
        agent=agent,
        model=model,
        tasks=dataset,  # the run states its task folder, as the own agent's do; it records these of them
        only=[t.task_id for t in tasks],
        scheme=scheme,
        config={
            "base_url": request.base_url,
            "concurrency": request.concurrency,
            "har_bodies": keep_har,
            COMMAND_DIGEST: digest,
            **selection_config(request, [t.task_id for t in tasks]),
        },
        resume=resume,
        join=request.worker,
        carried=carry_dataset(dataset, tasks, request.history_dir) if not resume else False,
    )
    todo = tasks if request.worker else run.todo()  # a worker may lease any of them
    state = RunProgress(total=len(tasks), done=len(tasks) - len(todo))
    gate = asyncio.Semaphore(request.concurrency)
    proxy = RecordProxy(
        request.base_url,
        request.api_key,
        timeout_s=request.llm_timeout_s,
        prices=PriceTable.default(request.prices),
    )
    closing = run.leaving() if request.worker else run  # a worker's run is finished by the last worker
    async with closing, proxy, hosting.serving(todo) as chromium_args, async_playwright() as playwright:
        chromium = find_chromium(request.chromium)
        episode = _EpisodeRunner(run, proxy, playwright, chromium, chromium_args, command, model, timeout_s)
        episode.keep_har = keep_har
        if request.worker:
            mine = await work(
                store, run.run_id, tasks, episode.record, concurrency=request.concurrency, progress=progress
            )
            return RecordSummary(run.run_id, run.label, 0, mine)
        await asyncio.gather(*(state.track(gate, progress, functools.partial(episode.record, t)) for t in todo))
    return RecordSummary(run.run_id, run.label, len(tasks) - len(todo), state.outcomes)


class _EpisodeRunner:
    """What every episode of the run shares: the proxy, the Playwright driver, Chromium and the command."""

    def __init__(
        self,
        run: Recording,
        proxy: RecordProxy,
        playwright: Playwright,
        chromium: str,
        chromium_args: list[str],
        command: list[str],
        model: str,
        timeout_s: float | None,
    ) -> None:
        self.run, self.proxy, self.playwright = run, proxy, playwright
        self.chromium, self.chromium_args, self.command, self.model = chromium, chromium_args, command, model
        self.timeout_s = timeout_s
        self.keep_har = False
        """``record --har``: keep each episode's pages with their bodies, for ``rerun --exec --restore har``."""

    async def record(self, task: TaskLike, attempt: int | None = None) -> EpisodeOutcome:
        """Record the next attempt at ``task``, or attempt number ``attempt`` (a worker's)."""
        async with self.run.episode(task, attempt=attempt) as episode:
            chromium = ObservedChromium(
                self.playwright, self.chromium, self.chromium_args, task.start_url, keep_har=self.keep_har
            )
            async with chromium as browser:
                await browser.observe(episode)
                spans = SpanSink(episode, lambda: setattr(browser, "navigations_as_actions", False))
                token = self.proxy.register(
                    ProxiedEpisode(
                        episode, lambda: browser.observe(episode), spans.take, lambda: browser.stored(episode)
                    )
                )
                try:
                    ended = await self._run_agent(task, token, browser.cdp_url)
                finally:
                    await self.proxy.unregister(token)
                await browser.final_state(episode)
            finished = await _end(episode, ended, self.timeout_s)
        return EpisodeOutcome(
            episode.stream, task.task_id, finished.end_reason, finished.answer, finished.steps,
            episode.tokens, finished.cost_usd, finished.detail,
        )  # fmt: skip

    async def _run_agent(self, task: TaskLike, token: str, cdp_url: str) -> AgentExit:
        with scratch_folder("exec-task") as folder:
            described, answer_file = task_file(task, folder), folder / "answer"
            otlp = self.proxy.otlp_endpoint(token)
            env = {
                "OPENAI_BASE_URL": self.proxy.base_url(token),
                "OPENAI_API_KEY": token,
                "P2W_CDP_URL": cdp_url,
                "P2W_TASK_ID": task.task_id,
                "P2W_TASK_FILE": str(described),
                "P2W_ANSWER_FILE": str(answer_file),
                "P2W_MODEL": self.model,
                "OTEL_EXPORTER_OTLP_ENDPOINT": otlp,
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": f"{otlp}/v1/traces",
                "NO_PROXY": "127.0.0.1,localhost",
            }
            return await run_agent(self.command, env, answer_file, timeout_s=self.timeout_s)


async def _end(episode: EpisodeRecorder, ended: AgentExit, timeout_s: float | None) -> EpisodeFinished:
    """Answered when the agent exited 0 with an answer; ``no_answer`` without one; ``error`` with its exit status
    (or its time limit) and standard error when it failed."""
    answer = redact_text(ended.answer) if ended.answer is not None else None
    if ended.stopped is not None:
        return await episode.end("error", answer, detail=ended.stopped)
    if ended.status != 0:
        said = ended.stderr_tail.strip()  # redacted when it was read
        how = (
            f"was killed at its timeout ({timeout_s:g} s)"
            if ended.status is None
            else exited(ended.status, "exited with status")
        )
        return await episode.end("error", answer, detail=f"the agent {how}" + (f": {said}" if said else ""))
    return await episode.end("answered" if answer is not None else "no_answer", answer)

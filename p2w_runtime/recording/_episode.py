"""``EpisodeRecorder``: one attempt at a task, recorded as the agent goes, through the one ``EpisodeWriter``.

Every call stages events in grammar order (a wrong order raises ``EpisodeGrammarError`` and stages nothing);
``action`` flushes the step and the write runs behind the agent's next step, as in the own agent, so a killed
recorder loses at most the step in progress. ``settle`` waits for the write, for an agent that wants a step stored
before it does something irreversible on a website.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections import Counter
from collections.abc import Callable, Sequence

from playwright.async_api import Page

from p2w_rt.schemas import (
    Action,
    EndReason,
    EpisodeFinished,
    ForkPoint,
    LlmCall,
    ParsedAction,
    Rationale,
    Scheme,
    utc_now,
)
from p2w_runtime.domain import NOT_AN_OUTCOME, EpisodeWriter, TaskLike, episode_started
from p2w_runtime.errors import UserError
from p2w_runtime.recording._action import ActionCall, ActionStatus
from p2w_runtime.recording._final_state import Har, final_state
from p2w_runtime.recording._history import EpisodeHistory
from p2w_runtime.recording._observer import StepObserver
from p2w_runtime.recording._page import ScreenshotPolicy
from p2w_runtime.recording._replay import ReplayLink
from p2w_runtime.store import EventStore

OnEnd = Callable[[str, bool], None]
current_episode: contextvars.ContextVar[EpisodeRecorder | None] = contextvars.ContextVar(
    "p2w_current_episode", default=None
)
"""The episode an instrumented OpenAI client records into: the innermost open ``async with`` of this task."""


class EpisodeRecorder(EpisodeHistory):
    """Records one attempt (``run/TASK#n``); open it with ``async with``, end it with ``end``.

    Leaving the block without ``end`` ends the episode anyway: ``aborted`` when the task was cancelled, ``error``
    (with the exception) when the block raised, ``error`` when the agent forgot to call ``end``.
    """

    def __init__(
        self,
        store: EventStore,
        run_id: str,
        episode_id: str,
        task: TaskLike,
        *,
        scheme: Scheme | None,
        on_end: OnEnd | None = None,
        replay: ReplayLink | None = None,
        fork: ForkPoint | None = None,
    ) -> None:
        self.task = task
        self.store = store
        self.replay = replay
        self.fork = fork
        self.episode_id = episode_id
        self.scheme = scheme
        self.writer = EpisodeWriter.of(run_id, episode_id, store)
        self.stream = self.writer.stream
        self.step = 0
        """The step of the latest observation (0 before the first)."""
        self._acted = False
        self._ordinals: Counter[str] = Counter()
        self._retrieval: str | None = None
        self._final_url: str | None = None
        self._costs: list[float] = []
        self.tokens = 0
        """Tokens of the model calls recorded so far (their ``usage``), for an agent's progress line."""
        self._on_end = on_end
        self._observer = StepObserver(self.writer)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._token: contextvars.Token[EpisodeRecorder | None] | None = None
        self.finished: EpisodeFinished | None = None

    # -- lifecycle -------------------------------------------------------------------------------------

    async def __aenter__(self) -> EpisodeRecorder:
        if self.writer.grammar.phase != "new":
            raise UserError(f"episode {self.stream}: already opened once; ask the run for a new episode")
        self._loop = asyncio.get_running_loop()
        source = getattr(self.task, "path", None)  # a Persona2Web task names its file
        started = episode_started(
            self.task, episode_id=self.episode_id, scheme=self.scheme, source_file=source, fork=self.fork
        )
        self.writer.add(started, self.fork.source_event_id if self.fork is not None else None)  # caused by its source
        await self.writer.flush()
        self._token = current_episode.set(self)
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None, _tb: object) -> None:
        if self._token is not None:
            current_episode.reset(self._token)
            self._token = None
        if self.finished is None:
            if kind is not None and issubclass(kind, asyncio.CancelledError):
                await self.end("aborted", detail="the recording was cancelled")
            elif exc is not None:
                await self.end("error", detail=f"{type(exc).__name__}: {exc}")
            else:
                await self.end("error", detail="the agent left the episode without ending it (end() not called)")
        await self.writer.settle()
        if self.replay is not None:
            await self.replay.hand_back(self.store, self.stream)

    async def settle(self) -> None:
        """Wait until every step recorded so far is read (the page of the latest ``observe``) and stored."""
        await self._observed()
        await self.writer.settle()

    # -- steps -----------------------------------------------------------------------------------------

    async def observe(
        self,
        page: Page | None = None,
        *,
        url: str | None = None,
        title: str = "",
        tabs: Sequence[str] = (),
        ax_tree: str | None = None,
        screenshot: bytes | None = None,
        description: str | None = None,
        screenshots: ScreenshotPolicy = "changed",
    ) -> int:
        """Open the next step with what the agent sees: read off ``page``, or the values the agent already has
        (``url`` required then). Returns the step number.

        A page is read behind the agent (its ARIA snapshot, and a screenshot when the page changed, or as
        ``screenshots`` says), while it thinks; the read ends before the step's next record (the next action at the
        latest), so it sees the page before the agent acts on it. Model calls made meanwhile wait to be staged after
        the observation, keeping their times."""
        await self._observed()
        if page is None and url is None:
            raise UserError(f"episode {self.stream}: an observation needs a page or a url")
        step, at = self.step + 1, utc_now()
        self.step, self._acted = step, False
        if page is None:
            assert url is not None
            self._observer.given(step, at, url, title, tabs, ax_tree, screenshot, description)
        else:
            self._observer.read(page, step, at, screenshots, description)
        return step

    async def rationale(self, text: str) -> None:
        """The agent's reasoning for the current step (its thought before acting)."""
        await self._observed()
        self.writer.add(Rationale(step=self.step, source="planner", text=text))

    def action(
        self,
        raw: str,
        parsed: ParsedAction | None = None,
        *,
        status: ActionStatus = "executed",
        error: str | None = None,
    ) -> ActionCall:
        """What the agent did this step: its raw text, the parsed form when its grammar is known.

        ``async with episode.action(raw, parsed) as act:`` around carrying it out records it when the block ends:
        ``executed`` with its duration, or ``invalid`` with the exception when the block raised (the exception goes
        on), or what ``act.failed(error)`` said. ``await episode.action(raw, parsed, status=..., error=...)``
        records an action already carried out (or refused), untimed. Either way the step is flushed (stored
        behind the agent's next step)."""
        return ActionCall(self, raw, parsed, status, error)

    async def _act(self, call: ActionCall, duration_s: float | None) -> None:
        await self._observed()
        self.writer.add(
            Action(
                step=self.step,
                raw=call.raw,
                parsed=call.parsed,
                status=call.status,
                error=call.error,
                duration_s=duration_s,
            )
        )
        self._acted = True
        await self.writer.flush()

    # -- the end ---------------------------------------------------------------------------------------

    async def final_state(
        self,
        page: Page | None = None,
        *,
        url: str | None = None,
        title: str = "",
        dom_html: str | bytes | None = None,
        ax_tree: str | None = None,
        screenshot: bytes | None = None,
        har: Har = None,
    ) -> None:
        """The state the episode ended in, for offline checks: read off ``page`` (DOM with typed form values,
        AX tree, full-page screenshot, stylesheets), or given as values (``url`` required then).

        ``har`` is the HAR's bytes, or a coroutine function called once the page was read: Playwright writes a HAR
        only when its context closes, which would close the page first. Its cookies and credentials are removed."""
        await self._observed()
        state = await final_state(
            self.writer, page, url=url, title=title, dom_html=dom_html, ax_tree=ax_tree, screenshot=screenshot, har=har
        )
        self.writer.add(state)
        self._final_url = state.url

    async def end(self, reason: EndReason, answer: str | None = None, *, detail: str | None = None) -> EpisodeFinished:
        """End the episode (``answered`` with the agent's answer, or why it stopped) and store it, sealed."""
        await self._observed()
        cost = round(sum(self._costs), 6) if self._costs else None
        finished = EpisodeFinished(
            end_reason=reason, answer=answer, final_url=self._final_url, steps=self.step, detail=detail, cost_usd=cost
        )
        self.writer.add(finished)
        self.finished = finished
        await self.writer.flush()
        await self.writer.settle()
        if self._on_end is not None:
            self._on_end(self.task.task_id, reason not in NOT_AN_OUTCOME)
        return finished

    # -- LLM calls (the instrumented client's sink) ----------------------------------------------------

    def llm_step(self, role: str) -> int:
        """The step a call made now belongs to: a planner call plans the next step once the current one has
        acted (the grammar's order: observation, plan, action); any other call (a memory answer) is the current
        step's."""
        return self.step + 1 if self._acted and role == "planner" else self.step

    def ordinal(self, fingerprint: str, attempt: int) -> int:
        """How many earlier calls of this episode had ``fingerprint``; a retry (attempt > 1) keeps its call's."""
        if attempt > 1 and self._ordinals[fingerprint]:
            return self._ordinals[fingerprint] - 1
        self._ordinals[fingerprint] += 1
        return self._ordinals[fingerprint] - 1

    def record_call(self, call: LlmCall) -> None:
        """Stage ``call`` in the current step; from another thread (a sync client in a worker thread) it is
        handed to the episode's loop and staged before this returns, so the step keeps its order."""
        loop = self._loop
        try:
            here = asyncio.get_running_loop()
        except RuntimeError:
            here = None
        if loop is None or here is loop:
            self._stage(call)
            return
        asyncio.run_coroutine_threadsafe(self._stage_async(call), loop).result()

    def _stage(self, call: LlmCall) -> None:
        self._observer.stage(call)
        if call.usage is not None:
            self.tokens += call.usage.total_tokens
        if call.cost_usd is not None:
            self._costs.append(call.cost_usd)

    async def _stage_async(self, call: LlmCall) -> None:
        self._stage(call)

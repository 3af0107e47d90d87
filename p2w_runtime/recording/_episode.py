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
from typing import Literal

from playwright.async_api import Page

from p2w_runtime.domain import NOT_AN_OUTCOME, EpisodeWriter, TaskLike, episode_started
from p2w_runtime.errors import UserError
from p2w_runtime.recording._page import final_of, view_of
from p2w_runtime.recording._replay import ReplayLink
from p2w_runtime.retrieval import DEFAULT_K, DEFAULT_THRESHOLD, HistoryRetriever, SearchHit, retrieval_events
from p2w_runtime.store import EventStore
from schemas import (
    Action,
    EndReason,
    EpisodeFinished,
    FinalState,
    ForkPoint,
    HistoryQuery,
    HistoryRetrieval,
    LlmCall,
    Observation,
    ParsedAction,
    Rationale,
    RetrievalHit,
    Scheme,
)

Phase = Literal["pre-execution", "on-demand"]
OnEnd = Callable[[str, float | None, bool], None]
current_episode: contextvars.ContextVar[EpisodeRecorder | None] = contextvars.ContextVar(
    "p2w_current_episode", default=None
)
"""The episode an instrumented OpenAI client records into: the innermost open ``async with`` of this task."""


class EpisodeRecorder:
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
        """Wait until every step recorded so far is stored."""
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
    ) -> int:
        """Open the next step with what the agent sees: read off ``page``, or the values the agent already has
        (``url`` required then). Returns the step number."""
        if page is not None:
            view = await view_of(page)
            url, title, tabs, ax_tree, screenshot = view.url, view.title, view.tabs, view.ax_text, view.screenshot
        if url is None:
            raise UserError(f"episode {self.stream}: an observation needs a page or a url")
        observation = Observation(
            step=self.step + 1,
            url=url,
            title=title,
            tabs=list(tabs),
            description=description,
            ax_tree=self.writer.blob(ax_tree.encode()) if ax_tree is not None else None,
            screenshot=self.writer.blob(screenshot) if screenshot else None,
        )
        self.writer.add(observation)
        self.step, self._acted = observation.step, False
        return self.step

    async def rationale(self, text: str) -> None:
        """The agent's reasoning for the current step (its thought before acting)."""
        self.writer.add(Rationale(step=self.step, source="planner", text=text))

    async def action(
        self,
        raw: str,
        parsed: ParsedAction | None = None,
        *,
        status: Literal["executed", "invalid", "blocked"] = "executed",
        error: str | None = None,
    ) -> None:
        """What the agent did this step: its raw text, the parsed form when its grammar is known. Flushes the
        step (stored behind the agent's next step)."""
        self.writer.add(Action(step=self.step, raw=raw, parsed=parsed, status=status, error=error))
        self._acted = True
        await self.writer.flush()

    # -- history ---------------------------------------------------------------------------------------

    async def history(
        self,
        query: str,
        hits: Sequence[RetrievalHit],
        *,
        model_id: str,
        index_hash: str,
        k: int,
        threshold: float,
        phase: Phase = "on-demand",
        reason: str | None = None,
    ) -> None:
        """A history query and what the agent's own retriever returned for it."""
        asked = self.writer.add(HistoryQuery(step=self._at(), phase=phase, query=query, reason=reason))
        retrieval = HistoryRetrieval(
            step=self._at(),
            query=query,
            model_id=model_id,
            index_hash=index_hash,
            k=k,
            threshold=threshold,
            hits=list(hits),
        )
        self._retrieval = self.writer.add(retrieval, asked.event_id).event_id

    async def retrieve(
        self,
        retriever: HistoryRetriever | Callable[[], HistoryRetriever],
        query: str,
        *,
        persona: str | None = None,
        k: int = DEFAULT_K,
        threshold: float = DEFAULT_THRESHOLD,
        phase: Phase = "on-demand",
        reason: str | None = None,
    ) -> list[SearchHit]:
        """Ask p2w-rt's retriever about the task's persona (or ``persona``) and record the query and its hits;
        ``retriever`` may be a function making it, called only when a search is made: a re-execution by p2w-rt makes
        none, the recorded hits answer (``ReplayDiverged`` when the query is not the recorded one)."""
        if self.replay is not None and (self.fork is None or self.step < self.fork.at_step):
            recorded, found = await self.replay.retrieval(query)
            await self.history(query, recorded, phase=phase, reason=reason, **found)
            return [SearchHit(hit.entry_id, hit.rank, hit.score or 0.0, hit.entry) for hit in recorded]
        if not isinstance(retriever, HistoryRetriever):
            retriever = await asyncio.to_thread(retriever)
        index = await asyncio.to_thread(retriever.index, persona or self.task.persona)
        hits = await asyncio.to_thread(index.search, query, k, threshold)
        _, answered = retrieval_events(self.writer, query, hits, index, k, threshold, self._at(), phase, reason)
        self._retrieval = answered.event_id
        return hits

    async def memory_answer(self, text: str, cited: Sequence[int] = ()) -> None:
        """The answer the agent drew from the latest retrieval (its generator's), caused by that retrieval."""
        if self._retrieval is None:
            raise UserError(f"episode {self.stream}: a memory answer needs a history retrieval before it")
        rationale = Rationale(step=self._at(), source="generator", text=text, cited_entry_ids=list(cited))
        self.writer.add(rationale, self._retrieval)

    def _at(self) -> int | None:
        return self.step or None

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
        har: bytes | None = None,
    ) -> None:
        """The state the episode ended in, for offline checks: read off ``page`` (DOM with typed form values,
        AX tree, full-page screenshot, stylesheets), or given as values (``url`` required then)."""
        stylesheets: bytes | None = None
        if page is not None:
            final = await final_of(page)
            url, title, dom_html, screenshot = final.url, final.title, final.dom_html, final.screenshot or None
            ax_tree, stylesheets = final.ax_tree.decode(), final.stylesheets or None
        if url is None:
            raise UserError(f"episode {self.stream}: a final state needs a page or a url")
        dom = dom_html.encode() if isinstance(dom_html, str) else dom_html
        blob = self.writer.blob
        self.writer.add(
            FinalState(
                url=url,
                title=title,
                dom_html=blob(dom) if dom is not None else None,
                ax_tree=blob(ax_tree.encode()) if ax_tree is not None else None,
                screenshot=blob(screenshot) if screenshot else None,
                har=blob(har) if har else None,
                stylesheets=blob(stylesheets) if stylesheets else None,
            )
        )
        self._final_url = url

    async def end(self, reason: EndReason, answer: str | None = None, *, detail: str | None = None) -> EpisodeFinished:
        """End the episode (``answered`` with the agent's answer, or why it stopped) and store it, sealed."""
        cost = round(sum(self._costs), 6) if self._costs else None
        finished = EpisodeFinished(
            end_reason=reason, answer=answer, final_url=self._final_url, steps=self.step, detail=detail, cost_usd=cost
        )
        self.writer.add(finished)
        self.finished = finished
        await self.writer.flush()
        await self.writer.settle()
        if self._on_end is not None:
            self._on_end(self.task.task_id, cost, reason not in NOT_AN_OUTCOME)
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
        self.writer.add(call)
        if call.usage is not None:
            self.tokens += call.usage.total_tokens
        if call.cost_usd is not None:
            self._costs.append(call.cost_usd)

    async def _stage_async(self, call: LlmCall) -> None:
        self._stage(call)

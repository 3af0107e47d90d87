"""One episode: observe, plan (or ask the history), act; every step recorded before the next begins."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import structlog

from p2w_rt.schemas import (
    Action,
    EndReason,
    EpisodeFinished,
    ForkPoint,
    Observation,
    ParsedAction,
    Rationale,
)
from p2w_runtime.actions import BROWSER_ACTIONS, ActionParseError, extract_action, parse_action, repeated_action
from p2w_runtime.agent._config import AgentConfig
from p2w_runtime.agent._end_state import final_state, record_captures
from p2w_runtime.agent._environment import Environment, EpisodeTab, SeamDiverged
from p2w_runtime.agent._memory import Personalization
from p2w_runtime.agent._replies import parse_queries, parse_rewrite, planner_thought
from p2w_runtime.agent.prompts import (
    StepRecord,
    page_text,
    planner_system,
    planner_user,
    pre_execution_messages,
    rewrite_messages,
)
from p2w_runtime.browser import BrowserGone, EpisodeSettings
from p2w_runtime.data import Task
from p2w_runtime.domain import EpisodeWriter, episode_started
from p2w_runtime.llm import LlmClient, LlmError
from p2w_runtime.retrieval import HistoryRetriever
from p2w_runtime.scratch import scratch_folder
from p2w_runtime.store import EventStore, StoreUnavailable, StreamEnded

log = structlog.get_logger(__name__)


@dataclass
class EpisodeOutcome:
    stream: str
    task_id: str
    end_reason: EndReason
    answer: str | None = None
    steps: int = 0
    tokens: int = 0
    cost_usd: float | None = None
    detail: str | None = None


@dataclass
class _State:
    task_text: str
    steps: list[StepRecord] = field(default_factory=list)
    memory: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    invalid_in_row: int = 0
    actions: list[ParsedAction] = field(default_factory=list)


class Episode:
    """Drives one task in its own browser context and records it in stream ``{run_id}/{episode_id}``."""

    def __init__(
        self,
        task: Task,
        *,
        run_id: str,
        episode_id: str,
        store: EventStore,
        browser: Environment,
        llm: LlmClient,
        retriever: HistoryRetriever | None,
        config: AgentConfig,
        fork: ForkPoint | None = None,
    ) -> None:
        self.task = task
        self.fork = fork
        self.episode_id = episode_id
        self.browser = browser
        self.config = config
        self.log = EpisodeWriter.of(run_id, episode_id, store)
        self.stream = self.log.stream
        self.llm = llm.scoped(self.log.record_llm_call)
        self.memory = (
            Personalization(retriever, task.persona, self.llm, self.log, config.k, config.threshold)
            if retriever is not None and config.scheme != "no-history"
            else None
        )
        self._step = 0
        """The step in progress: an episode that an error or an interruption ends records the steps before it."""

    async def run(self) -> EpisodeOutcome:
        self.log.add(
            episode_started(
                self.task,
                episode_id=self.episode_id,
                scheme=self.config.scheme,
                source_file=self.task.path,
                fork=self.fork,
            ),
            causation_id=self.fork.source_event_id if self.fork else None,
        )
        await self.log.flush()
        with scratch_folder("har") as tmp:
            tab = await self.browser.new_context(
                har_path=tmp / "episode.har",
                settings=EpisodeSettings(
                    max_chars=self.config.observation_chars,
                    navigation_timeout_s=self.config.page_timeout_s,
                    har_content="embed" if self.config.har_bodies else "omit",
                ),
            )
            reason: EndReason = "error"
            answer: str | None = None
            detail: str | None = None
            try:
                await self.log.settle()
                opened = await tab.execute(ParsedAction(name="goto", args=[self.task.start_url]))
                if opened.error:
                    raise RuntimeError(f"start page {self.task.start_url} did not load: {opened.error}")
                state = _State(task_text=self.task.intent)
                if self.config.scheme == "pre-execution" and self.memory is not None:
                    state.task_text = await self._pre_execution(state)
                    await self.log.flush()
                reason, answer, step, detail = await self._navigate(tab, state)
            except (LlmError, SeamDiverged, BrowserGone) as exc:
                reason, step, detail = "error", self._completed(), str(exc)
            except asyncio.CancelledError:
                reason, step, detail = "aborted", self._completed(), "run interrupted"
                await self._finish(tab, reason, answer, step, detail)
                raise
            except (StoreUnavailable, StreamEnded):  # nothing can be recorded (or no longer here): said by the caller
                raise
            except Exception as exc:  # the run goes on with the next episode; the log keeps what happened
                log.exception("episode failed", task_id=self.task.task_id)
                reason, step, detail = "error", self._completed(), f"{exc.__class__.__name__}: {exc}"
            await self._finish(tab, reason, answer, step, detail)
        totals = self.llm.totals
        return EpisodeOutcome(
            self.stream, self.task.task_id, reason, answer, step, totals.total_tokens, totals.cost_usd, detail
        )

    def _completed(self) -> int:
        """The steps before the one in progress, as ``blocked`` counts them."""
        return max(self._step - 1, 0)

    async def _pre_execution(self, state: _State) -> str:
        """Ask up to N history questions before the first step, then rewrite the task with the answers."""
        assert self.memory is not None
        reply = await self.llm.complete(
            "planner", pre_execution_messages(state.task_text, self.config.max_pre_queries), step=0
        )
        queries = parse_queries(reply.text, self.config.max_pre_queries)
        for query in queries:
            found = await self.memory.ask(query, step=0, phase="pre-execution", reason="pre-execution planning")
            state.memory.append((query, found.answer))
        if not state.memory:
            return state.task_text
        rewritten = parse_rewrite(
            (await self.llm.complete("planner", rewrite_messages(state.task_text, state.memory), step=0)).text,
            state.task_text,
        )
        self.log.add(Rationale(step=0, source="planner", text=f"Rewritten task: {rewritten}"))
        return rewritten

    async def _navigate(self, tab: EpisodeTab, state: _State) -> tuple[EndReason, str | None, int, str | None]:
        system = planner_system(self.config.scheme if self.memory else "no-history")
        for step in range(1, self.config.max_steps + 1):
            self._step = step
            seen = await tab.observe()
            self.log.add(
                Observation(
                    step=step,
                    url=seen.url,
                    title=seen.title,
                    tabs=list(seen.tabs),
                    ax_tree=self.log.blob(seen.ax_text.encode()),
                    screenshot=self.log.blob(seen.screenshot_png) if seen.screenshot_png else None,
                )
            )
            if seen.blocked:
                await self.log.flush()
                return "blocked", None, step - 1, seen.blocked
            page = page_text(seen.url, seen.title, seen.tabs, seen.ax_text)
            user = planner_user(state.task_text, page, step, state.steps[-8:], state.memory, state.notes)
            reply = await self.llm.complete(
                "planner", [{"role": "system", "content": system}, {"role": "user", "content": user}], step=step
            )
            thought = planner_thought(reply.text)
            if thought:
                self.log.add(Rationale(step=step, source="planner", text=thought))
            ended = await self._act(tab, state, step, thought, reply.text)
            await self.log.flush()
            if ended is not None:
                return ended[0], ended[1], step, ended[2]
        return "max_steps", None, self.config.max_steps, None

    async def _act(
        self, tab: EpisodeTab, state: _State, step: int, thought: str, reply: str
    ) -> tuple[EndReason, str | None, str | None] | None:
        """Execute one planned action; returns (end reason, answer, detail) when the episode ends."""
        try:
            text = extract_action(reply)
            action = parse_action(text)
        except ActionParseError as exc:
            return self._invalid(state, step, reply.strip()[-500:], None, str(exc))
        result = "ok"
        if action.name == "stop":
            answer = action.args[0] if action.args else ""
            self.log.add(Action(step=step, raw=text, parsed=action, status="executed"))
            return "answered", answer, None
        if action.name == "memory_access":
            if self.memory is None or self.config.scheme != "on-demand":
                return self._invalid(state, step, text, action, f"no history access under {self.config.scheme}")
            self.log.add(Action(step=step, raw=text, parsed=action, status="executed"))
            found = await self.memory.ask(action.args[0], step=step, phase="on-demand", reason=thought or None)
            state.memory.append((found.query, found.answer))
            result = f"{found.hits} history entries matched"
        elif action.name == "note":
            self.log.add(Action(step=step, raw=text, parsed=action, status="executed"))
            state.notes.append(action.args[0] if action.args else "")
        elif action.name in BROWSER_ACTIONS:
            await self.log.settle()  # the steps before it are stored before the browser acts
            executed = await tab.execute(action)
            self.log.add(Action(step=step, raw=text, parsed=action, status=executed.status, error=executed.error))
            if executed.status != "executed":
                return self._invalid(state, step, text, action, executed.error or executed.status, logged=True)
        else:
            return self._invalid(state, step, text, action, f"unknown action {action.name!r}")
        state.invalid_in_row = 0
        state.steps.append(StepRecord(step, thought, action.render(), result))
        state.actions.append(action)
        if repeated_action(state.actions, self.config.max_repeats):
            return "repeated_action", None, f"{action.render()} repeated {self.config.max_repeats} times"
        return None

    def _invalid(
        self,
        state: _State,
        step: int,
        text: str,
        action: ParsedAction | None,
        error: str,
        logged: bool = False,
    ) -> tuple[EndReason, str | None, str | None] | None:
        if not logged:
            self.log.add(Action(step=step, raw=text, parsed=action, status="invalid", error=error))
        state.invalid_in_row += 1
        state.steps.append(StepRecord(step, "", action.render() if action else text[:80], f"failed: {error}"))
        if state.invalid_in_row >= self.config.max_invalid:
            return "parse_failures", None, f"{state.invalid_in_row} invalid actions in a row; last: {error}"
        return None

    async def _finish(
        self, tab: EpisodeTab, reason: EndReason, answer: str | None, steps: int, detail: str | None
    ) -> None:
        """Record the final state (DOM, AX tree, screenshot, scrubbed HAR) and the end, whatever happened."""
        final_url = None
        try:
            final = await tab.final_state()
            if self.config.capture_links and reason == "answered" and answer:
                await record_captures(self.log, tab, answer)
            har = await tab.close()
            final_url = final.url
            self.log.add(final_state(self.log, final, har))
        except Exception as exc:  # a dead page must not lose the episode's end
            log.warning("final state not captured", task_id=self.task.task_id, error=str(exc))
            detail = f"{detail}; final state not captured: {exc}" if detail else f"final state not captured: {exc}"
        self.log.add(
            EpisodeFinished(
                end_reason=reason,
                answer=answer,
                final_url=final_url,
                steps=steps,
                detail=detail,
                cost_usd=self.llm.totals.cost_usd,
            )
        )
        await self.log.flush()
        await self.log.settle()

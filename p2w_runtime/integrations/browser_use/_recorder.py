"""A ``browser_use.Agent`` recorded step by step through the recording API, by Browser-Use's public seams only.

- **Observation** (URL, title, tabs, Browser-Use's own element tree as its model reads it, the viewport
  screenshot): the browser state the agent built for the step, read back with
  ``BrowserSession.get_browser_state_summary(cached=True)`` just before the step's first model call (no second
  capture), so the grammar's order observation -> planner call holds.
- **Model calls**: ``RecordedChatOpenAI`` is Browser-Use's ``ChatOpenAI`` whose ``get_client()`` returns an
  ``instrument``-ed ``openai.AsyncOpenAI``: every attempt is an ``llm.call``, keyed like the own client's.
- **Rationale**: ``register_new_step_callback`` gets the parsed model output before any action runs: thinking,
  evaluation of the previous goal, memory and next goal become the planner rationale.
- **Actions**: ``on_step_end`` reads the step's ``AgentHistory`` item: each action with its result.
- **History**: ``memory_tools`` registers a ``memory_access`` action (Persona2Web's personalization module as a
  Browser-Use tool) that searches p2w-rt's retriever (``history.query`` + ``history.retrieval``) and asks the
  generator (``rationale`` of the generator, citing entries).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import openai

from p2w_rt.schemas import ParsedAction
from p2w_runtime.agent import parse_generator
from p2w_runtime.agent.prompts import generator_messages
from p2w_runtime.recording import ROLE_HEADER, EpisodeRecorder, instrument
from p2w_runtime.retrieval import HistoryRetriever

if TYPE_CHECKING:
    from browser_use import Agent, ChatOpenAI, Tools

BROWSER_USE_VERSION = "0.13.14"
"""The Browser-Use release this integration reads (its hooks, history items and browser state); see
docs/design/browser-use.md for why it is installed without its own pins."""
NAMES = {"navigate": "goto", "done": "stop", "input": "type", "search": "search_engine"}
"""Browser-Use action names in the own agent's vocabulary where they mean the same (diff and classify compare
action names across agents); the others are kept as Browser-Use calls them."""
MEMORY_ACTION = "memory_access"


def check_version() -> None:
    """Refuse another Browser-Use than the one this integration was written against, naming both."""
    from importlib.metadata import PackageNotFoundError, version

    from p2w_runtime.errors import UserError

    try:
        found = version("browser-use")
    except PackageNotFoundError:
        raise UserError(
            f"--agent browser-use needs browser-use=={BROWSER_USE_VERSION}: "
            f"pip install 'p2w-rt[browser-use]' && pip install --no-deps browser-use=={BROWSER_USE_VERSION}"
        ) from None
    if found != BROWSER_USE_VERSION:
        raise UserError(f"browser-use {found} is installed; this integration reads {BROWSER_USE_VERSION}")


def recorded_chat(client: openai.AsyncOpenAI, model: str, before_call: Callable[[], Awaitable[None]]) -> ChatOpenAI:
    """Browser-Use's ``ChatOpenAI`` on ``instrument(client)``, calling ``before_call`` before each model call."""
    from browser_use import ChatOpenAI

    recorded = instrument(client)

    class RecordedChatOpenAI(ChatOpenAI):
        def get_client(self) -> openai.AsyncOpenAI:
            return recorded

        async def ainvoke(self, messages: Any, output_format: Any = None, **kwargs: Any) -> Any:
            await before_call()
            return await super().ainvoke(messages, output_format, **kwargs)

    # temperature 0 like the own agent's planner; frequency_penalty off: scripted and local models ignore it
    return RecordedChatOpenAI(model=model, temperature=0.0, frequency_penalty=None, max_retries=client.max_retries)


@dataclass
class StepRecorder:
    """The hooks of one Browser-Use episode: ``observe_step`` to ``recorded_chat``, ``on_model_output`` to
    ``Agent(register_new_step_callback=...)``, ``on_step_end`` to ``Agent.run``."""

    episode: EpisodeRecorder
    agent: Agent[Any, Any] | None = None
    _observed: int = -1

    async def observe_step(self) -> None:
        """Record the browser state Browser-Use built for its current step, once per step."""
        agent = self.agent
        if agent is None or agent.browser_session is None or agent.state.n_steps == self._observed:
            return
        self._observed = agent.state.n_steps
        state = await agent.browser_session.get_browser_state_summary(include_screenshot=True, cached=True)
        await self.episode.observe(
            url=state.url,
            title=state.title,
            tabs=[f"{tab.title} ({tab.url})" for tab in state.tabs],
            ax_tree=state.dom_state.llm_representation(),
            screenshot=base64.b64decode(state.screenshot) if state.screenshot else None,
        )

    async def on_model_output(self, _state: Any, output: Any, _step: int) -> None:
        """Record the planner's reasoning as soon as its answer is parsed, before its actions run."""
        if self._observed >= 0 and self.episode.finished is None and (text := rationale_text(output)):
            await self.episode.rationale(text)

    async def on_step_end(self, agent: Agent[Any, Any]) -> None:
        """Record each action of the step with its result (or the step's error when the model gave none)."""
        if not agent.history.history or self._observed < 0 or self.episode.finished is not None:
            return
        item = agent.history.history[-1]
        output = item.model_output
        if output is None:  # the model's answer never parsed: the step's error is its action
            error = next((r.error for r in item.result if r.error), None) or "no model output"
            await self.episode.action("(no action)", status="invalid", error=error[:2000])
            return
        for index, action in enumerate(output.action):
            call = action.model_dump(exclude_unset=True, mode="json")
            name, params = next(iter(call.items())) if call else ("(empty)", {})
            result = item.result[index] if index < len(item.result) else None
            failed = result.error if result is not None else "not executed: an earlier action ended the step"
            await self.episode.action(
                json.dumps(call, ensure_ascii=False, sort_keys=True),
                ParsedAction(name=NAMES.get(name, name), args=_args(params)),
                status="invalid" if failed else "executed",
                error=failed[:2000] if failed else None,
            )


def rationale_text(output: Any) -> str:
    """The model's reasoning fields of one Browser-Use step, labelled, in the order it writes them."""
    parts = [
        ("Thinking", output.thinking),
        ("Evaluation", output.evaluation_previous_goal),
        ("Memory", output.memory),
        ("Next goal", output.next_goal),
    ]
    return "\n".join(f"{label}: {value}" for label, value in parts if value)


def _args(params: Any) -> list[str]:
    if not isinstance(params, dict):
        return [str(params)]
    return [v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for v in params.values() if v is not None]


def memory_tools(
    tools: Tools[Any],
    episode: EpisodeRecorder,
    retriever: HistoryRetriever | Callable[[], HistoryRetriever],
    client: openai.AsyncOpenAI,
    model: str,
) -> None:
    """Register ``memory_access``: p2w-rt's retriever and generator as a Browser-Use action, recorded."""
    from browser_use import ActionResult

    answering = instrument(client, role="generator")

    @tools.action(
        "Ask the user's browsing/purchase history a question about their habits or preferences "
        "(which site they use, sizes, brands, diet, budget) before choosing for them."
    )
    async def memory_access(query: str) -> ActionResult:
        hits = await episode.retrieve(retriever, query)
        reply = await answering.chat.completions.create(
            model=model,
            messages=generator_messages(query, hits),  # type: ignore[arg-type]  # plain role/content dicts
            temperature=0.0,
            extra_headers={ROLE_HEADER: "generator"},
        )
        parsed = parse_generator(reply.choices[0].message.content or "", {h.entry_id for h in hits})
        await episode.memory_answer(parsed.answer, parsed.cited)
        said = f"History answer for {query!r}: {parsed.answer}"
        return ActionResult(extracted_content=said, long_term_memory=said)

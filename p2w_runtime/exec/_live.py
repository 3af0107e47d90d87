"""The live model a forked outside agent is answered by from its fork step on (``fork --exec``).

The agent's request, whatever API it used, is read as model, messages and params (``read_request``) and asked of
the live model as a chat completion with the ``openai`` client; the answer is rendered back in the format the agent
asked for (chat or Responses, streamed or not), as the replay endpoint renders a recorded one.
"""

from __future__ import annotations

from dataclasses import dataclass

import openai

from p2w_rt.schemas import LlmUsage
from p2w_runtime.llm import Completion, WireRequest


@dataclass(frozen=True, slots=True)
class LiveModel:
    """Where the live part goes: ``base_url``, the model (None: the one the agent names), the key (never stored)."""

    base_url: str | None
    model: str | None
    api_key: str | None

    async def answer(self, client: openai.AsyncOpenAI, wire: WireRequest) -> Completion:
        said = await client.chat.completions.create(
            model=self.model or wire.model,
            messages=wire.messages,  # type: ignore[arg-type]  # plain role/content dicts, as recorded
            **wire.params,
        )
        choice = said.choices[0]
        u = said.usage
        usage = None
        if u is not None:
            usage = LlmUsage(
                prompt_tokens=u.prompt_tokens, completion_tokens=u.completion_tokens, total_tokens=u.total_tokens
            )
        return Completion(choice.message.content or "", choice.finish_reason, usage, said.model)

    def client(self) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(base_url=self.base_url, api_key=self.api_key or "unset", max_retries=2)

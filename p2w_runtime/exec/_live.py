"""The live model a forked outside agent is answered by from its fork step on (``fork --exec``).

The agent's request, whatever API it used, is read as model, messages and params (``read_request``) and asked of
the live model as a chat completion with the ``openai`` client; the answer is rendered back in the format the agent
asked for (chat or Responses, streamed or not), as the replay endpoint renders a recorded one. Each attempt must be
answered whole within ``timeout_s`` and in at most 16 MiB (``LimitedTransport``, the limits of p2w-rt's own client);
what fails is answered to the agent as an HTTP error (``failed``), which it records as any failed call.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import httpx2
import openai

from p2w_rt.schemas import LlmUsage
from p2w_runtime.llm import BadResponse, Choice, Completion, LimitedTransport, WireRequest
from p2w_runtime.redaction import redact_text

LIVE_FAILED = (openai.APIError, httpx2.HTTPError, BadResponse)
"""What asking the live model can fail with: the endpoint's error or silence, too late, too large."""


@dataclass(frozen=True, slots=True)
class LiveModel:
    """Where the live part goes: ``base_url``, the model (None: the one the agent names), the key (never stored)."""

    base_url: str | None
    model: str | None
    api_key: str | None
    timeout_s: float = 120.0
    """Seconds per attempt, its whole answer included."""
    max_retries: int = 4

    async def answer(self, client: openai.AsyncOpenAI, wire: WireRequest) -> Completion:
        said = await client.chat.completions.create(
            model=self.model or wire.model,
            messages=wire.messages,  # type: ignore[arg-type]  # plain role/content dicts, as recorded
            **wire.params,
        )
        read = tuple(Choice(c.message.content or "", c.finish_reason) for c in said.choices)  # all n of them
        u = said.usage
        usage = None
        if u is not None:
            usage = LlmUsage(
                prompt_tokens=u.prompt_tokens, completion_tokens=u.completion_tokens, total_tokens=u.total_tokens
            )
        return Completion(read[0].text, read[0].finish_reason, usage, said.model, read if len(read) > 1 else ())

    def client(self) -> openai.AsyncOpenAI:
        limited = LimitedTransport(httpx2.AsyncHTTPTransport(), timeout_s=self.timeout_s)
        return openai.AsyncOpenAI(
            base_url=self.base_url,
            api_key=self.api_key or "unset",
            max_retries=self.max_retries,
            timeout=self.timeout_s,
            http_client=openai.DefaultAsyncHttpxClient(transport=limited),
        )

    def failed(self, exc: Exception) -> tuple[int, str]:
        """The HTTP status and OpenAI-style error body answering the agent when the live model failed: the
        endpoint's own status when it gave one, 504 when it was too late, else 502."""
        late = isinstance(exc, openai.APITimeoutError | httpx2.TimeoutException)
        status = exc.status_code if isinstance(exc, openai.APIStatusError) else 504 if late else 502
        why = f"timeout after {self.timeout_s:g}s" if late else f"{type(exc).__name__}: {exc}"
        said = redact_text(f"the live model failed: {why}")
        return status, json.dumps({"error": {"message": said, "type": "live_model_error"}})

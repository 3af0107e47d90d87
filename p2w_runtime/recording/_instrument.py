"""``instrument``: an OpenAI client (sync or async) whose model calls are recorded, the agent's code unchanged."""

from __future__ import annotations

from typing import TypeVar

import httpx2
import openai

from p2w_rt.schemas import LlmRole
from p2w_runtime.llm import PriceTable
from p2w_runtime.recording._episode import EpisodeRecorder
from p2w_runtime.recording._replay import replay_url
from p2w_runtime.recording._transport import AsyncRecordingTransport, CallRecorder, RecordingTransport
from p2w_runtime.redaction import add_secret, add_url_credentials

Client = TypeVar("Client", openai.OpenAI, openai.AsyncOpenAI)


def instrument(
    client: Client,
    *,
    role: LlmRole = "planner",
    episode: EpisodeRecorder | None = None,
    prices: PriceTable | None = None,
) -> Client:
    """A copy of ``client`` (same key, endpoint, timeouts, retries) that records every model call into
    ``episode``, or, without it, into the episode open in the calling task (``async with run.episode(...)``).

    Calls are recorded as ``role`` unless a call says otherwise (header ``x-p2w-role``); calls made while no
    episode is open pass unrecorded. The key is registered for redaction and never written. Under
    ``p2w-rt rerun --exec`` (``P2W_REPLAY``) the copy asks p2w-rt's replay endpoint, which answers from the recording.
    """
    if (url := replay_url()) is not None:
        client = client.copy(base_url=f"{url.rstrip('/')}/v1")
    add_secret(client.api_key if isinstance(client.api_key, str) else None)
    add_url_credentials(str(client.base_url))
    calls = CallRecorder(role, episode, prices)
    if isinstance(client, openai.AsyncOpenAI):
        transport = AsyncRecordingTransport(httpx2.AsyncHTTPTransport(), calls)
        return client.copy(http_client=httpx2.AsyncClient(transport=transport, timeout=client.timeout))
    sync = RecordingTransport(httpx2.HTTPTransport(), calls)
    return client.copy(http_client=httpx2.Client(transport=sync, timeout=client.timeout))

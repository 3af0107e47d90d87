"""The local replay endpoint a re-executed agent talks to (``rerun --exec``), on 127.0.0.1, one episode at a time.

OpenAI-compatible where the agent's model client points (``OPENAI_BASE_URL`` = ``URL/v1``): chat completions and
the Responses API, streamed or not, answered from the recording through the same wire helpers the scripted server
speaks (``p2w_runtime.llm``). The recording API in replay mode (``P2W_REPLAY`` = ``URL``) asks the recorded
history retrievals at ``/p2w/retrieve`` and hands its episode's would-be events back at ``/p2w/episode``.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from p2w_runtime.exec._episode_replay import Answer, EpisodeReplay, refusal
from p2w_runtime.exec._local_server import MAX_BODY, serve_locally
from p2w_runtime.llm import Api, api_of
from p2w_runtime.recording import ROLE_HEADER
from p2w_runtime.rerun import Mismatch


class ReplayEndpoint:
    """``async with ReplayEndpoint() as endpoint``; ``endpoint.episode = EpisodeReplay(...)`` before each agent."""

    def __init__(self) -> None:
        self.episode: EpisodeReplay | None = None
        self._runner: web.AppRunner | None = None
        self._port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    async def __aenter__(self) -> ReplayEndpoint:
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_post("/v1/chat/completions", self._model_call)
        app.router.add_post("/v1/responses", self._model_call)
        app.router.add_post("/p2w/retrieve", self._retrieve)
        app.router.add_post("/p2w/episode", self._hand_back)
        self._runner, self._port = await serve_locally(app)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _model_call(self, request: web.Request) -> web.Response:
        read = await self._read(request)
        if isinstance(read, web.Response):
            return read
        episode, body = read
        api: Api | None = api_of(request.path)
        assert api is not None  # the two routes above
        answer = await episode.call(api, body, request.headers.get(ROLE_HEADER))
        return _response(answer)

    async def _retrieve(self, request: web.Request) -> web.Response:
        read = await self._read(request)
        if isinstance(read, web.Response):
            return read
        episode, body = read
        found = episode.retrieval(str(body.get("query", "")))
        if isinstance(found, Mismatch):
            said = f"step {found.step}: {found.kind}: recorded {found.recorded!r}, now {found.reexecuted!r}"
            return web.json_response({"error": said}, status=409)
        return web.json_response(found)

    async def _hand_back(self, request: web.Request) -> web.Response:
        read = await self._read(request)
        if isinstance(read, web.Response):
            return read
        episode, body = read
        events = body.get("events")
        if not isinstance(events, list):
            return _response(refusal(400, "an episode is handed back as {'events': [...]}"))
        episode.hand_back(events)
        return web.json_response({"events": len(events)})

    async def _read(self, request: web.Request) -> tuple[EpisodeReplay, dict[str, Any]] | web.Response:
        """The episode being re-executed and the request's JSON object, or the error answering it."""
        if self.episode is None:
            return _response(refusal(409, "no episode is being re-executed"))
        try:
            body = json.loads(await request.read())
        except (json.JSONDecodeError, UnicodeDecodeError):
            body = None
        if not isinstance(body, dict):
            return _response(refusal(400, "the request body is not a JSON object"))
        return self.episode, body


def _response(answer: Answer) -> web.Response:
    return web.Response(status=answer.status, text=answer.body, content_type=answer.content_type)

"""One action of an episode as ``EpisodeRecorder.action`` hands it out: recorded as given when awaited, or around
carrying it out (``async with``), with its outcome and how long it took."""

from __future__ import annotations

import asyncio
from collections.abc import Generator
from time import perf_counter
from typing import Literal, Protocol

from p2w_rt.schemas import ParsedAction
from p2w_runtime.recording._page import first_line

ActionStatus = Literal["executed", "invalid", "blocked"]


class Acting(Protocol):
    """What an action needs of its episode (``EpisodeRecorder``): the page read first, then the action recorded."""

    async def _observed(self) -> None: ...

    async def _act(self, call: ActionCall, duration_s: float | None) -> None: ...


class ActionCall:
    """One action of an episode: awaited, it is recorded as given; used with ``async with`` around carrying it
    out, it is recorded when the block ends, with its outcome and how long it took (``EpisodeRecorder.action``)."""

    def __init__(
        self, episode: Acting, raw: str, parsed: ParsedAction | None, status: ActionStatus, error: str | None
    ) -> None:
        self.episode, self.raw, self.parsed, self.status, self.error = episode, raw, parsed, status, error
        self._started: float | None = None

    def failed(self, error: str, *, status: ActionStatus = "invalid") -> None:
        """Say the action could not be carried out (``invalid``, or ``blocked`` by the site), without raising."""
        self.status, self.error = status, error

    def __await__(self) -> Generator[object, None, None]:
        return self.episode._act(self, None).__await__()

    async def __aenter__(self) -> ActionCall:
        await self.episode._observed()  # the page is read before the agent changes it
        self._started = perf_counter()
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None, _tb: object) -> None:
        if kind is not None and issubclass(kind, asyncio.CancelledError):
            return  # the episode ends as aborted; an action cut short has no outcome
        if exc is not None:
            self.failed(f"{type(exc).__name__}: {first_line(exc)}")
        started = self._started if self._started is not None else perf_counter()
        await self.episode._act(self, perf_counter() - started)

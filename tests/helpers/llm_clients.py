"""LLM clients a test module makes, closed when each test ends (``MadeClients``).

An ``LlmClient`` left open keeps its connection pool until the collector finds it, during whatever later test runs
then; closing the pool there, outside the loop it was made in, logs "Task exception was never retrieved ... Event loop
is closed" into that test's output, and a test that counts its command's stderr lines fails on it.
"""

from __future__ import annotations

from typing import Any

from p2w_runtime.llm import LlmClient


class MadeClients:
    """Makes ``LlmClient``s as the constructor does and keeps them, for ``aclose`` at the test's end."""

    def __init__(self) -> None:
        self._made: list[LlmClient] = []

    def __call__(self, *args: Any, **kwargs: Any) -> LlmClient:
        self._made.append(LlmClient(*args, **kwargs))
        return self._made[-1]

    async def aclose(self) -> None:
        while self._made:
            await self._made.pop().aclose()

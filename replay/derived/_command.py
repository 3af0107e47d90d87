"""What every family's entry takes (``run_family``): the LLM endpoint options, the pass switches and the settings
they make."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from p2w_rt.replay.derived._producer import LlmEndpoint, LlmFactory
from p2w_rt.replay.derived._settings import DEFAULT_MODEL, PassSettings

if TYPE_CHECKING:
    from p2w_runtime.llm import LlmClient


@dataclass(frozen=True, kw_only=True)
class PassOptions:
    """The endpoint, settings and pass switches every family's entry takes (a subclass adds its own)."""

    model: str = DEFAULT_MODEL
    base_url: str | None = None
    api_key: str | None = None
    temperature: float | None = None
    concurrency: int = 8
    llm_timeout_s: float = 120.0
    """Seconds each attempt of an LLM call may take, its whole answer included."""
    max_retries: int = 4
    force: bool = False
    retry_failed: bool = False
    as_json: bool = False
    plugins: tuple[object, ...] = ()
    """The plugins' settings, from their options (``Family.settings``)."""

    def settings(self) -> PassSettings:
        """The settings the producers configure themselves from."""
        return PassSettings(model=self.model, temperature=self.temperature, plugins=self.plugins)

    def llm_client(self) -> LlmClient:
        """A client for the endpoint, for the ``LlmFactory`` of a pass (built only when a producer needs it)."""
        from p2w_runtime.llm import LlmClient, RetryPolicy  # a pass of rules or cached results imports no client

        retry = RetryPolicy(max_retries=self.max_retries)
        return LlmClient(
            self.model, base_url=self.base_url, api_key=self.api_key, timeout_s=self.llm_timeout_s, retry=retry
        )

    @asynccontextmanager
    async def llm_factory(self) -> AsyncIterator[LlmFactory]:
        """An ``LlmFactory`` for the passes inside the block; the clients it built are closed when it ends."""
        made: list[LlmClient] = []

        def build() -> LlmEndpoint:
            made.append(self.llm_client())
            return made[-1]

        try:
            yield build
        finally:
            for client in made:
                await client.aclose()

"""The seams of a forked episode: the recording answers the steps before K, the live browser and LLM the rest.

The agent's loop runs from step 1 as it ran when recorded, so its state at step K (history, notes, memory
answers, the counters of early stops) is rebuilt by the same code that built it then, not by a copy of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from p2w_rt.schemas import LlmRole, ParsedAction
from p2w_runtime.browser import (
    CapturedPage,
    EpisodeBrowser,
    EpisodeSettings,
    ExecResult,
    FinalStateData,
    ObservationData,
)
from p2w_runtime.llm import Completion, LlmClient, UsageTotals
from p2w_runtime.rerun._environment import RecordedTab
from p2w_runtime.rerun._llm import recorded_completion
from p2w_runtime.rerun._mismatch import Divergence, Mismatch
from p2w_runtime.rerun._recorded import RecordedEpisode
from p2w_runtime.store import EventStore


@dataclass
class ForkGate:
    """Shared by the tab and the LLM: live from the observation of step ``at_step`` on."""

    at_step: int
    live: bool = False


class ForkTab:
    def __init__(
        self, live: EpisodeBrowser, source: RecordedEpisode, store: EventStore, gate: ForkGate, divergence: Divergence
    ) -> None:
        self.live = live
        self.recorded = RecordedTab(source, store, divergence)
        self.gate = gate

    async def observe(self) -> ObservationData:
        if self.recorded.step + 1 < self.gate.at_step:
            return await self.recorded.observe()
        self.recorded.step += 1
        self.gate.live = True
        return await self.live.observe()

    async def execute(self, action: ParsedAction) -> ExecResult:
        if not self.gate.live:  # the start page and steps < K: the browser is already on step K's page
            return await self.recorded.execute(action)
        return await self.live.execute(action)

    async def capture(self, urls: Sequence[str]) -> list[CapturedPage]:
        return await self.live.capture(urls)

    async def final_state(self) -> FinalStateData:
        return await self.live.final_state()

    async def close(self) -> bytes:
        return await self.live.close()


class ForkEnvironment:
    """Hands the episode the tab ``restore`` already brought to step K's page."""

    def __init__(self, tab: ForkTab) -> None:
        self.tab = tab

    async def new_context(
        self, *, har_path: str | Path | None = None, settings: EpisodeSettings | None = None
    ) -> ForkTab:
        return self.tab


class ForkLlm(LlmClient):
    """The live client, except that calls before step K get the recorded answers, in order.

    In order rather than by fingerprint: a fork may change the scheme or the prompts, which changes every
    request, while the decisions of the prefix must stay the recorded ones. Role and step must still agree
    with the recorded call, or the prefix is not the one recorded and the fork stops there.
    """

    def __init__(
        self,
        model: str,
        *,
        source: RecordedEpisode,
        source_model: str,
        gate: ForkGate,
        divergence: Divergence,
        **live: Any,
    ) -> None:
        self.gate = gate
        self.source_model = source_model
        super().__init__(model, **live)
        self.source = source
        self.divergence = divergence
        self._asked = 0
        self.served = UsageTotals()
        """The prefix's recorded answers served back: tokens the fork did not spend."""
        self._role: LlmRole | None = None
        self._step: int | None = None

    @property
    def model(self) -> str:
        """The recorded model answered the prefix (and its ``llm.call`` events say so); the live one the rest."""
        return self.live_model if self.gate.live else self.source_model

    @model.setter
    def model(self, value: str) -> None:
        self.live_model = value

    async def complete(self, role: LlmRole, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        self._role, self._step = role, kwargs.get("step")
        return await super().complete(role, messages, **kwargs)

    async def _send(self, messages: list[dict[str, Any]], params: dict[str, Any]) -> Completion:
        if self.gate.live:
            return await super()._send(messages, params)
        answered = self.source.answered
        call = answered[self._asked] if self._asked < len(answered) else None
        self._asked += 1
        if call is None or call.role != self._role or call.step != self._step:
            shown = f"{call.role} call at step {call.step}" if call else "no further call"
            raise self.divergence.raise_(
                Mismatch(self._step, "prompt changed", shown, f"{self._role} call at step {self._step}")
            )
        self.served.add(call)
        return recorded_completion(call)

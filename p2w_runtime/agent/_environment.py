"""The seam between the agent's decision loop and the world it acts on.

The loop in ``_episode.py`` only observes, acts, and reads the final state; a live Chromium
(``BrowserSession``) and a recorded episode (``p2w_runtime.rerun``) both provide that, so the
same loop records a run and re-executes it against its history (docs/design/rerun.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from p2w_rt.schemas import ParsedAction
from p2w_runtime.browser import CapturedPage, EpisodeSettings, ExecResult, FinalStateData, ObservationData


class EpisodeTab(Protocol):
    """What one episode acts on: ``EpisodeBrowser`` live, a recorded episode on rerun."""

    async def observe(self) -> ObservationData: ...

    async def execute(self, action: ParsedAction) -> ExecResult: ...

    async def capture(self, urls: Sequence[str]) -> list[CapturedPage]: ...

    async def final_state(self) -> FinalStateData: ...

    async def close(self) -> bytes: ...


class Environment(Protocol):
    """Where episodes get their tab: ``BrowserSession`` live, ``RecordedEnvironment`` on rerun."""

    async def new_context(
        self, *, har_path: str | Path | None = None, settings: EpisodeSettings | None = None
    ) -> EpisodeTab: ...


class SeamDiverged(Exception):
    """A stand-in environment or LLM cannot answer what the agent asks (a rerun that left its recording).

    The episode ends as an error without a traceback, like an LLM failure; the seam keeps the details.
    """

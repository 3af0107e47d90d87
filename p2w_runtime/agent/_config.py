"""The knobs of one recording run; all of them are recorded in ``run.started``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from p2w_rt.schemas import RunConfig, Scheme


@dataclass(frozen=True)
class AgentConfig:
    scheme: Scheme = "on-demand"
    max_steps: int = 25
    k: int = 20
    threshold: float = 0.5
    max_pre_queries: int = 5
    max_invalid: int = 3
    """Consecutive unparseable or impossible actions before the episode ends (parse_failures)."""
    max_repeats: int = 3
    """Equivalent actions in a row before the episode ends (WebArena's repeated-action rule)."""
    observation_chars: int = 12_000
    page_timeout_s: float = 15.0
    """Longest wait for a navigation; a page that hangs past it is stopped and the episode goes on."""
    capture_links: bool = False
    """Curation tasks (AgenticShop): at the end, fetch the answer's product links and record each page."""
    har_bodies: bool = False
    """Keep response bodies in the episode's HAR (``record --har``): ``fork --restore har`` serves the pages from it."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def recorded(cls, config: RunConfig) -> AgentConfig | None:
        """The settings a run was recorded with, None when its ``run.started`` holds none of them (an import);
        one it left out reads as ``RunConfig``'s default, which is this class's (tests/schemas/test_run_config.py)."""
        if not any(config.given(f.name) for f in fields(cls)):
            return None
        return cls(**{f.name: getattr(config, f.name) for f in fields(cls)})

"""What every judge is: an id, a version, a configuration that is hashed, and ``judge(trajectory)``.

A judgment is cached by (trajectory hash, judge id, judge version, config hash), so the
version must change whenever a judge's rules change, and ``config()`` must hold every
setting that can change a verdict (model, prompt template hash, parameters, site lists).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from p2w_runtime.errors import UserError
from replay.trajectory import Trajectory
from schemas import Evidence, content_hash

DEFAULT_JUDGE_MODEL = "gpt-5-mini"
DEFAULT_LOCATION_SITES: tuple[str, ...] = ("amazon.com", "instacart.com", "resy.com", "opentable.com")
"""Persona2Web's location-aware websites; ``default_location_sites`` adds the demo sites flagged location-aware."""


def default_location_sites() -> tuple[str, ...]:
    """Persona2Web's location-aware sites plus the bundled demo sites flagged ``location_aware``."""
    from p2w_runtime.sites.catalog import SITES

    return (*DEFAULT_LOCATION_SITES, *(site.host for site in SITES if site.location_aware))


class UnknownJudge(UserError):
    """``--judge ID`` names no registered judge."""


class JudgeError(Exception):
    """This trajectory cannot be judged (no ground truth, no task config...): recorded as a failed judgment."""


@dataclass(frozen=True)
class JudgeSettings:
    """Everything a user can set for a replay; each judge hashes the part it uses."""

    model: str = DEFAULT_JUDGE_MODEL
    temperature: float | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    location_sites: tuple[str, ...] = field(default_factory=default_location_sites)
    site_aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """The user's aliases (``replay.matching.site_aliases``), added to the built-in ``SITE_ALIASES``."""
    webarena_configs: str | None = None
    site_urls: Mapping[str, str] = field(default_factory=dict)
    agenticshop_profiles: str | None = None
    """AgenticShop user profiles (file or folder) for the checklist and hit-ratio judges."""
    sample: int = 0
    """Which of ``replay --samples N`` judgments this is: LLM judges hash it, so each sample is its own call."""

    def llm_params(self) -> dict[str, Any]:
        params = dict(self.params)
        if self.temperature is not None:
            params["temperature"] = self.temperature
        return params


@dataclass(slots=True)
class Verdict:
    """A judge's answer for one trajectory, before it becomes a ``judgment`` event."""

    points: dict[str, float] = field(default_factory=dict)
    max_points: dict[str, float] = field(default_factory=dict)
    evidence: dict[str, Evidence] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)
    status: str = "ok"
    error: str | None = None
    cost_usd: float | None = None

    def award(self, key: str, points: float, max_points: float, evidence: Evidence) -> None:
        self.points[key] = points
        self.max_points[key] = max_points
        self.evidence[key] = evidence

    @classmethod
    def failed(cls, error: str, cost_usd: float | None = None) -> Verdict:
        return cls(status="failed", error=error, cost_usd=cost_usd)


@dataclass(frozen=True, slots=True)
class CallEstimate:
    """What judging one trajectory would cost, for ``--dry-run``."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(slots=True)
class JudgeContext:
    """What a judge may use besides the trajectory: blobs of the store, and an LLM when it needs one."""

    get_blob: Callable[[str], Awaitable[bytes]]
    llm: Any = None
    """An ``LlmClient`` scoped to this judgment (its calls are recorded), or None when no judge needs one."""


class Judge(ABC):
    id: ClassVar[str]
    version: ClassVar[str]
    uses_llm: ClassVar[bool] = False
    description: ClassVar[str] = ""

    def __init__(self, settings: JudgeSettings) -> None:
        self.settings = settings

    @abstractmethod
    def config(self) -> dict[str, Any]:
        """The settings this judge's verdicts depend on (hashed into the cache key)."""

    def config_hash(self, task_id: str) -> str:
        """Per task, because some judges read per-task configuration (WebArena's eval blocks).

        It takes the task id, not the trajectory, so a cache check needs no trajectory loaded.
        """
        return content_hash({"judge": self.id, "config": self.config()})

    def needs_llm(self, trajectory: Trajectory) -> bool:
        return self.uses_llm

    def needs_io(self, trajectory: Trajectory) -> bool:
        """Whether judging waits on I/O (LLM, browser): such judgments run concurrently, the rest inline."""
        return self.needs_llm(trajectory)

    def estimate(self, trajectory: Trajectory) -> CallEstimate:
        return CallEstimate()

    @abstractmethod
    async def judge(self, trajectory: Trajectory, ctx: JudgeContext) -> Verdict:
        """Score one trajectory; raise ``JudgeError`` when it cannot be judged."""

    async def aclose(self) -> None:  # noqa: B027 - most judges open nothing
        """Release what the judge opened (a browser); called once after a batch."""

"""What every judge is: a producer (``replay.derived.Producer``) of ``judgment`` events.

A judgment is cached by (trajectory hash, judge id, judge version, config hash), so the version must
change whenever a judge's rules change; the config (a typed model, every field hashed) holds every setting
that can change a verdict (model, prompt template hash, parameters, site lists).
"""

from __future__ import annotations

import hashlib
from abc import abstractmethod
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import JsonValue, SerializerFunctionWrapHandler, model_serializer

from p2w_rt.replay.derived import CacheKey, PassSettings, ProduceContext, Producer, ProducerConfig, ProducerError
from p2w_rt.schemas import Evidence, Judgment
from p2w_runtime.domain.trajectory import Trajectory
from p2w_runtime.errors import UserError

ConfigT = TypeVar("ConfigT", bound=ProducerConfig)


class UnknownJudge(UserError):
    """``--judge ID`` names no registered judge."""


class JudgeError(ProducerError):
    """This trajectory cannot be judged (no ground truth, no task config...): recorded as a failed judgment."""


@dataclass(slots=True)
class Scorecard:
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
    def failed(cls, error: str, cost_usd: float | None = None) -> Scorecard:
        return cls(status="failed", error=error, cost_usd=cost_usd)


@dataclass(frozen=True, slots=True)
class CallEstimate:
    """What judging one trajectory would cost, for ``--dry-run``."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


JudgeContext = ProduceContext
"""What a judge may use besides the trajectory: blobs of the store, and an LLM scoped to this judgment."""


def template_hash(*templates: str) -> str:
    """The hash of an LLM producer's prompt templates, the ``prompt`` of its ``LlmConfig``: editing a template
    changes the config hash, so judgments made with the old prompt are no longer current."""
    return hashlib.sha256("\x00".join(templates).encode()).hexdigest()


def llm_fields(settings: PassSettings, prompt: str) -> dict[str, object]:
    """``LlmConfig``'s fields: the model, the hash of the prompt templates, the request parameters, the sample."""
    return {"model": settings.model, "prompt": prompt, "params": settings.llm_params(), "sample": settings.sample}


class LlmConfig(ProducerConfig):
    """What an LLM producer's answer depends on: the model, the prompt (hash of its templates), parameters."""

    model: str
    prompt: str
    params: dict[str, JsonValue]
    sample: int = 0
    """Which of ``replay --samples N`` this is: each sample has its own key, so its own call. The first (0) is
    left out of the dump, so the keys of judgments made before samples existed stay valid."""

    @model_serializer(mode="wrap")
    def _without_first_sample(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not self.sample:
            data.pop("sample", None)
        return data


class Judge(Producer[PassSettings, ConfigT, Scorecard]):
    """A producer of ``judgment`` events: points, evidence and the normalized metrics."""

    kind = "judge"

    def estimate(self, trajectory: Trajectory) -> CallEstimate:
        return CallEstimate()

    async def produce(self, trajectory: Trajectory, ctx: ProduceContext) -> Scorecard:
        return await self.judge(trajectory, ctx)

    @abstractmethod
    async def judge(self, trajectory: Trajectory, ctx: ProduceContext) -> Scorecard:
        """Score one trajectory; raise ``JudgeError`` when it cannot be judged."""

    def failed(self, error: str, cost_usd: float | None) -> Scorecard:
        return Scorecard.failed(error, cost_usd)

    def payload(self, trajectory: Trajectory, key: CacheKey, verdict: Scorecard) -> Judgment:
        return Judgment.model_validate(
            {
                **self.keyed(trajectory, key, verdict.status, verdict.error),
                "points": verdict.points,
                "max_points": verdict.max_points,
                "evidence": verdict.evidence,
                "metrics": verdict.metrics,
                "cost_usd": verdict.cost_usd,
            }
        )

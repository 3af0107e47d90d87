"""Payloads of derived results (judgments, classifications, counterfactual retrievals): one per episode and
producer, written by a replay pass, never by the agent (docs/design/derived.md)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from p2w_rt.schemas._payload_base import Payload


class Evidence(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    event_ids: list[str] = Field(default_factory=list)
    text: str = ""
    note: str = ""


class Judgment(Payload):
    type: Literal["judgment"] = "judgment"
    episode_stream: str
    task_id: str
    trajectory_hash: str
    judge_id: str
    judge_version: str
    config_hash: str
    status: Literal["ok", "failed"] = "ok"
    points: dict[str, float] = Field(default_factory=dict)
    max_points: dict[str, float] = Field(default_factory=dict)
    evidence: dict[str, Evidence] = Field(default_factory=dict)
    metrics: dict[str, float] = Field(default_factory=dict)
    cost_usd: float | None = None
    error: str | None = None


class ErrorLabel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    label: str
    explanation: str
    evidence: Evidence = Field(default_factory=Evidence)


class ErrorClassified(Payload):
    type: Literal["error.classified"] = "error.classified"
    episode_stream: str
    task_id: str
    trajectory_hash: str
    classifier_id: str
    classifier_version: str
    config_hash: str
    labels: list[ErrorLabel]
    status: Literal["ok", "failed"] = "ok"
    error: str | None = None


class TargetRecall(BaseModel):
    """One ground-truth value (website, preference, location) and whether each retrieval surfaced it."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    name: str
    stated_in_query: bool
    recorded: bool
    counterfactual: bool


class RetrievalCounterfactual(Payload):
    """The episode's recorded history queries searched again with another retriever (``replay --retriever``)."""

    type: Literal["retrieval.counterfactual"] = "retrieval.counterfactual"
    episode_stream: str
    task_id: str
    trajectory_hash: str
    retrieval_id: str
    retrieval_version: str
    config_hash: str
    retriever: dict[str, Any] = Field(description="model_id, k and threshold of the counterfactual retriever.")
    status: Literal["ok", "failed"] = "ok"
    queries: int = 0
    targets: list[TargetRecall] = Field(default_factory=list)
    hits_recorded: int = 0
    hits_counterfactual: int = 0
    hits_gained: int = Field(default=0, description="Entries retrieved only by the counterfactual, summed per query.")
    hits_lost: int = Field(default=0, description="Entries retrieved only in the recording, summed per query.")
    labels_removed: list[str] = Field(default_factory=list)
    labels_added: list[str] = Field(default_factory=list)
    error: str | None = None

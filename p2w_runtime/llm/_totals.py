"""Token and cost sums over recorded calls, for an episode, a run, or a whole database."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol


class TokenCounts(Protocol):
    """What the fold and pricing read of a call's usage (``LlmUsage``, or the fields a reader decoded alone)."""

    @property
    def prompt_tokens(self) -> int: ...
    @property
    def completion_tokens(self) -> int: ...


class CallUsage(Protocol):
    """What the fold reads of a call: an ``LlmCall`` payload, or a reader's lighter record of one (the viewer
    decodes only these fields of a run's thousands of calls)."""

    @property
    def response(self) -> str | None: ...
    @property
    def error(self) -> str | None: ...
    @property
    def usage(self) -> TokenCounts | None: ...
    @property
    def cost_usd(self) -> float | None: ...


@dataclass(slots=True)
class UsageTotals:
    """Folds ``llm.call`` payloads: ``calls`` are attempts that got an answer (tokens were spent, even if the
    answer was then rejected as malformed); attempts that got none count only in ``attempts``/``failed_attempts``.

    ``unpriced_calls`` says how many answered calls had no cost (unknown model or no usage),
    so a total is never silently presented as complete.
    """

    calls: int = 0
    attempts: int = 0
    failed_attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    priced_cost_usd: float = 0.0
    unpriced_calls: int = 0

    @classmethod
    def of(cls, calls: Iterable[CallUsage]) -> UsageTotals:
        totals = cls()
        for call in calls:
            totals.add(call)
        return totals

    def add(self, call: CallUsage) -> None:
        self.attempts += 1
        if call.error is not None:
            self.failed_attempts += 1
        if call.response is None:
            return
        self.calls += 1
        if call.usage is not None:
            self.prompt_tokens += call.usage.prompt_tokens
            self.completion_tokens += call.usage.completion_tokens
        if call.cost_usd is None:
            self.unpriced_calls += 1
        else:
            self.priced_cost_usd += call.cost_usd

    def merge(self, other: UsageTotals) -> UsageTotals:
        """Sum of two totals (episodes into a run)."""
        return UsageTotals(
            calls=self.calls + other.calls,
            attempts=self.attempts + other.attempts,
            failed_attempts=self.failed_attempts + other.failed_attempts,
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            priced_cost_usd=self.priced_cost_usd + other.priced_cost_usd,
            unpriced_calls=self.unpriced_calls + other.unpriced_calls,
        )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cost_usd(self) -> float | None:
        """What ``EpisodeFinished.cost_usd`` / ``RunFinished.cost_usd`` carry: None when no answered call was priced."""
        return self.priced_cost_usd if self.calls > self.unpriced_calls else None

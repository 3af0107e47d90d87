"""Time, tokens and cost of a run's episodes: the run page's usage chart and columns, and ``/api/run/RUN/usage``.

One scan of the run's ``episode.started``, ``episode.finished`` and ``llm.call`` events. An episode's time is
the span from its ``episode.started`` to its ``episode.finished`` (as recorded); its tokens and cost are the sums
of its calls (``UsageTotals``, the fold ``record`` reports with). A call recorded without a cost (a model the
recorder had no price for, an imported run) is priced from its recorded usage by the price table the recorder
uses (``PriceTable.default()``: the built-in one, extended by ``$P2W_PRICES``), so an old run's cost shows once
its model has a price; a call that neither carries a cost nor has a price stays unpriced and is counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from p2w_runtime.domain import RunInfo, under
from p2w_runtime.llm import PriceTable, UsageTotals
from p2w_runtime.store import EventStore
from schemas import LlmCall

USAGE_TYPES = ("episode.started", "episode.finished", "llm.call")


@dataclass(slots=True)
class Usage:
    """LLM calls summed: answered ``calls`` (tokens spent) of ``attempts``; ``cost_usd`` is None when no answered
    call could be priced, ``unpriced_calls`` says how many were not, ``table_priced_calls`` how many were priced
    here from their usage rather than by the recorder."""

    calls: int = 0
    attempts: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens: int = 0
    cost_usd: float | None = None
    unpriced_calls: int = 0
    table_priced_calls: int = 0
    llm_seconds: float = 0.0
    """Summed latency of the calls: the time spent waiting for the model."""

    @classmethod
    def of(cls, calls: Iterable[_Priced]) -> Usage:
        listed = list(calls)
        totals = UsageTotals.of(p.call for p in listed)
        return cls(
            calls=totals.calls,
            attempts=totals.attempts,
            prompt_tokens=totals.prompt_tokens,
            completion_tokens=totals.completion_tokens,
            tokens=totals.total_tokens,
            cost_usd=totals.cost_usd,
            unpriced_calls=totals.unpriced_calls,
            table_priced_calls=sum(p.from_table for p in listed),
            llm_seconds=sum(p.call.latency_s for p in listed),
        )


@dataclass(frozen=True, slots=True)
class _Priced:
    """A call with the cost it was recorded with, or else the one its usage costs by the price table."""

    call: LlmCall
    from_table: bool

    @classmethod
    def of(cls, call: LlmCall, prices: PriceTable) -> _Priced:
        if call.cost_usd is None and call.response is not None:
            cost = prices.cost(call.model, call.usage)
            if cost is not None:
                return cls(call.model_copy(update={"cost_usd": cost}), True)
        return cls(call, False)


@dataclass(slots=True)
class EpisodeUsage:
    """One counted episode's time and usage, in the run page's order (``index``)."""

    index: int
    episode_id: str
    task_id: str
    started_at: str
    seconds: float | None
    """From ``episode.started`` to ``episode.finished``; None while it runs."""
    steps: int
    usage: Usage


@dataclass(slots=True)
class RunUsageSummary:
    """The run's totals: its counted episodes, the attempts that do not count (retried, aborted, running), and
    the derived passes (an LLM judge's or classifier's calls)."""

    episodes: Usage
    seconds: float
    """The counted episodes' times summed."""
    other_attempts: Usage
    derived: Usage
    unpriced_models: list[str]
    """Models with answered calls that carry no cost and have no price in the table."""


@dataclass(slots=True)
class RunUsage:
    run_id: str
    label: str
    summary: RunUsageSummary
    episodes: list[EpisodeUsage] = field(default_factory=list)

    def by_stream(self) -> dict[str, EpisodeUsage]:
        prefix = under(self.run_id)
        return {prefix + e.episode_id: e for e in self.episodes}


@dataclass(slots=True)
class _Stream:
    task_id: str = ""
    started_at: str = ""
    finished_at: str | None = None
    steps: int = 0
    calls: list[_Priced] = field(default_factory=list)


def _seconds(start: str, end: str | None) -> float | None:
    if not start or end is None:
        return None
    return max(0.0, (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds())


async def read_usage(store: EventStore, info: RunInfo, counted: Mapping[str, int]) -> RunUsage:
    """``counted``: the stream of each episode that counts, with its index on the run page."""
    prices = PriceTable.default()
    streams: dict[str, _Stream] = {}
    async for stored in store.read_all(stream_prefix=under(info.run_id), types=USAGE_TYPES):
        s = streams.setdefault(stored.stream, _Stream())
        if stored.type == "llm.call":
            payload = stored.decode_payload()
            assert isinstance(payload, LlmCall)
            s.calls.append(_Priced.of(payload, prices))
        elif stored.type == "episode.started":
            s.started_at = stored.recorded_at
            s.task_id = str(stored.payload.get("task_id", ""))
        elif s.finished_at is None:
            s.finished_at = stored.recorded_at
            s.steps = int(stored.payload.get("steps", 0))
    prefix = under(info.run_id)
    episodes = sorted(
        (
            EpisodeUsage(
                counted[name],
                name[len(prefix) :],
                s.task_id,
                s.started_at,
                _seconds(s.started_at, s.finished_at),
                s.steps,
                Usage.of(s.calls),
            )
            for name, s in streams.items()
            if name in counted
        ),
        key=lambda e: e.index,
    )
    groups: dict[str, list[_Priced]] = {"counted": [], "other": [], "derived": []}
    for name, s in streams.items():
        groups["counted" if name in counted else "other" if s.started_at else "derived"] += s.calls
    calls = [p.call for s in streams.values() for p in s.calls]
    unpriced = {c.model for c in calls if c.response is not None and c.cost_usd is None}
    summary = RunUsageSummary(
        episodes=Usage.of(groups["counted"]),
        seconds=sum(e.seconds or 0.0 for e in episodes),
        other_attempts=Usage.of(groups["other"]),
        derived=Usage.of(groups["derived"]),
        unpriced_models=sorted(unpriced),
    )
    return RunUsage(info.run_id, info.label, summary, episodes)

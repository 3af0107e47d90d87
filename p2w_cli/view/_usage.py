"""Time, tokens and cost of a run's episodes: the run page's usage chart and columns, and ``/api/run/RUN/usage``.

One scan of the run's ``episode.started``, ``episode.finished`` and ``llm.call`` events. An episode's time is
the span from its ``episode.started`` to its ``episode.finished`` (as recorded); its tokens and cost are the sums
of its calls (``UsageTotals``, the fold ``record`` reports with). Of a call only the six fields summed are
decoded (``msgspec``, typed as the payload model types them; an older schema version goes through the model):
a 1,000-episode run has 30,000 calls, and validating each whole payload tripled the scan (docs/design/view.md).
A call recorded without a cost (a model the recorder had no price for, an imported run) is priced from its
recorded usage by the price table the recorder uses (``PriceTable.default()``: the built-in one, extended by
``$P2W_PRICES``), so an old run's cost shows once its model has a price; a call that neither carries a cost nor
has a price stays unpriced and is counted.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime

import msgspec

from p2w_rt.schemas import CURRENT_VERSIONS, LlmCall, StoredEvent
from p2w_runtime.domain import RunInfo, under
from p2w_runtime.llm import PriceTable, UsageTotals
from p2w_runtime.store import EventStore

USAGE_TYPES = ("episode.started", "episode.finished", "llm.call")


class _Tokens(msgspec.Struct, frozen=True):
    prompt_tokens: int = 0
    completion_tokens: int = 0


class _Call(msgspec.Struct, frozen=True):
    """The fields of an ``llm.call`` payload that usage sums."""

    model: str
    latency_s: float
    usage: _Tokens | None = None
    response: str | None = None
    error: str | None = None
    cost_usd: float | None = None


_DECODE = msgspec.json.Decoder(_Call)
_READ_AS_IS = {1, CURRENT_VERSIONS["llm.call"]}
"""The ``llm.call`` versions this record reads as stored: version 2 added ``choices`` only, which it does not keep."""


def _call(stored: StoredEvent) -> _Call:
    if stored.schema_version in _READ_AS_IS:
        try:
            return _DECODE.decode(stored.payload_json)
        except msgspec.MsgspecError:
            pass  # the payload model says what is wrong, or reads it after all
    p = stored.decode_payload()
    assert isinstance(p, LlmCall)
    tokens = _Tokens(p.usage.prompt_tokens, p.usage.completion_tokens) if p.usage is not None else None
    return _Call(p.model, p.latency_s, tokens, p.response, p.error, p.cost_usd)


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
    def of(cls, folded: _Fold) -> Usage:
        totals = folded.totals
        return cls(
            calls=totals.calls,
            attempts=totals.attempts,
            prompt_tokens=totals.prompt_tokens,
            completion_tokens=totals.completion_tokens,
            tokens=totals.total_tokens,
            cost_usd=totals.cost_usd,
            unpriced_calls=totals.unpriced_calls,
            table_priced_calls=folded.table_priced,
            llm_seconds=folded.latency,
        )


@dataclass(slots=True)
class _Fold:
    """Calls folded as they are read: ``UsageTotals`` of the calls, each priced by the table when it carries no
    cost, and what ``Usage`` adds to it."""

    totals: UsageTotals = field(default_factory=UsageTotals)
    table_priced: int = 0
    latency: float = 0.0
    unpriced: set[str] = field(default_factory=set)
    """Models of answered calls neither recorded with a cost nor in the price table."""

    def add(self, call: _Call, prices: PriceTable) -> None:
        cost = prices.call_cost(call)
        if call.cost_usd is None and cost is not None:
            call = msgspec.structs.replace(call, cost_usd=cost)
            self.table_priced += 1
        if cost is None and call.response is not None:
            self.unpriced.add(call.model)
        self.totals.add(call)
        self.latency += call.latency_s

    def merge(self, other: _Fold) -> _Fold:
        return _Fold(
            self.totals.merge(other.totals),
            self.table_priced + other.table_priced,
            self.latency + other.latency,
            self.unpriced | other.unpriced,
        )


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
    """The run's totals: its counted episodes, the episodes in flight (being recorded), the attempts that do not
    count (retried, aborted, left unfinished), and the derived passes (an LLM judge's or classifier's calls)."""

    episodes: Usage
    seconds: float
    """The counted episodes' times summed."""
    in_flight: Usage
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
    in_flight: dict[str, EpisodeUsage] = field(default_factory=dict)
    """By stream: the usage so far of each episode being recorded (``index`` -1: not on the page's list yet)."""

    def by_stream(self) -> dict[str, EpisodeUsage]:
        prefix = under(self.run_id)
        return {prefix + e.episode_id: e for e in self.episodes}


Flat = tuple[str, str, str | None, int, int, int, int, int, int, float, int, int, float, list[str]]
"""A stream's fold as one flat tuple, what ``_usage_kept`` stores: a tuple decodes far faster than nested objects
(docs/design/view.md, "The first open")."""


@dataclass(slots=True)
class _Stream:
    task_id: str = ""
    started_at: str = ""
    finished_at: str | None = None
    steps: int = 0
    calls: _Fold = field(default_factory=_Fold)

    def flat(self) -> Flat:
        c, t = self.calls, self.calls.totals
        return (
            *(self.task_id, self.started_at, self.finished_at, self.steps),
            *(t.calls, t.attempts, t.failed_attempts, t.prompt_tokens, t.completion_tokens),
            *(t.priced_cost_usd, t.unpriced_calls, c.table_priced, c.latency, sorted(c.unpriced)),
        )

    @classmethod
    def of_flat(cls, f: Flat) -> _Stream:
        totals = UsageTotals(
            calls=f[4],
            attempts=f[5],
            failed_attempts=f[6],
            prompt_tokens=f[7],
            completion_tokens=f[8],
            priced_cost_usd=f[9],
            unpriced_calls=f[10],
        )
        return cls(f[0], f[1], f[2], f[3], _Fold(totals, f[11], f[12], set(f[13])))


def _seconds(start: str, end: str | None) -> float | None:
    if not start or end is None:
        return None
    return max(0.0, (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds())


class UsageScan:
    """A run's usage events folded so far and the log position read up to. The log is append-only and a SQLite
    store commits positions in order, so ``catch_up`` reads only what was appended since: a viewer whose log moved
    (a run being recorded, any append to any run) folds the new events, not the run's 30,000 calls again."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.position = 0
        self.folded = 0
        """How many events this scan has folded: whether a catch-up changed it (its position moves with any append)."""
        self.prices = PriceTable.default()
        self.streams: dict[str, _Stream] = {}

    def flat(self) -> dict[str, Flat]:
        """The folds so far by stream, to be kept with ``position`` (``_usage_kept``)."""
        return {name: s.flat() for name, s in self.streams.items()}

    def resume(self, position: int, flat: dict[str, Flat]) -> None:
        """Continue a scan kept at ``position``."""
        self.position, self.streams = position, {name: _Stream.of_flat(f) for name, f in flat.items()}

    async def catch_up(self, store: EventStore, end: int) -> None:
        """Fold the run's usage events appended since ``position``; ``end`` is a log end read before this: every event
        up to it has been read then, the other runs' too, so the scan is current to it even when none of them was
        this run's (kept at its run's last usage event, each catch-up read the other runs' events again: a run
        beside nine others of 1,000 episodes, 200,000 events on every first open)."""
        async for stored in store.read_all(
            after_position=self.position, stream_prefix=under(self.run_id), types=USAGE_TYPES
        ):
            self.position = max(self.position, stored.position or 0)
            self.folded += 1
            s = self.streams.setdefault(stored.stream, _Stream())
            if stored.type == "llm.call":
                s.calls.add(_call(stored), self.prices)
            elif stored.type == "episode.started":
                s.started_at = stored.recorded_at
                s.task_id = str(stored.payload.get("task_id", ""))
            elif s.finished_at is None:
                s.finished_at = stored.recorded_at
                s.steps = int(stored.payload.get("steps", 0))
        self.position = max(self.position, end)

    def usage(self, info: RunInfo, counted: Mapping[str, int], in_flight: Collection[str] = ()) -> RunUsage:
        """``counted``: the stream of each episode that counts, with its index on the run page; ``in_flight``: the
        streams of the episodes being recorded (summed apart from attempts that were left or replaced)."""
        prefix = under(info.run_id)

        def of(name: str, s: _Stream, index: int) -> EpisodeUsage:
            seconds = _seconds(s.started_at, s.finished_at)
            usage = Usage.of(s.calls)
            return EpisodeUsage(index, name[len(prefix) :], s.task_id, s.started_at, seconds, s.steps, usage)

        episodes = sorted(
            (of(name, s, counted[name]) for name, s in self.streams.items() if name in counted), key=lambda e: e.index
        )
        flying = {name: of(name, s, -1) for name, s in self.streams.items() if name in in_flight}
        groups = {"counted": _Fold(), "in flight": _Fold(), "other": _Fold(), "derived": _Fold()}
        for name, s in self.streams.items():
            group = "other" if s.started_at else "derived"
            group = "counted" if name in counted else "in flight" if name in flying else group
            groups[group] = groups[group].merge(s.calls)
        summary = RunUsageSummary(
            episodes=Usage.of(groups["counted"]),
            seconds=sum(e.seconds or 0.0 for e in episodes),
            in_flight=Usage.of(groups["in flight"]),
            other_attempts=Usage.of(groups["other"]),
            derived=Usage.of(groups["derived"]),
            unpriced_models=sorted(set().union(*(g.unpriced for g in groups.values()))),
        )
        return RunUsage(info.run_id, info.label, summary, episodes, flying)


async def read_usage(store: EventStore, info: RunInfo, counted: Mapping[str, int]) -> RunUsage:
    """The run's usage in one scan (the static export; the viewer keeps a ``UsageScan`` per run)."""
    scan = UsageScan(info.run_id)
    await scan.catch_up(store, await store.log_end())
    return scan.usage(info, counted)

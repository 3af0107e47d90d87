"""The one library entry of every derived family: ``run_family`` resolves the runs, makes the family's producers for
each, runs the pass with the options' endpoint and switches, tells a ``PassWatch`` what lands, and returns a
``FamilyReport`` (data, with the exit code; the CLI renders it). ``replay.judges.judge_runs``,
``replay.classify.classify_runs`` and ``replay.retrieval_cf.counterfactual_runs`` are its typed wrappers: each adds
only how its producers are made and what its report carries besides the passes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, TypeVar

from p2w_rt.replay.derived._command import PassOptions
from p2w_rt.replay.derived._pass import Outcome, Tally
from p2w_rt.replay.derived._producer import Producer
from p2w_rt.replay.derived._registry import Family
from p2w_rt.replay.derived._runner import run_pass
from p2w_runtime.domain import RunInfo, episodes_of, find_runs
from p2w_runtime.store import EventStore

P = TypeVar("P", bound=Producer[Any, Any, Any])
OutcomeT = TypeVar("OutcomeT", bound=Outcome[Any])
SummaryT = TypeVar("SummaryT", bound=Tally[Any])

MakeProducers = Callable[[RunInfo], Awaitable[Sequence[P]]]
"""The producers of one run's pass (a retriever searches the banks that run carries, so they may differ by run)."""


@dataclass(frozen=True, slots=True)
class RunResult(Generic[SummaryT]):
    """One run's pass: the run, the derived stream its results are in, and the pass's counts and outcomes."""

    run: RunInfo
    stream: str
    summary: SummaryT


@dataclass(frozen=True)
class FamilyReport(Generic[SummaryT]):
    """What a family's entry returns: one ``RunResult`` per run, in the order the runs were given."""

    kind: str
    runs: list[RunResult[SummaryT]]

    @property
    def failed(self) -> int:
        return sum(result.summary.failed for result in self.runs)

    @property
    def exit_code(self) -> int:
        """1 when a result failed, made now or cached (a cached failure is still one); else 0."""
        return 1 if self.failed else 0


class PassWatch(Generic[OutcomeT, SummaryT]):
    """Who hears a family's passes as they run (the CLI's progress bars and lines); each method does nothing here."""

    def started(self, run: RunInfo, total: int) -> None:
        """A run's pass begins; ``total`` results (episodes times producers) will land."""

    def outcome(self, run: RunInfo, outcome: OutcomeT) -> None:
        """One result landed, made now or cached."""

    def done(self, result: RunResult[SummaryT]) -> None:
        """A run's pass ended."""


async def resolve_runs(store: EventStore, run_refs: Sequence[str]) -> list[RunInfo]:
    """Each reference (id, label or unique prefix) as its run, every one checked (a run named twice refused) before
    any pass starts."""
    return await find_runs(store, run_refs)


async def run_family(
    store: EventStore,
    family: Family[Any, P, OutcomeT, SummaryT],
    run_refs: Sequence[str],
    options: PassOptions,
    producers: MakeProducers[P],
    watch: PassWatch[OutcomeT, SummaryT] | None = None,
) -> FamilyReport[SummaryT]:
    """Run ``family``'s pass over each run with the producers ``producers`` makes for it. The LLM client is built on
    first need and closed after the last run; an endpoint that fails stops here with what was made kept."""
    runs = await resolve_runs(store, run_refs)
    results: list[RunResult[SummaryT]] = []
    async with options.llm_factory() as llm:
        for info in runs:
            made = await producers(info)
            if watch is not None:
                watch.started(info, len(await episodes_of(store, info.run_id)) * len(made))
            summary = await run_pass(
                family,
                store,
                info.run_id,
                made,
                llm=llm,
                concurrency=options.concurrency,
                force=options.force,
                retry_failed=options.retry_failed,
                on_outcome=None if watch is None else partial(watch.outcome, info),
            )
            results.append(RunResult(info, family.stream.name(info.run_id), summary))
            if watch is not None:
                watch.done(results[-1])
    return FamilyReport(family.kind, results)

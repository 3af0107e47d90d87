"""What ``p2w-rt replay`` asks of the library: the options, the judges they name, and judging runs with them
through the families' one entry (``replay.derived.run_family``), or estimating it (``dry_run``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from p2w_rt.replay.derived import FamilyReport, PassOptions, PassWatch, resolve_runs, run_family
from p2w_rt.replay.judges._base import Judge
from p2w_rt.replay.judges._estimate import JudgeEstimate, estimate_replay
from p2w_rt.replay.judges._family import JUDGES, JudgeOutcome, JudgeSummary, make_judge
from p2w_runtime.domain import RunInfo
from p2w_runtime.store import EventStore


@dataclass(frozen=True)
class JudgeOptions(PassOptions):
    judges: tuple[str, ...]
    dry_run: bool = False
    samples: int = 1
    """LLM judges judge each episode this many times (self-consistency, ``p2w-rt agree``); rules judges once."""

    def make_judges(self) -> list[Judge[Any]]:
        """The judges named by ``--judge`` (each once, an LLM judge once per sample), configured; an unknown id
        is a ``UserError``."""
        settings = self.settings()
        judges: list[Judge[Any]] = []
        for judge_id in dict.fromkeys(self.judges):
            judge = make_judge(judge_id, settings)
            judges.append(judge)
            if judge.uses_llm:
                judges += [make_judge(judge_id, replace(settings, sample=n)) for n in range(1, self.samples)]
        return judges


@dataclass(frozen=True)
class JudgeReport(FamilyReport[JudgeSummary]):
    """The judging passes; with ``dry_run``, no pass and instead each run's estimates (exit code 0)."""

    estimates: list[JudgeEstimate] = field(default_factory=list)


async def judge_runs(
    store: EventStore,
    run_refs: Sequence[str],
    options: JudgeOptions,
    watch: PassWatch[JudgeOutcome, JudgeSummary] | None = None,
) -> JudgeReport:
    """Judge each run with ``options.judges`` (cached), or estimate what that would cost (``dry_run``)."""
    if options.dry_run:
        estimates: list[JudgeEstimate] = []
        for info in await resolve_runs(store, run_refs):
            estimates += await estimate_replay(
                store,
                info.run_id,
                options.make_judges(),
                model=options.model,
                force=options.force,
                retry_failed=options.retry_failed,
            )
        return JudgeReport(JUDGES.kind, [], estimates)

    async def judges(info: RunInfo) -> list[Judge[Any]]:
        return options.make_judges()

    report = await run_family(store, JUDGES, run_refs, options, judges, watch)
    return JudgeReport(report.kind, report.runs)

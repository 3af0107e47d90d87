"""What ``p2w-rt replay`` asks of the library: the options, and judging a run with them (data, no output)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from p2w_runtime.domain import RunInfo
from p2w_runtime.store import EventStore
from replay.derived import PassOptions
from replay.judges import Judge, JudgeSettings, make_judge
from replay.judging._estimate import JudgeEstimate, estimate_replay
from replay.judging._runner import JudgeOutcome, ReplaySummary, replay_run


@dataclass(frozen=True)
class ReplayOptions(PassOptions):
    judges: tuple[str, ...]
    dry_run: bool = False
    retry_failed: bool = False
    webarena_config: Path | None = None
    site_urls: dict[str, str] = field(default_factory=dict)
    profiles: Path | None = None
    samples: int = 1
    """LLM judges judge each episode this many times (self-consistency, ``p2w-rt agree``); rules judges once."""

    def settings(self) -> JudgeSettings:
        webarena = str(self.webarena_config) if self.webarena_config else None
        profiles = str(self.profiles) if self.profiles else None
        return replace(
            super().settings(), webarena_configs=webarena, site_urls=self.site_urls, agenticshop_profiles=profiles
        )

    def make_judges(self) -> list[Judge]:
        """The judges named by ``--judge`` (each once, an LLM judge once per sample), configured; an unknown id
        is a ``UserError``."""
        settings = self.settings()
        judges: list[Judge] = []
        for judge_id in dict.fromkeys(self.judges):
            judge = make_judge(judge_id, settings)
            judges.append(judge)
            if judge.uses_llm:
                judges += [make_judge(judge_id, replace(settings, sample=n)) for n in range(1, self.samples)]
        return judges


async def estimate_run(store: EventStore, info: RunInfo, options: ReplayOptions) -> list[JudgeEstimate]:
    """``--dry-run``: what judging ``info``'s run would call and cost; nothing is called or appended."""
    return await estimate_replay(
        store,
        info.run_id,
        options.make_judges(),
        model=options.model,
        force=options.force,
        retry_failed=options.retry_failed,
    )


async def judge_run(
    store: EventStore, info: RunInfo, options: ReplayOptions, on_outcome: Callable[[JudgeOutcome], None]
) -> ReplaySummary:
    """Judge ``info``'s run with the options' judges; the LLM client is built on first need and closed after."""
    async with options.llm_factory() as llm:
        return await replay_run(
            store,
            info.run_id,
            options.make_judges(),
            llm=llm,
            concurrency=options.concurrency,
            force=options.force,
            retry_failed=options.retry_failed,
            on_outcome=on_outcome,
        )

"""What ``p2w-rt replay`` does, so that cli.py only parses options and calls ``replay_command``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from p2w_runtime.store import Recorder, counted_episodes, find_run
from p2w_runtime.terminal import cell, markup
from replay.derived import PassOptions, advance, pass_progress
from replay.judges import Judge, JudgeSettings, make_judge
from replay.judging._estimate import JudgeEstimate, estimate_replay
from replay.judging._format import judgment_json
from replay.judging._records import judgment_stream
from replay.judging._runner import JudgeOutcome, ReplaySummary, replay_run
from schemas import Judgment


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


def _figures(j: Judgment) -> str:
    m = j.metrics
    if "p_web" in m:
        return "  ".join(f"{k}={m[k]:.2f}" for k in ("p_web", "p_pref", "p_avg", "intent")) + (
            "  success" if m.get("success") == 1.0 else ""
        )
    if "score" in m or not m:
        return f"score={m.get('score', 0):.2f}" + ("  success" if m.get("success") == 1.0 else "")
    return "  ".join(f"{k}={v:.2f}" for k, v in list(m.items())[:5])  # AgenticShop judges: their own figures


def _line(outcome: JudgeOutcome) -> str:
    j = outcome.judgment
    tag = "cached " if outcome.cached else ""
    if j.status != "ok":
        return f"{tag}[red]failed[/]  {markup(j.task_id)}  {markup(j.judge_id)}: {markup(j.error or '')}"
    return f"{tag}{markup(j.task_id)}  {markup(j.judge_id)}  {_figures(j)}"


def _llm_factory(options: ReplayOptions, made: list[Any]) -> Any:
    def build() -> Any:
        client = options.llm_client()
        made.append(client)
        return client

    return build


async def replay_command(store: Recorder, run_ref: str, options: ReplayOptions, out: Console, err: Console) -> int:
    """Judge a run (or estimate the cost of judging it); returns the exit code (1 when judgments failed)."""
    info = await find_run(store, run_ref)
    settings = options.settings()
    judges: list[Judge] = []
    for judge_id in dict.fromkeys(options.judges):
        judge = make_judge(judge_id, settings)
        judges.append(judge)
        if judge.uses_llm:
            judges += [make_judge(judge_id, replace(settings, sample=n)) for n in range(1, options.samples)]
    if options.dry_run:
        estimates = await estimate_replay(
            store, info.run_id, judges, model=options.model, force=options.force, retry_failed=options.retry_failed
        )
        _print_estimates(estimates, options, out)
        return 0
    total = len(await counted_episodes(store, info.run_id)) * len(judges)
    made: list[Any] = []
    progress = pass_progress("judging", err if options.as_json else out, transient=options.as_json)
    task = progress.add_task(markup(info.label), total=total, state="")
    counts = ReplaySummary()

    def on_outcome(outcome: JudgeOutcome) -> None:
        counts.add(outcome)
        advance(progress, task, counts)
        if options.as_json:
            row = judgment_json(outcome.judgment, cached=outcome.cached, level=outcome.level)
            out.print(json.dumps(row, ensure_ascii=False), markup=False, highlight=False, soft_wrap=True)
        else:
            progress.console.print(_line(outcome), highlight=False)

    try:
        with progress:
            summary = await replay_run(
                store,
                info.run_id,
                judges,
                llm=_llm_factory(options, made),
                concurrency=options.concurrency,
                force=options.force,
                retry_failed=options.retry_failed,
                on_outcome=on_outcome,
            )
    finally:
        for client in made:
            await client.aclose()
    cost = f" · judge cost ${summary.cost_usd:.4f}" if summary.cost_usd else ""
    err.print(
        cell(
            f"{info.label}: judged {summary.judged}, cached {summary.cached}, failed {summary.failed}{cost} "
            f"(judgments in stream {judgment_stream(info.run_id)})"
        )
    )
    if summary.failed and not options.retry_failed and not options.force:
        err.print("failed judgments are kept as they are; --retry-failed judges them again", highlight=False)
    return 1 if summary.failed else 0


def _print_estimates(estimates: Sequence[JudgeEstimate], options: ReplayOptions, out: Console) -> None:
    if options.as_json:
        for e in estimates:
            row = {
                "judge": e.judge_id,
                "episodes": e.episodes,
                "cached": e.cached,
                "llm_calls": e.calls,
                "prompt_tokens": e.prompt_tokens,
                "completion_tokens": e.completion_tokens,
                "cost_usd": e.cost_usd,
                "model": options.model,
                "unjudgeable": e.unjudgeable,
            }
            out.print(json.dumps(row), markup=False, highlight=False, soft_wrap=True)
        return
    table = Table(
        "judge",
        "episodes",
        "cached",
        "LLM calls",
        "prompt tokens",
        "completion tokens",
        "cost (USD)",
        title=markup(f"dry run: nothing called, nothing appended (model {options.model})"),
        title_justify="left",
    )
    for e in estimates:
        cost = "unknown price" if e.cost_usd is None else f"{e.cost_usd:.4f}"
        table.add_row(
            cell(e.judge_id),
            str(e.episodes),
            str(e.cached),
            str(e.calls),
            f"~{e.prompt_tokens}",
            f"~{e.completion_tokens}",
            cost,
        )
    out.print(table)
    for e in estimates:
        for problem in e.unjudgeable:
            out.print(cell(f"{e.judge_id}: cannot judge {problem}"))

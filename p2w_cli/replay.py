"""`replay` and `metrics`: judge recorded runs offline, then tabulate the judgments."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from p2w_cli._common import console, in_store, open_db, run, waited
from p2w_cli._options import FINITE_FLOAT, llm_pass_options
from p2w_cli._producers import PluginCommand, pass_fields, producer_option
from p2w_cli.render.terminal import terminal_console

if TYPE_CHECKING:
    from p2w_rt.replay.derived import Table


@click.command("replay", cls=PluginCommand, family="judge")
@click.argument("run_ref", metavar="RUN")
@producer_option("judge", "--judge", "judge_ids", intro="Judge id; repeat for several.", multiple=True)
@click.option(
    "--retriever",
    metavar="EMBEDDER",
    help="Instead of judging: search the recorded history queries again with this sentence-transformers "
    "model (name, path, or `default`) and compare the ground truth's recall (counterfactual retrieval).",
)
@click.option("--k", "cf_k", type=click.IntRange(1), default=20, show_default=True, help="With --retriever.")
@click.option(
    "--threshold", "cf_threshold", type=FINITE_FLOAT, default=0.5, show_default=True, help="With --retriever."
)
@click.option(
    "--history",
    "history_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="With --retriever: memory-bank folder instead of the banks the run carries (checked to be the same).",
)
@click.option("--other-dataset", is_flag=True, help="With --history: use it although its banks differ from the run's.")
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, path_type=Path),
    help="With --retriever: write recorded vs counterfactual recall per kind of value; its suffix names the format: "
    ".png, .svg or .pdf.",
)
@llm_pass_options("the LLM judges", "judgments")
@click.option(
    "--samples",
    default=1,
    show_default=True,
    type=click.IntRange(1, 100),
    help="Judge each episode N times with every LLM judge (self-consistency; see p2w-rt agree).",
)
@click.option("--dry-run", is_flag=True, help="Estimate LLM calls, tokens and cost; call and append nothing.")
@click.option("--force", is_flag=True, help="Judge again even when a cached judgment exists (older ones stay).")
@click.option("--retry-failed", is_flag=True, help="Judge again the episodes whose cached judgment failed.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per judged episode.")
@click.pass_context
def replay_cmd(
    ctx: click.Context,
    run_ref: str,
    judge_ids: tuple[str, ...],
    samples: int,
    dry_run: bool,
    retry_failed: bool,
    retriever: str | None,
    cf_k: int,
    cf_threshold: float,
    history_dir: Path | None,
    other_dataset: bool,
    plot: Path | None,
    **shared: Any,
) -> None:
    """Judge every episode of RUN offline; judgments are appended and cached (prints "cached").

    The judges' plugins add their options (task configs, profiles, site lists). With --retriever:
    counterfactual retrieval instead, also appended and cached per retriever config.
    """
    from p2w_cli.render.judge_pass import JudgeWatch, show_estimates
    from p2w_rt.replay.judges import JudgeOptions, JudgeReport, judge_runs

    if retriever is not None:
        if judge_ids:
            raise click.UsageError("--retriever replays retrieval, --judge judges: give one of them")
        _counterfactual(ctx, run_ref, retriever, (cf_k, cf_threshold), (history_dir, other_dataset), plot, shared)
        return
    if not judge_ids:
        raise click.UsageError("Missing option '--judge' (or --retriever).")

    options = JudgeOptions(
        judges=judge_ids,
        samples=samples,
        dry_run=dry_run,
        retry_failed=retry_failed,
        **pass_fields("judge", shared),
    )
    watch = JudgeWatch(options, console, terminal_console(stderr=True))

    async def _replay() -> JudgeReport:
        async with open_db(ctx) as store:
            try:
                return await judge_runs(store, [run_ref], options, watch)
            finally:
                watch.bars.stop()

    report = run(_replay())
    if options.dry_run:
        show_estimates(report, options, console)
    sys.exit(report.exit_code)


def _counterfactual(
    ctx: click.Context,
    run_ref: str,
    retriever: str,
    search: tuple[int, float],
    history: tuple[Path | None, bool],
    plot: Path | None,
    shared: dict[str, Any],
) -> None:
    from p2w_cli.render.retrieval_cf import show_report
    from p2w_rt.replay.retrieval_cf import CounterfactualOptions, counterfactual_runs

    options = CounterfactualOptions(
        embedder=retriever,
        k=search[0],
        threshold=search[1],
        history_dir=history[0],
        other_dataset=history[1],
        plot=plot,
        **pass_fields("judge", shared),
    )

    report = in_store(ctx, lambda store: counterfactual_runs(store, [run_ref], options))
    show_report(report, console, as_json=options.as_json, seconds=waited())
    sys.exit(report.exit_code)


@click.command("metrics")
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@click.option("--judge", help="Only this judge's judgments (default: every judge, one row each).")
@click.option(
    "--by",
    help="Group columns, comma-separated: architecture, model, scheme, level, judge, run "
    "[default: architecture,model,scheme].",
)
@click.option("--format", "fmt", type=click.Choice(["table", "md", "csv", "json"]), default="table", show_default=True)
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the per-level plot; its suffix names the format: .png, .svg or .pdf.",
)
@click.pass_context
def metrics_cmd(
    ctx: click.Context, run_refs: tuple[str, ...], judge: str | None, by: str | None, fmt: str, plot: Path | None
) -> None:
    """P_web, P_pref, P_avg, Intent and SR of judged runs (the paper's Table 5), and by ambiguity level; and the
    tables of the benchmark plugins whose judges judged them (AgenticShop's...)."""
    from p2w_cli.render.metrics import show_metrics
    from p2w_cli.render.tables import show_tables
    from p2w_rt.replay.derived import metrics_tables
    from p2w_rt.replay.metrics import metrics_report
    from p2w_runtime.domain import find_runs

    columns = [c.strip() for c in by.split(",") if c.strip()] if by else None
    providers = list(metrics_tables().values())
    owned = {judge_id for provider in providers for judge_id in provider.judges}

    async def _metrics() -> None:
        async with open_db(ctx) as store:
            report = None
            if judge not in owned:
                report = await metrics_report(store, run_refs, judge=judge, by=columns, plot=plot)
            tables: list[Table] = []
            chosen = [p for p in providers if judge is None or judge in p.judges]
            if chosen:  # a plugin's own tables, when the runs hold its judgments
                runs = await find_runs(store, run_refs)
                for provider in chosen:
                    tables += await provider.tables(store, runs, judge)
        persona2web = report is not None and any(v is not None for row in report.rows for v in row.figures.values())
        if report is not None and (persona2web or not tables):  # no empty Table 5 above a plugin's own tables
            show_metrics(report, fmt, console, terminal_console(stderr=True))
        show_tables(tables, fmt, console)

    run(_metrics())

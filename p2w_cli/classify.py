"""`classify`: label each episode with the paper's error types, by rules or by an LLM."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from p2w_cli._common import console, open_db, run
from p2w_cli._options import llm_pass_options
from p2w_cli._producers import PluginCommand, pass_fields, producer_option
from p2w_cli.render.terminal import terminal_console


@click.command("classify", cls=PluginCommand, family="classifier")
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@producer_option("classifier", "--classifier", intro="Classifier id:")
@click.option("--summary", is_flag=True, help="Print error counts per run instead of episodes.")
@click.option(
    "--group-by",
    type=click.Choice(["run", "config"]),
    default="run",
    show_default=True,
    help="Summary and plot: one column per run, or runs of one agent / model / scheme merged (config).",
)
@click.option(
    "--plot",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the error summary chart; its suffix names the format: .png, .svg or .pdf.",
)
@llm_pass_options("the llm classifier", "classifications")
@click.option("--force", is_flag=True, help="Classify again even when a cached classification exists.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per episode (with --summary: the summary).")
@click.pass_context
def classify_cmd(
    ctx: click.Context,
    run_refs: tuple[str, ...],
    classifier: str,
    summary: bool,
    group_by: str,
    plot: Path | None,
    **shared: Any,
) -> None:
    """Label each episode with Persona2Web's error types and its navigation end reason, with evidence.

    Classifications are appended to the run and cached (prints "cached").
    """
    from p2w_cli.render.classify_pass import ClassifyWatch, show_classify_report
    from p2w_rt.replay.classify import ClassifyOptions, ClassifyReport, classify_runs

    options = ClassifyOptions(
        classifier=classifier,
        summary=summary,
        per_run=group_by == "run",
        plot=plot,
        **pass_fields("classifier", shared),
    )
    err = terminal_console(stderr=True)
    watch = ClassifyWatch(options, console, err)

    async def _classify() -> ClassifyReport:
        async with open_db(ctx) as store:
            try:
                return await classify_runs(store, run_refs, options, watch)
            finally:
                watch.bars.stop()

    report = run(_classify())
    show_classify_report(report, options, console, err)
    sys.exit(report.exit_code)

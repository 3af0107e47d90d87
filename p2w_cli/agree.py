"""`agree` and `import-labels`: meta-evaluation of judges against each other, humans and themselves."""

from __future__ import annotations

import json
from pathlib import Path

import click

from p2w_cli._common import console, in_store, numpy_on_one_thread


@click.command("agree")
@click.argument("run_ref", metavar="RUN")
@click.option(
    "--judge",
    "judges",
    multiple=True,
    help="Judge id, or ID@VERSION for one version (judge drift); repeat. human:NAME is one annotator.",
)
@click.option("--human", is_flag=True, help="Add every human annotator who labelled RUN (p2w-rt import-labels).")
@click.option(
    "--bootstrap",
    "samples",
    default=1000,
    show_default=True,
    type=click.IntRange(0, 100_000),
    help="Bootstrap resamples for the 95% confidence intervals (0: none).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON document instead of tables.")
@click.pass_context
def agree_cmd(
    ctx: click.Context, run_ref: str, judges: tuple[str, ...], human: bool, samples: int, as_json: bool
) -> None:
    """Agreement of judges on RUN per metric, dimension and rubric point: κ, α, ρ, r, accuracy, changed verdicts."""
    numpy_on_one_thread()  # before anything imports numpy
    from p2w_cli.render.agreement import as_json as to_json
    from p2w_cli.render.agreement import render
    from p2w_rt.replay.agreement import agree

    report = in_store(ctx, lambda store: agree(store, run_ref, judges, human=human, samples=samples))
    if as_json:
        console.print(json.dumps(to_json(report), ensure_ascii=False), markup=False, highlight=False, soft_wrap=True)
    else:
        render(report, console)


@click.command("import-labels")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.pass_context
def import_labels_cmd(ctx: click.Context, path: Path) -> None:
    """Human labels (CSV or JSON lines: run, task, point, label, annotator[, max]) as judgments by human:ANNOTATOR."""
    from p2w_rt.replay.agreement import import_labels

    summary = in_store(ctx, lambda store: import_labels(store, path))
    click.echo(f"{summary.labels} labels: {summary.written} judgments written, {summary.already} already there")

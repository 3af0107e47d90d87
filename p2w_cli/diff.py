"""`diff` and `stats`: compare runs task by task, and summarise repeated runs."""

from __future__ import annotations

from collections.abc import Callable

import click

from p2w_cli._common import console, db_path, numpy_on_one_thread, run
from p2w_cli._options import FC


def _judge_option(use: str) -> Callable[[FC], FC]:
    """``--judge`` of ``diff`` and ``stats``: whose judgments to ``use``, rules judges run first when needed."""
    return click.option(
        "--judge",
        default="rubric-rules",
        show_default=True,
        help=f"Whose judgments to {use} (rules judges are run first when needed).",
    )


@click.command("diff")
@click.argument("a_ref", metavar="A")
@click.argument("b_ref", metavar="B")
@_judge_option("compare")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: metrics, tasks, only_in_a/b, mcnemar_p.")
@click.pass_context
def diff_cmd(ctx: click.Context, a_ref: str, b_ref: str, judge: str, as_json: bool) -> None:
    """Compare run A with run B task by task; either may be FILE.db:RUN (a run in another database)."""
    numpy_on_one_thread()  # before anything imports numpy
    from p2w_cli.render.diff import show_diff
    from p2w_rt.replay.diff import diff_refs

    show_diff(run(diff_refs(db_path(ctx), a_ref, b_ref, judge=judge)), console, as_json=as_json)


@click.command("stats")
@click.argument("run_refs", metavar="RUN RUN...", nargs=-1, required=True)
@_judge_option("use")
@click.option("--json", "as_json", is_flag=True, help="One JSON object: per-run figures, mean and std.")
@click.pass_context
def stats_cmd(ctx: click.Context, run_refs: tuple[str, ...], judge: str, as_json: bool) -> None:
    """Mean and standard deviation of each metric over repeated runs of the same tasks (Table 8)."""
    from p2w_cli.render.stats import show_stats
    from p2w_rt.replay.stats import stats_of

    if len(run_refs) < 2:
        raise click.UsageError("stats needs at least two runs")
    show_stats(run(stats_of(db_path(ctx), run_refs, judge=judge)), console, as_json=as_json)

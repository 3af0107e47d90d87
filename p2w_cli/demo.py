"""`demo`: the whole product offline on the bundled example runs (optionally recording one more first)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from rich.console import Console

from p2w_cli._common import console, run
from p2w_cli._options import api_key_option
from p2w_cli.render.terminal import cell, terminal_console
from p2w_runtime.command_line import command_line


@click.command("demo")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default="p2w-demo",
    show_default=True,
    help="Folder for the demo database (an earlier demo's is reused), the report and the plots.",
)
@click.option(
    "--record",
    "record_first",
    is_flag=True,
    help="First record the sample tasks with the configured endpoint, and judge them with rubric-llm too.",
)
@click.option("--model", default="gpt-4.1-mini", show_default=True, help="Model for --record (agent and judge).")
@click.option("--base-url", envvar="OPENAI_BASE_URL", help="OpenAI-compatible endpoint for --record.")
@api_key_option
@click.option("--chromium", envvar="P2W_CHROMIUM", help="Chromium executable for --record.")
@click.option("--force", is_flag=True, help="Replace OUT/demo.db even if it holds runs the demo did not make.")
@click.pass_context
def demo_cmd(
    ctx: click.Context,
    out_dir: Path,
    record_first: bool,
    model: str,
    base_url: str | None,
    api_key: str | None,
    chromium: str | None,
    force: bool,
) -> None:
    """Import two recorded runs of the sample tasks, judge, classify and diff them, and write a report.

    The demo keeps its own database, OUT/demo.db, never the store of --db or P2W_DB."""
    refuse_db(ctx)
    from p2w_cli.render.demo import show_demo
    from p2w_rt.replay.demo import demo_data, import_example_runs, prepare_demo_db, write_report
    from p2w_rt.replay.derived import PassSettings
    from p2w_runtime.demo.examples import example_run_bundles
    from p2w_runtime.domain import list_runs
    from p2w_runtime.store import open_store

    out_dir.mkdir(parents=True, exist_ok=True)
    db = out_dir / "demo.db"
    run(prepare_demo_db(db, example_run_bundles(), force=force))
    err = terminal_console(stderr=True)

    async def _demo() -> Any:
        async with open_store(db, create=True) as store:
            there = {info.label for info in await list_runs(store)}
            runs = await import_example_runs(store, example_run_bundles())
            new = [label for label in runs if label not in there]
            if new:
                err.print(cell(f"imported the example runs {', '.join(new)} into {db}"))
            else:  # an earlier demo's database: the bundles are imported idempotently, nothing was written
                err.print(cell(f"the example runs {', '.join(runs)} are already in {db}: nothing imported"))
            llm_settings = factory = None
            if record_first:
                runs.append(await _record_sample(store, model, base_url, api_key, chromium, err))
                llm_settings = PassSettings(model=model)

                def factory() -> Any:
                    from p2w_runtime.llm import LlmClient

                    return LlmClient(model, base_url=base_url, api_key=api_key)

            return await demo_data(
                store,
                db,
                runs,
                out_dir=out_dir,
                llm_judged=runs[2:],
                llm_settings=llm_settings,
                llm_factory=factory,
            )

    report = show_demo(run(_demo()), console, err)
    path = write_report(report, out_dir / "report.md")
    show, view = command_line("show", "earlier", db=str(db)), command_line("view", options=("--db", str(db), "--open"))
    click.echo(f"\nreport with plots: {path}  (database: {db}; try `{show}`)")
    click.echo(f"open it in a browser: {view}")


def refuse_db(ctx: click.Context) -> None:
    """``p2w-rt --db FILE demo`` is refused rather than ignored: the demo writes, and may replace, OUT/demo.db only, so
    that it never adds its example runs to a store of the user's (nor replaces one with --force)."""
    if ctx.parent is not None and ctx.parent.get_parameter_source("db") == ParameterSource.COMMANDLINE:
        raise click.UsageError("demo keeps its own database, OUT/demo.db: choose its folder with --out, not --db")


async def _record_sample(
    store: Any, model: str, base_url: str | None, api_key: str | None, chromium: str | None, err: Console
) -> str:
    """Record the ambiguous sample tasks (levels 1 and 2) with the configured model; returns the run label."""
    from p2w_runtime.agent import RecordRequest, record
    from p2w_runtime.data import load_tasks
    from p2w_runtime.demo.sample import sample_history_dir, sample_tasks_dir
    from p2w_runtime.demo.sites import DemoHosting

    if not base_url and not api_key:
        raise click.UsageError("--record needs an endpoint: --base-url / OPENAI_BASE_URL (and a key if it needs one)")
    ambiguous = tuple(t.task_id for t in load_tasks(sample_tasks_dir()) if t.level > 0)
    request = RecordRequest(
        tasks_dir=sample_tasks_dir(),
        history_dir=sample_history_dir(),
        model=model,
        label=f"recorded-{model}",
        base_url=base_url,
        api_key=api_key,
        task_ids=ambiguous,
        chromium=chromium,
        concurrency=2,
    )
    err.print(f"recording {len(ambiguous)} sample tasks with {model} at {base_url or 'api.openai.com'} …")
    summary = await record(store, request, hosting=DemoHosting())
    return summary.label

"""`record`: run an agent in Chromium (the personalized one, or ``--agent NAME`` of ``p2w_runtime.integrations``, or
``--exec CMD``) and record every step as events."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Any

import click

from p2w_cli._common import RUN_LABEL, db_path, open_db, run
from p2w_cli._interrupted import DaemonThreads, exit_at_once_when_interrupted
from p2w_cli._options import (
    FiniteFloat,
    api_key_option,
    base_url_option,
    cache_dir_option,
    exec_timeout_option,
    llm_timeout_option,
    max_retries_option,
)
from p2w_cli._record_options import (
    agent_names,
    agents_help,
    curation_scheme,
    demo_shop,
    exec_arguments,
    given_options,
    sample_or_path,
)
from p2w_cli._registry_choice import RegistryChoice, RegistryOption
from p2w_cli.progress import record_progress
from p2w_cli.render.record import recorded_line
from p2w_cli.render.terminal import safe
from p2w_runtime.errors import UserError


@click.command("record")
@click.option(
    "--agent",
    cls=RegistryOption,
    described=agents_help,
    type=RegistryChoice("AGENT", agent_names),
    default="own",
    show_default=True,
)
@click.option(
    "--exec",
    "exec_command",
    metavar="CMD",
    help="Record any agent, in any language, with no code change: CMD runs once per task with OPENAI_BASE_URL / "
    "OPENAI_API_KEY pointing at a local recording proxy to --base-url, P2W_CDP_URL (a Chromium p2w-rt observes), "
    'P2W_TASK_ID, P2W_TASK_FILE, P2W_ANSWER_FILE; its answer is its last stdout line {"answer": ...} '
    "(docs/design/exec.md).",
)
@exec_timeout_option(
    "With --exec: seconds an agent may take per task before it is killed with its children (the episode then ends "
    "error; the others go on)."
)
@click.option(
    "--tasks",
    "tasks_dir",
    default="sample",
    show_default=True,
    help="Task folder (personalization_{1,2,3}/ or flat), or `sample`.",
)
@click.option(
    "--history",
    "history_dir",
    default="sample",
    show_default=True,
    help="Memory-bank folder ({persona}.json), or `sample`.",
)
@click.option(
    "--profiles",
    type=click.Path(exists=True, path_type=Path),
    help="AgenticShop user profiles (a *_user_profile.json or a folder) as curation tasks instead of --tasks: "
    "no-history (the profile's narrative is the user context), the answer's product links captured at the end.",
)
@click.option(
    "--start-url",
    help="Where curation tasks (--profiles) start; default: the demo shop Threads (http://threads.p2w.test/).",
)
@click.option(
    "--scheme", type=click.Choice(["no-history", "on-demand", "pre-execution"]), default="on-demand", show_default=True
)
@click.option("--model", help="Backbone model name at the endpoint (required, except with --resume).")
@base_url_option
@api_key_option
@click.option("--level", type=click.IntRange(0, 2), help="Only tasks of this ambiguity level.")
@click.option("--task", "task_ids", multiple=True, help="Only these task ids (repeatable).")
@click.option("--limit", type=click.IntRange(1), help="At most N tasks.")
@click.option("--concurrency", type=click.IntRange(1), default=4, show_default=True)
@click.option("--label", type=RUN_LABEL, help="Run label (default: SCHEME-MODEL).")
@click.option("--max-steps", type=click.IntRange(1), default=25, show_default=True)
@click.option(
    "--resume",
    "resume",
    metavar="RUN",
    help="Continue an interrupted run: its recorded tasks and settings, only unfinished tasks are recorded. "
    "Of the other options only --concurrency, --chromium, --cache-dir, --prices, --max-retries, --llm-timeout, "
    "--timeout, --base-url and --api-key may differ.",
)
@click.option(
    "--worker",
    is_flag=True,
    help="Record the run --label L together with other workers (processes, machines) on one --db: each leases "
    "the next free task; a killed worker's task is taken over when its lease runs out.",
)
@click.option(
    "--chromium",
    envvar="P2W_CHROMIUM",
    help="Chromium executable (default: Playwright's own, else /usr/bin/chromium). Env: P2W_CHROMIUM.",
)
@click.option("--embedder", help="sentence-transformers name or path (default: bundled all-MiniLM-L6-v2).")
@cache_dir_option
@click.option("--prices", type=click.Path(dir_okay=False, path_type=Path), help="Extra model prices (JSON).")
@max_retries_option
@llm_timeout_option
@click.option(
    "--capture-links",
    is_flag=True,
    help="Curation tasks (AgenticShop): at the end, fetch the answer's first 3 product links and record each page.",
)
@click.option(
    "--har",
    is_flag=True,
    help="Keep response bodies in each episode's HAR, so `fork --restore har` can serve the recorded pages.",
)
@click.option(
    "--page-timeout",
    type=FiniteFloat(0.1),
    default=15.0,
    show_default=True,
    help="Seconds a navigation may take before the page is stopped.",
)
@click.pass_context
def record_cmd(
    ctx: click.Context,
    agent: str,
    exec_command: str | None,
    timeout_s: float,
    tasks_dir: str,
    history_dir: str,
    profiles: Path | None,
    start_url: str | None,
    scheme: str,
    model: str | None,
    base_url: str | None,
    api_key: str | None,
    level: int | None,
    task_ids: tuple[str, ...],
    limit: int | None,
    concurrency: int,
    label: str | None,
    max_steps: int,
    resume: str | None,
    worker: bool,
    chromium: str | None,
    embedder: str | None,
    cache_dir: Path | None,
    prices: Path | None,
    max_retries: int,
    llm_timeout_s: float,
    capture_links: bool,
    har: bool,
    page_timeout: float,
) -> None:
    """Record one run of an agent (the personalized one unless --agent or --exec): one episode per task, every
    step as events."""
    from p2w_runtime.agent import AgentConfig, RecordRequest
    from p2w_runtime.demo.sites import DemoHosting
    from p2w_runtime.llm import RetryPolicy

    command = exec_arguments(ctx, exec_command)
    if model is None and resume is None:
        raise click.UsageError("Missing option '--model' (needed unless --resume RUN).")
    if worker and (resume is not None or label is None):
        raise click.UsageError("--worker needs --label (the run the workers share) and no --resume")
    if (profiles is not None or start_url is not None) and resume is None:  # a resume keeps the recorded ones
        scheme, capture_links = curation_scheme(ctx, profiles, scheme), True  # the judges read the linked pages
    config = AgentConfig(
        scheme=scheme,  # type: ignore[arg-type]  # click.Choice: a Scheme
        max_steps=max_steps,
        page_timeout_s=page_timeout,
        capture_links=capture_links,
        har_bodies=har,
    )
    request = RecordRequest(
        tasks_dir=sample_or_path(tasks_dir, "tasks"),
        history_dir=sample_or_path(history_dir, "history"),
        model=model or "",
        label=label,
        config=config,
        base_url=base_url,
        api_key=api_key,
        level=level,
        task_ids=task_ids,
        limit=limit,
        concurrency=concurrency,
        chromium=chromium,
        embedder=embedder,
        cache_dir=cache_dir,
        prices=prices,
        resume=resume,
        retry=RetryPolicy(max_retries=max_retries),
        llm_timeout_s=llm_timeout_s,
        given=given_options(ctx),
        worker=worker,
        profiles=profiles,
        start_url=(start_url or demo_shop()) if profiles else start_url,
    )
    with exit_at_once_when_interrupted(), record_progress() as on_progress:

        async def _record() -> Any:
            import asyncio

            loop = asyncio.get_running_loop()
            loop.set_default_executor(DaemonThreads(max_workers=1))
            # SIGTERM (a service manager, `timeout`, a container stopping) stops the run as Ctrl-C does: the episodes
            # close as aborted and the run as interrupted, instead of the process dying with them left unfinished
            loop.add_signal_handler(signal.SIGTERM, os.kill, os.getpid(), signal.SIGINT)
            db = db_path(ctx)
            fresh, empty = isinstance(db, Path) and not db.exists(), False
            try:
                async with open_db(ctx, create=True) as store:
                    try:
                        if command is not None:
                            from p2w_runtime.exec import record_exec

                            return await record_exec(
                                store, request, command, on_progress, hosting=DemoHosting(), timeout_s=timeout_s
                            )
                        from p2w_runtime.integrations import agent as integration

                        return await integration(agent).record(store, request, on_progress, hosting=DemoHosting())
                    except UserError:  # e.g. a Chromium that will not start: found before any event
                        empty = fresh and not await store.list_streams()
                        raise
            finally:
                if empty and isinstance(db, Path):  # made here and still empty: leave no empty file behind
                    for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
                        path.unlink(missing_ok=True)

        summary = run(_record())
    click.echo(recorded_line(summary))
    if summary.outcomes and all(o.end_reason == "error" for o in summary.outcomes):
        click.echo(safe(f"error: every episode failed; first: {summary.outcomes[0].detail}"), err=True)
        sys.exit(1)

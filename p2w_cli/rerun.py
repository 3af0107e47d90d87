"""`rerun`: re-execute today's agent code over a recorded run, without browser or LLM, and report divergences."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from p2w_cli._common import RUN_LABEL, echo_json, exec_timeout_option, open_db, run, waited
from p2w_cli._dataset_options import history_option, other_dataset_option
from p2w_cli.progress import bar_or_lines
from p2w_cli.render.terminal import safe
from p2w_cli.render.words import counted

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from p2w_runtime.exec import ExecEpisode, ExecReport
    from p2w_runtime.rerun import Mismatch, ReplayedEpisode
    from p2w_runtime.store import EventStore


@click.command("rerun")
@click.argument("run_ref", metavar="RUN")
@click.argument("task_ids", metavar="[TASK...]", nargs=-1)
@history_option
@other_dataset_option
@click.option(
    "--recorded-retrieval", is_flag=True, help="Answer history queries with the recorded hits; search nothing."
)
@click.option("--record-as", "record_as", type=RUN_LABEL, help="Write the re-executed episodes as a new run.")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), help="Retrieval index cache.")
@click.option(
    "--exec",
    "command",
    metavar="CMD",
    help="Re-execute the agent that recorded RUN: CMD (through the shell) once per episode, its model calls and "
    "history retrievals served from the recording (docs/design/replay.md).",
)
@exec_timeout_option(
    "With --exec: seconds an agent may take per episode before it is killed (the episode then differs)."
)
@click.option(
    "--restore",
    type=click.Choice(["har"]),
    help="With --exec: give the agent a Chromium at P2W_CDP_URL that serves each episode's recorded pages from its "
    "HAR (recorded with record --exec CMD --har).",
)
@click.option("--json", "as_json", is_flag=True, help="The report as one JSON object.")
@click.pass_context
def rerun_cmd(
    ctx: click.Context,
    run_ref: str,
    task_ids: tuple[str, ...],
    history_dir: Path | None,
    other_dataset: bool,
    recorded_retrieval: bool,
    record_as: str | None,
    cache_dir: Path | None,
    command: str | None,
    timeout_s: float,
    restore: str | None,
    as_json: bool,
) -> None:
    """Re-execute RUN's episodes (or TASKs) against their recording; exit 0 only when every one is identical.

    Observations come from the recorded events, LLM answers from the recorded calls with the same fingerprint
    and ordinal; the first decision that differs (prompt, action, history query, hits, end) is reported.
    A run another agent recorded is re-executed by that agent: --exec CMD; a Browser-Use run (record --agent
    browser-use) re-executes Browser-Use in this process, its model calls served from the recording.
    """
    if command is not None:
        if record_as or recorded_retrieval or history_dir:
            raise click.UsageError(
                "--exec serves the recording as it is: no --record-as, --recorded-retrieval, --history"
            )
        _rerun_exec(ctx, run_ref, task_ids, command, timeout_s, restore == "har", as_json)  # exits
        return
    if restore:
        raise click.UsageError("--restore har serves pages to an agent run with --exec CMD")
    if _by_browser_use(ctx, run_ref):
        if record_as or recorded_retrieval or history_dir:
            raise click.UsageError(
                "a Browser-Use run is re-executed against its recording as it is: no --record-as, "
                "--recorded-retrieval, --history"
            )
        _rerun_browser_use(ctx, run_ref, task_ids, as_json)  # exits
        return
    from p2w_runtime.rerun import RerunOptions, RerunReport, rerun

    options = RerunOptions(
        task_ids=task_ids,
        history_dir=history_dir,
        other_dataset=other_dataset,
        recorded_retrieval=recorded_retrieval,
        record_as=record_as,
        cache_dir=cache_dir,
    )

    async def _rerun() -> RerunReport:
        async with open_db(ctx) as store:
            with bar_or_lines("re-executing") as say:
                return await rerun(store, run_ref, options, _told(say))

    report = run(_rerun())
    if as_json:
        echo_json(
            {
                "run_id": report.run.run_id,
                "label": report.run.label,
                "identical": report.identical,
                "seconds": round(report.seconds, 3),
                "recorded_run_id": report.recorded_run_id,
                "episodes": [e.as_dict() for e in report.episodes],
            }
        )
    else:
        _echo_headline(f"rerun of {report.run.label} ({report.run.run_id})", report.episodes)
        for episode in report.episodes:
            _echo_episode(episode.task_id, episode.mismatch)
        if report.recorded_run_id:
            click.echo(safe(f"recorded as {options.record_as} ({report.recorded_run_id})"))
    sys.exit(0 if report.identical else 1)


def _told(say: Callable[[str], None]) -> Callable[[ReplayedEpisode], None]:
    """The progress line of each episode as it is re-executed."""

    def told(episode: ReplayedEpisode) -> None:
        m = episode.mismatch
        say(f"{episode.task_id}: " + ("identical" if m is None else f"differs at step {m.step} ({m.kind})"))

    return told


def _echo_headline(what: str, episodes: Sequence[ReplayedEpisode]) -> None:
    same = sum(e.identical for e in episodes)
    click.echo(
        safe(
            f"{what}: {counted(len(episodes), 'episode')}, {same} identical, {len(episodes) - same} differ "
            f"({waited():.2f} s)"
        )
    )


def _echo_episode(task_id: str, m: Mismatch | None) -> None:
    if m is None:
        click.echo(safe(f"  {task_id}: identical"))
        return
    at = f"step {m.step}: " if m.step is not None else ""
    click.echo(safe(f"  {task_id}: {at}{m.kind}"))
    click.echo(safe(f"      recorded:    {m.recorded}"))
    click.echo(safe(f"      re-executed: {m.reexecuted}"))
    for line in (m.diff or "").splitlines():
        click.echo("      " + safe(line))


def _rerun_exec(
    ctx: click.Context,
    run_ref: str,
    task_ids: tuple[str, ...],
    command: str,
    timeout_s: float,
    restore_har: bool,
    as_json: bool,
) -> None:
    """``--exec``: the recording agent's command, once per episode, against the replay endpoint."""
    from p2w_runtime.exec import rerun_exec

    def go(store: EventStore, told: Callable[[ExecEpisode], None]) -> Awaitable[ExecReport]:
        return rerun_exec(
            store, run_ref, command, task_ids, timeout_s=timeout_s, restore_har=restore_har, progress=told
        )

    _report_exec(ctx, go, as_json)


def _by_browser_use(ctx: click.Context, run_ref: str) -> bool:
    """Whether ``record --agent browser-use`` recorded the run: ``rerun`` re-executes Browser-Use itself."""
    from p2w_runtime.domain import find_run
    from p2w_runtime.integrations.browser_use import AGENT

    async def _agent() -> str:
        async with open_db(ctx, create=False) as store:
            return (await find_run(store, run_ref)).started.agent

    return run(_agent()) == AGENT


def _rerun_browser_use(ctx: click.Context, run_ref: str, task_ids: tuple[str, ...], as_json: bool) -> None:
    """Browser-Use re-executed in this process on the demo sites, its model calls served from the recording."""
    from p2w_runtime.demo.sites import DemoHosting
    from p2w_runtime.exec import rerun_browser_use

    def go(store: EventStore, told: Callable[[ExecEpisode], None]) -> Awaitable[ExecReport]:
        return rerun_browser_use(store, run_ref, task_ids, hosting=DemoHosting(), progress=told)

    _report_exec(ctx, go, as_json)


def _report_exec(
    ctx: click.Context,
    go: Callable[[EventStore, Callable[[ExecEpisode], None]], Awaitable[ExecReport]],
    as_json: bool,
) -> None:
    """Run ``go`` (an outside agent re-executed per episode) with progress lines, report it and exit 1 on a
    divergence."""

    async def _go() -> ExecReport:
        async with open_db(ctx, create=False) as store:
            with bar_or_lines("re-executing") as say:
                return await go(store, _told(say))

    report = run(_go())
    if as_json:
        echo_json(
            {
                "run_id": report.run.run_id,
                "label": report.run.label,
                "agent": report.run.started.agent,
                "command": report.command,
                "identical": report.identical,
                "episodes": [e.as_dict() for e in report.episodes],
            }
        )
    else:
        how = f"through `{report.command}`" if report.command else "in process"
        _echo_headline(
            f"rerun of {report.run.label} ({report.run.run_id}) by {report.run.started.agent} {how}", report.episodes
        )
        for episode in report.episodes:
            _echo_episode(episode.task_id, episode.mismatch)
            if not episode.identical and episode.returncode != 0:
                ended = "was killed at its timeout" if episode.returncode is None else f"exited {episode.returncode}"
                click.echo(safe(f"      the agent {ended}: {episode.stderr_tail}"))
    sys.exit(0 if report.identical else 1)

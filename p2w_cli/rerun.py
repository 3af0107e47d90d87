"""`rerun`: re-execute today's agent code over a recorded run, without browser or LLM, and report divergences."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import click

from p2w_cli._common import RUN_LABEL, echo_json, open_db, run, waited
from p2w_cli._options import cache_dir_option, exec_timeout_option, history_option, other_dataset_option
from p2w_cli.progress import bar_or_lines
from p2w_cli.render.terminal import safe
from p2w_cli.render.words import counted

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Sequence

    from p2w_runtime.exec import ExecReport
    from p2w_runtime.rerun import Mismatch, ReplayedEpisode, RerunReport
    from p2w_runtime.store import EventStore

R = TypeVar("R")


@click.command("rerun")
@click.argument("run_ref", metavar="RUN")
@click.argument("task_ids", metavar="[TASK...]", nargs=-1)
@history_option
@other_dataset_option
@click.option(
    "--recorded-retrieval", is_flag=True, help="Answer history queries with the recorded hits; search nothing."
)
@click.option("--record-as", "record_as", type=RUN_LABEL, help="Write the re-executed episodes as a new run.")
@cache_dir_option
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
    RUN is re-executed by the agent integration that recorded it (record --agent): p2w-rt's agent, Browser-Use
    (in this process, its model calls served from the recording) or an installed plugin's; an agent that runs as
    a command, by --exec CMD.
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
    from p2w_runtime.demo.sites import DemoHosting
    from p2w_runtime.integrations import rerun_recorded
    from p2w_runtime.rerun import RerunOptions, RerunReport

    options = RerunOptions(
        task_ids=task_ids,
        history_dir=history_dir,
        other_dataset=other_dataset,
        recorded_retrieval=recorded_retrieval,
        record_as=record_as,
        cache_dir=cache_dir,
    )

    def go(store: EventStore, told: Callable[[ReplayedEpisode], None]) -> Awaitable[RerunReport | ExecReport]:
        return rerun_recorded(store, run_ref, options, told, hosting=DemoHosting())

    report = _re_executed(ctx, go)
    if isinstance(report, RerunReport):
        _echo_own(report, record_as, as_json)
    else:
        _echo_exec(report, as_json)
    sys.exit(0 if report.identical else 1)


def _re_executed(ctx: click.Context, go: Callable[[EventStore, Callable[[ReplayedEpisode], None]], Awaitable[R]]) -> R:
    """``go`` (the run re-executed episode by episode) against the open store, with a progress line per episode."""

    async def _go() -> R:
        async with open_db(ctx) as store:
            with bar_or_lines("re-executing") as say:
                return await go(store, _told(say))

    return run(_go())


def _echo_own(report: RerunReport, record_as: str | None, as_json: bool) -> None:
    """The own agent's report: the divergence of each episode, and the run ``--record-as`` wrote."""
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
        return
    _echo_headline(f"rerun of {report.run.label} ({report.run.run_id})", report.episodes)
    for episode in report.episodes:
        _echo_episode(episode.task_id, episode.mismatch)
    if report.recorded_run_id:
        click.echo(safe(f"recorded as {record_as} ({report.recorded_run_id})"))


def _told(say: Callable[[str], None]) -> Callable[[ReplayedEpisode], None]:
    """The progress line of each episode as it is re-executed."""

    def told(episode: ReplayedEpisode) -> None:
        m = episode.mismatch
        at = "" if m is None or m.step is None else f" at step {m.step}"
        say(f"{episode.task_id}: " + ("identical" if m is None else f"differs{at} ({m.kind})"))

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
    click.echo(safe(f"      recorded:    {_or_none(m.recorded)}"))
    click.echo(safe(f"      re-executed: {_or_none(m.reexecuted)}"))
    for line in (m.diff or "").splitlines():
        click.echo("      " + safe(line))


def _or_none(decision: str | None) -> str:
    """A side of a mismatch; "(none)" where that side made no decision there (an agent that stopped first)."""
    return "(none)" if decision is None else decision


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

    def go(store: EventStore, told: Callable[[ReplayedEpisode], None]) -> Awaitable[ExecReport]:
        return rerun_exec(
            store, run_ref, command, task_ids, timeout_s=timeout_s, restore_har=restore_har, progress=told
        )

    report = _re_executed(ctx, go)
    _echo_exec(report, as_json)
    sys.exit(0 if report.identical else 1)


def _echo_exec(report: ExecReport, as_json: bool) -> None:
    """An outside agent's report (through its command, or in process): each episode's divergence and exit."""
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
        return
    how = f"through `{report.command}`" if report.command else "in process"
    _echo_headline(
        f"rerun of {report.run.label} ({report.run.run_id}) by {report.run.started.agent} {how}", report.episodes
    )
    for episode in report.episodes:
        _echo_episode(episode.task_id, episode.mismatch)
        if not episode.identical and episode.returncode != 0:
            ended = "was killed at its timeout" if episode.returncode is None else f"exited {episode.returncode}"
            click.echo(safe(f"      the agent {ended}" + (f": {episode.stderr_tail}" if episode.stderr_tail else "")))

"""`fork`: branch a recorded episode at a step and continue it live with a model, scheme or prompt of choice."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from p2w_cli._common import RUN_LABEL, echo_json, in_store, waited
from p2w_cli._options import (
    api_key_option,
    base_url_option,
    cache_dir_option,
    exec_timeout_option,
    history_option,
    llm_timeout_option,
    max_retries_option,
    other_dataset_option,
)
from p2w_cli.progress import piped_lines
from p2w_cli.render.terminal import safe
from p2w_cli.render.words import counted

if TYPE_CHECKING:
    from p2w_runtime.exec import LiveModel
    from p2w_runtime.rerun import ForkSummary


@click.command("fork")
@click.argument("run_ref", metavar="RUN")
@click.argument("task_id", metavar="TASK")
@click.option("--at-step", "at_step", type=click.IntRange(1), required=True, help="The first step to run live.")
@click.option("--model", help="Model for the live part (default: the run's).")
@click.option("--scheme", type=click.Choice(["no-history", "on-demand", "pre-execution"]), help="Default: the run's.")
@click.option("--label", type=RUN_LABEL, help="Label of the new run (default: RUN-TASK-at-K).")
@click.option(
    "--restore",
    type=click.Choice(["replay-actions", "har"]),
    help="How the browser reaches step K: re-play the recorded actions on the live site, or the same against "
    "the source's recorded HAR (needs `record --har`). Default: har when the source has one.",
)
@base_url_option
@api_key_option
@llm_timeout_option
@max_retries_option
@click.option("--chromium", envvar="P2W_CHROMIUM", help="Chromium executable. Env: P2W_CHROMIUM.")
@history_option
@other_dataset_option
@cache_dir_option
@click.option(
    "--exec",
    "command",
    metavar="CMD",
    help="Fork a run another agent recorded through the recording API: CMD (that agent, through the shell, with "
    "its own browser), its model calls before step K served from the recording, later ones by the live model; it "
    "writes the new run. Not a run of record --exec (docs/design/exec.md).",
)
@exec_timeout_option("With --exec: seconds the agent may take before it is killed.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def fork_cmd(
    ctx: click.Context,
    run_ref: str,
    task_id: str,
    at_step: int,
    model: str | None,
    scheme: str | None,
    label: str | None,
    restore: str | None,
    base_url: str | None,
    api_key: str | None,
    llm_timeout_s: float,
    max_retries: int,
    chromium: str | None,
    history_dir: Path | None,
    other_dataset: bool,
    cache_dir: Path | None,
    command: str | None,
    timeout_s: float,
    as_json: bool,
) -> None:
    """Re-play TASK of RUN up to step K (browser restored by re-playing its actions, against the recorded HAR
    with --restore har; agent state from the recording), then continue live; the new episode is recorded in a
    new run whose `episode.started` names the source episode and step."""
    if command is not None:
        if scheme or restore or history_dir or other_dataset or cache_dir or chromium:
            raise click.UsageError(
                "--exec runs the agent as it is, with its own browser: no --scheme, --restore, --history, --chromium "
                "(only rerun --exec --restore har serves recorded pages)"
            )
        from p2w_runtime.exec import LiveModel

        live = LiveModel(base_url, model, api_key, timeout_s=llm_timeout_s, max_retries=max_retries)
        _fork_exec(ctx, run_ref, task_id, at_step, command, live, label, timeout_s, as_json)
        return
    from p2w_runtime.demo.sites import DemoHosting
    from p2w_runtime.llm import RetryPolicy
    from p2w_runtime.rerun import ForkRequest, fork

    request = ForkRequest(
        run_ref=run_ref,
        task_id=task_id,
        at_step=at_step,
        model=model,
        scheme=scheme,  # type: ignore[arg-type]  # click.Choice: a Scheme
        label=label,
        base_url=base_url,
        api_key=api_key,
        chromium=chromium,
        history_dir=history_dir,
        other_dataset=other_dataset,
        cache_dir=cache_dir,
        restore=restore,  # type: ignore[arg-type]  # click.Choice: a Restore
        retry=RetryPolicy(max_retries=max_retries),
        llm_timeout_s=llm_timeout_s,
    )

    summary = in_store(ctx, lambda store: fork(store, request, hosting=DemoHosting()))
    o = summary.outcome
    steps = counted(o.steps, "step")
    failed = _failed(summary) if o.end_reason == "error" and summary.left != "closed" else None
    if (say := piped_lines()) is not None:  # the one episode has ended: its line, like record's
        spent = f"{o.tokens} tokens spent ({summary.served_tokens} served)"
        say(f"{task_id}: {failed or f'{o.end_reason}, {steps}'}, {spent}")
    if as_json:
        echo_json(
            {
                "run_id": summary.run_id,
                "label": summary.label,
                "source": summary.source_stream,
                "at_step": summary.at_step,
                "restore": summary.restore,
                "end_reason": o.end_reason,
                "answer": o.answer,
                "steps": o.steps,
                "tokens": o.tokens,
                "served_tokens": summary.served_tokens,
                "replayed_steps": summary.replayed_steps,
                "last_step": summary.last_step,
                "detail": o.detail,
                "left": summary.left,
                "aborted": summary.aborted,
            }
        )
    elif summary.left == "closed":
        click.echo(
            safe(
                f"{summary.label} ({summary.run_id}) had recorded its fork of {summary.source_stream} at step "
                f"{summary.at_step} ({o.end_reason} after {steps}) before it was stopped: the run is closed now"
            )
        )
    else:
        click.echo(
            safe(
                f"forked {summary.source_stream} at step {summary.at_step} into {summary.label} ({summary.run_id}), "
                f"restored by {summary.restore}: "
                f"{failed or f'{o.end_reason} after {steps}'}, {o.tokens} tokens spent "
                f"({summary.served_tokens} more served from the recording for steps before {summary.at_step})"
                + (f"; {o.detail}" if o.detail else "")
                + _completing(summary)
                + f" ({waited():.2f} s)"
            )
        )
    if failed is not None:
        click.echo(safe(f"error: the forked episode failed: {failed}: {o.detail}"), err=True)
        sys.exit(1)


def _completing(summary: ForkSummary) -> str:
    """What became of the run the same fork left unfinished, when it was one."""
    return "" if summary.left == "new" else f"; {_completed(summary.aborted)}"


def _completed(aborted: int) -> str:
    return f"completed the run the same fork left unfinished, {counted(aborted, 'half episode')} aborted"


def _failed(summary: ForkSummary) -> str:
    """Where an episode that ended in an error stopped: how many of its steps were the source's, replayed, and which
    step failed (its ``steps`` count the completed ones, replayed and live alike)."""
    replayed = f"{counted(summary.replayed_steps, 'step')} replayed from the source"
    if not summary.went_live:
        return f"{replayed}, then replaying step {summary.last_step} failed"
    first = " (the first live step)" if summary.last_step == summary.at_step else ""
    return f"{replayed}, then step {summary.last_step}{first} failed"


def _fork_exec(
    ctx: click.Context,
    run_ref: str,
    task_id: str,
    at_step: int,
    command: str,
    live: LiveModel,
    label: str | None,
    timeout_s: float,
    as_json: bool,
) -> None:
    """``--exec``: the agent that recorded RUN, its prefix served from the recording, live from step K."""
    from p2w_runtime.exec import fork_exec

    done = in_store(
        ctx, lambda store: fork_exec(store, run_ref, task_id, at_step, command, live, label=label, timeout_s=timeout_s)
    )
    m, finished = done.prefix_mismatch, done.finished
    if as_json:
        echo_json(
            {
                "run_id": done.run.run_id if done.run else None,
                "label": done.label,
                "source": done.source_stream,
                "at_step": at_step,
                "exit_code": finished.status if finished else None,
                "prefix_identical": m is None,
                "prefix_mismatch": m.as_dict() if m else None,
                "left": done.left,
                "aborted": done.aborted,
            }
        )
    elif done.ended is not None and done.run is not None:
        o = done.ended
        click.echo(
            safe(
                f"{done.label} ({done.run.run_id}) had recorded its fork of {done.source_stream} at step {at_step} "
                f"({o.end_reason} after {counted(o.steps, 'step')}) before it was stopped: the run is closed now"
            )
        )
    elif done.run is not None and finished is not None:
        again = "" if done.left == "new" else f"; {_completed(done.aborted)}"
        click.echo(
            safe(
                f"forked {done.source_stream} at step {at_step} into {done.label} ({done.run.run_id}) through "
                f"`{command}`: {done.run.episodes} episode, {done.run.status}; the agent exited "
                f"{finished.status}{again} ({waited():.2f} s)"
            )
        )
    if finished is None:
        return
    if m is not None:
        click.echo(
            safe(f"error: before step {at_step} the agent diverged from its recording: {m.reexecuted}"), err=True
        )
    if done.run is None:
        click.echo(safe(f"error: the agent wrote no run {done.label!r}; it {finished.how_it_ended()}"), err=True)
    elif finished.status != 0:
        click.echo(safe(f"error: the agent failed: it {finished.how_it_ended()}"), err=True)
    if done.run is None or m is not None or finished.status != 0:
        sys.exit(1)

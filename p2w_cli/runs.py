"""`runs` and `show`: what is in the store, down to one episode's timeline."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from p2w_cli._common import console, db_path, echo_json, open_db, run
from p2w_cli.progress import show_progress
from p2w_cli.render.terminal import cell, markup

if TYPE_CHECKING:
    from p2w_runtime.domain import EpisodeRef, RunInfo


@click.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object per run.")
@click.option("--progress", "progress_of", metavar="LABEL", help="Task by task progress of a run recorded by workers.")
@click.pass_context
def runs(ctx: click.Context, as_json: bool, progress_of: str | None) -> None:
    """List the runs in the store."""
    from rich.table import Table

    if progress_of is not None:
        show_progress(ctx, progress_of, as_json=as_json)
        return

    from p2w_runtime.domain import list_runs

    async def _runs() -> list[Any]:
        async with open_db(ctx) as store:
            return await list_runs(store)

    found = run(_runs())
    if as_json:
        for r in found:
            echo_json(
                {
                    "run_id": r.run_id,
                    "label": r.label,
                    "source": r.started.source,
                    "agent": r.started.agent,
                    "model": r.started.backbone_model,
                    "scheme": r.started.scheme,
                    "episodes": r.episodes,
                    "attempts": r.attempts,
                    "status": r.status,
                    "recorded_at": r.recorded_at,
                }
            )
        return
    table = Table("run id", "label", "source", "agent", "model", "scheme", "episodes", "status", "recorded at")
    for r in found:
        table.add_row(
            *map(cell, (r.run_id, r.label, r.started.source, r.started.agent, r.started.backbone_model)),
            cell(r.started.scheme or "-"),
            str(r.episodes),
            cell(r.status),
            cell(r.recorded_at[:19]),
        )
    console.print(table if found else cell(f"no runs in {db_path(ctx)}"))


ANSWER_WIDTH = 60
"""Characters of an answer the episode listing shows; a longer one ends in "… (N characters)"."""


@click.command()
@click.argument("run_ref", metavar="RUN")
@click.argument("task_id", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the decoded events as JSON lines.")
@click.pass_context
def show(ctx: click.Context, run_ref: str, task_id: str | None, as_json: bool) -> None:
    """Show a run's episodes, or one episode's timeline (step, event type, gist) with its judgments and errors."""
    from rich.table import Table

    from p2w_runtime.domain import counted, episode_of, episodes_of, find_run

    if task_id is not None:  # the listing needs none of these; importing them (the openai client) takes seconds
        from p2w_cli.render.judging import format_judgment
        from p2w_runtime.domain.trajectory import load_trajectory
        from replay.classify import read_classifications
        from replay.judges import episode_judgments
        from replay.timeline import timeline

    derived: list[Any] = []
    left_out: list[str] = []

    async def _load() -> tuple[Any, list[Any]]:
        async with open_db(ctx) as store:
            info = await find_run(store, run_ref)
            attempts = await episodes_of(store, info.run_id, every_attempt=True)
            episodes = counted(attempts)
            if task_id is None:
                shown = {ref.stream for ref in episodes}
                left_out.extend(
                    f"{episode_of(ref.stream)} ({ref.end_reason or 'unfinished'})"
                    for ref in attempts
                    if ref.stream not in shown
                )
                return info, episodes
            stream = _episode_stream(info, task_id, attempts, episodes)
            derived.extend(await episode_judgments(store, stream))
            derived.extend(
                r for r in await read_classifications(store, info.run_id) if r.classification.episode_stream == stream
            )
            if as_json:  # the events themselves
                return info, [e.decode() async for e in store.read_stream(stream)]
            return info, timeline(await load_trajectory(store, stream))

    info, items = run(_load())
    if as_json:
        if task_id is None:
            for ref in items:
                echo_json(
                    {"stream": ref.stream, "task_id": ref.task_id, "level": ref.level, "end_reason": ref.end_reason}
                )
        else:
            for event in items:
                echo_json(event.model_dump(mode="json"))
        return
    console.print(
        f"[bold]{markup(info.label)}[/] "
        + markup(
            f"{info.run_id}  {info.started.agent} / {info.started.backbone_model} / "
            f"{info.started.scheme or '-'}  ({info.started.source})"
        )
    )
    if task_id is None:
        from p2w_cli.render.terminal import clip

        table = Table("task", "level", "end", "steps", "answer")
        for ref in items:
            end = ref.finished
            assert end is not None  # only finished attempts count
            table.add_row(
                cell(ref.task_id),
                str(ref.level),
                cell(end.end_reason),
                str(end.steps),
                cell(clip(end.answer or "", ANSWER_WIDTH)),
            )
    else:
        table = Table("seq", "step", "event", "gist")
        for row in items:
            table.add_row(str(row.seq), "-" if row.step is None else str(row.step), cell(row.type), cell(row.gist))
    console.print(table)
    if left_out:
        console.print(cell(f"not counted (a later attempt or none finished): {', '.join(left_out)}"))
    for record in derived:
        if hasattr(record, "judgment"):
            console.print(format_judgment(record.judgment, event_id=record.event_id))
        else:
            c = record.classification
            console.print(
                f"[bold]{markup(c.classifier_id)} v{c.classifier_version}[/]  "
                + markup(f"{c.task_id}: " + (", ".join(label.label for label in c.labels) or "no errors"))
            )
            for label in c.labels:
                events = label.evidence.event_ids
                cited = f"  (events {', '.join(events)})" if events else ""
                console.print(cell(f"  {label.label}: {label.explanation}{cited}"))


def _episode_stream(info: RunInfo, task_id: str, attempts: list[EpisodeRef], episodes: list[EpisodeRef]) -> str:
    """An attempt by its number (``TASK#2``; ``TASK#1`` is the first, stream ``TASK``), else the task's counted
    episode; one clear error otherwise."""
    from p2w_runtime.domain import ATTEMPT_MARK, UnknownRun, episode_stream

    base, sep, number = task_id.partition(ATTEMPT_MARK)
    named = episode_stream(info.run_id, base if number == "1" else task_id)
    if sep and any(ref.stream == named for ref in attempts):
        return named
    for ref in episodes:
        if ref.task_id == task_id:
            return ref.stream
    tried = [ref.episode_id for ref in attempts if ref.task_id == task_id]
    if tried:
        raise UnknownRun(
            f"run {info.label!r} has no finished episode for task {task_id!r} (attempts: {', '.join(tried)})"
        )
    raise UnknownRun(f"run {info.label!r} has no episode for task {task_id!r}")

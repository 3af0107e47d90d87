"""`runs` and `show`: what is in the store, down to one episode's timeline."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import click

from p2w_cli._common import console, db_path, echo_json, in_store, open_db, run
from p2w_cli.progress import show_progress
from p2w_cli.render.terminal import cell, markup, print_rows, print_table, safe, utc_time
from p2w_runtime.errors import UserError

if TYPE_CHECKING:
    from p2w_runtime.domain import EpisodeRef, RunInfo
    from p2w_runtime.store import EventStore


@click.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object per run.")
@click.option("--progress", "progress_of", metavar="LABEL", help="Task by task progress of a run recorded by workers.")
@click.pass_context
def runs(ctx: click.Context, as_json: bool, progress_of: str | None) -> None:
    """List the runs in the store."""
    if progress_of is not None:
        show_progress(ctx, progress_of, as_json=as_json)
        return

    from p2w_runtime.domain import list_runs

    found = in_store(ctx, list_runs)
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
    if not found:
        console.print(cell(f"no runs in {db_path(ctx)}"))
        return
    rows = [
        [
            *map(safe, (r.run_id, r.label, r.started.source, r.started.agent, r.started.backbone_model)),
            safe(r.started.scheme or "-"),
            str(r.episodes),
            safe(r.status),
            utc_time(r.recorded_at),
        ]
        for r in found
    ]
    print_table(console, RUNS_HEADERS, rows)  # rich's table drawn without rich.table (docs/design/startup.md)


RUNS_HEADERS = ["run id", "label", "source", "agent", "model", "scheme", "episodes", "status", "recorded at"]


ANSWER_WIDTH = 60
"""Characters of an answer the episode listing shows; a longer one ends in "… (N characters)"."""


@click.command()
@click.argument("run_ref", metavar="RUN")
@click.argument("task_id", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the decoded events as JSON lines, streamed.")
@click.option(
    "--from-step", type=click.IntRange(min=1), help="With TASK: start at this step (events before it are skipped)."
)
@click.option("--steps", type=click.IntRange(min=1), help="With TASK: show this many steps (default: to the end).")
@click.pass_context
def show(
    ctx: click.Context, run_ref: str, task_id: str | None, as_json: bool, from_step: int | None, steps: int | None
) -> None:
    """Show a run's episodes, or one episode's timeline (step, event type, gist) with its judgments and errors.

    A timeline is read and printed a chunk of events at a time, so the first lines of a 200,000-step episode
    come at once (pipe it to a pager) and memory stays bounded; --from-step and --steps show a window of it."""
    if task_id is None:
        if from_step is not None or steps is not None:
            raise click.UsageError("--from-step and --steps need a TASK")
        _show_listing(ctx, run_ref, as_json)
    else:
        _show_episode(ctx, run_ref, task_id, as_json, from_step, steps)


def _show_listing(ctx: click.Context, run_ref: str, as_json: bool) -> None:
    from p2w_runtime.domain import counted, episode_of, episodes_of, find_run

    left_out: list[str] = []

    async def _load() -> tuple[RunInfo, list[EpisodeRef]]:
        async with open_db(ctx) as store:
            info = await find_run(store, run_ref)
            attempts = await episodes_of(store, info.run_id, every_attempt=True)
            episodes = counted(attempts)
            shown = {ref.stream for ref in episodes}
            left_out.extend(
                f"{episode_of(ref.stream)} ({ref.end_reason or 'unfinished'})"
                for ref in attempts
                if ref.stream not in shown
            )
            return info, episodes

    info, items = run(_load())
    ends = [(ref, ref.finished) for ref in items if ref.finished is not None]  # only finished attempts count
    if as_json:  # what the table shows, the answer whole
        for ref, end in ends:
            echo_json(
                {
                    "stream": ref.stream, "task_id": ref.task_id, "level": ref.level, "end_reason": end.end_reason,
                    "steps": end.steps, "answer": end.answer, "final_url": end.final_url, "cost_usd": end.cost_usd,
                }
            )  # fmt: skip
        return
    from p2w_cli.render.terminal import clip

    _print_run_header(info)
    rows = []
    for ref, end in ends:
        rows.append(
            [
                safe(ref.task_id),
                str(ref.level),
                safe(end.end_reason),
                str(end.steps),
                safe(clip(end.answer or "", ANSWER_WIDTH)),
            ]
        )
    print_table(console, ["task", "level", "end", "steps", "answer"], rows)
    if left_out:
        console.print(cell(f"not counted (a later attempt or none finished): {', '.join(left_out)}"))


def _print_run_header(info: RunInfo) -> None:
    console.print(
        f"[bold]{markup(info.label)}[/] "
        + markup(
            f"{info.run_id}  {info.started.agent} / {info.started.backbone_model} / "
            f"{info.started.scheme or '-'}  ({info.started.source})"
        )
    )


TIMELINE_HEADERS = ["seq", "step", "event", "gist"]


def _show_episode(
    ctx: click.Context, run_ref: str, task_id: str, as_json: bool, from_step: int | None, steps: int | None
) -> None:
    """One episode's timeline (or its events as JSON lines), streamed from the store a chunk at a time."""
    from p2w_rt.replay.timeline import GIST_WIDTH, timeline_rows
    from p2w_runtime.domain import EPISODE_TYPES, counted, episodes_of, find_run
    from p2w_runtime.domain.trajectory import EPISODE_CHUNK, EpisodeChunks

    async def _show() -> None:
        async with open_db(ctx) as store:
            info = await find_run(store, run_ref)
            attempts = await episodes_of(store, info.run_id, every_attempt=True)
            stream = _episode_stream(info, task_id, attempts, counted(attempts))
            episode = await EpisodeChunks.open(store, stream)
            after = 0 if from_step is None else await episode.seq_of_step(from_step) - 1
            if from_step is not None and after >= episode.last_seq:
                raise await _past_the_end(store, info, task_id, stream, from_step)
            until = None if steps is None else await episode.seq_of_step((from_step or 1) + steps) - 1
            if as_json:
                async for stored in store.read_stream(stream, after_seq=after):
                    if until is not None and stored.seq > until:
                        break
                    echo_json(stored.decode().model_dump(mode="json"))
                return
            rows = (
                [str(r.seq), "-" if r.step is None else str(r.step), safe(r.type), safe(r.gist)]
                async for r in timeline_rows(episode, after_seq=after, until_seq=until)
            )
            if episode.last_seq <= EPISODE_CHUNK:  # short: read whole (a broken chain prints nothing but its error),
                table = [r async for r in rows]  # laid out to its content, as it always was
                _print_run_header(info)
                print_table(console, TIMELINE_HEADERS, table)
            else:  # long: columns as wide as any row can be, printed as the rows come
                _print_run_header(info)
                digits = len(str(episode.last_seq))
                widths = [max(3, digits), max(4, digits), max(map(len, EPISODE_TYPES)), GIST_WIDTH]
                await _print_streamed(TIMELINE_HEADERS, rows, widths)
            shown_to = episode.last_seq if until is None else min(until, episode.last_seq)
            if after > 0 or shown_to < episode.last_seq:
                more = (
                    f"; more: --from-step {(from_step or 1) + steps}" if steps and shown_to < episode.last_seq else ""
                )
                console.print(cell(f"events {after + 1}-{shown_to} of {episode.last_seq}{more}"))
            # the judgments and errors after the timeline: reading them imports the judges and the openai client
            # (~1 s of CPU), which the first screen of a long episode need not wait for
            from p2w_cli.render.judging import format_judgment
            from p2w_rt.replay.classify import read_classifications
            from p2w_rt.replay.judges import episode_judgments

            derived: list[Any] = list(await episode_judgments(store, stream))
            derived.extend(
                r for r in await read_classifications(store, info.run_id) if r.classification.episode_stream == stream
            )
            for record in derived:
                _print_derived(record, format_judgment)

    run(_show())


async def _print_streamed(headers: list[str], rows: AsyncIterator[list[str]], widths: list[int]) -> None:
    """``print_rows`` over rows read from the store as they are printed: a page of rows at a time."""
    page: list[list[str]] = []
    first = True
    async for row in rows:
        page.append(row)
        if len(page) >= 200:
            print_rows(console, headers, page, widths, header=first, bottom=False)
            page, first = [], False
    print_rows(console, headers, page, widths, header=first, bottom=True)


def _print_derived(record: Any, format_judgment: Any) -> None:
    if hasattr(record, "judgment"):
        console.print(format_judgment(record.judgment, event_id=record.event_id))
        return
    c = record.classification
    console.print(
        f"[bold]{markup(c.classifier_id)} v{c.classifier_version}[/]  "
        + markup(f"{c.task_id}: " + (", ".join(label.label for label in c.labels) or "no errors"))
    )
    for label in c.labels:
        events = label.evidence.event_ids
        cited = f"  (events {', '.join(events)})" if events else ""
        console.print(cell(f"  {label.label}: {label.explanation}{cited}"))


async def _past_the_end(store: EventStore, info: RunInfo, task_id: str, stream: str, from_step: int) -> UserError:
    """``--from-step`` past an episode's last step is refused as ``fork --at-step`` is: an empty window would read as
    an empty episode."""
    from p2w_runtime.domain.trajectory import episode_shape

    shape = await episode_shape(store, stream)
    steps = 0 if shape is None else shape.last_step
    return UserError(
        f"run {info.label!r}, task {task_id!r}: the episode has {steps} step(s); "
        f"--from-step {from_step} is past its end"
    )


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
    # each attempt as this command takes it: the first is TASK#1 (its stream is TASK, which names the counted one)
    tried = [
        ref.episode_id if ref.episode_id != task_id else f"{task_id}{ATTEMPT_MARK}1"
        for ref in attempts
        if ref.task_id == task_id
    ]
    if tried:
        raise UnknownRun(
            f"run {info.label!r} has no finished episode for task {task_id!r}; show an attempt by its number: "
            f"{', '.join(tried)}"
        )
    raise UnknownRun(f"run {info.label!r} has no episode for task {task_id!r}")

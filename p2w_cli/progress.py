"""How far a command has got: `runs --progress L` (the workers of run L, task by task), and the bar on a terminal
or line per finished item (episode, batch) that `record`, `rerun`, `import-trajectories`, `migrate` and `fork`
print where a bar cannot show (a pipe, a log file, CI)."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from p2w_cli._common import console, echo_json, open_db, run
from p2w_cli.render.terminal import cell, safe
from p2w_cli.render.words import counted
from p2w_runtime.errors import clip

if TYPE_CHECKING:
    from p2w_runtime.agent import RunProgress

Say = Callable[[str], None]
"""``say(line)``: one finished item, told as ``[n] line`` on stderr."""


def piped_lines() -> Say | None:
    """A ``say`` numbering its lines when stderr is not a terminal, where a bar draws nothing; ``None`` on one."""
    if sys.stderr.isatty():
        return None
    told = 0

    def say(line: str) -> None:
        nonlocal told
        told += 1
        click.echo(safe(f"[{told}] {line}"), err=True)

    return say


@contextmanager
def bar_or_lines(label: str) -> Iterator[Say]:
    """``say(line)`` per finished item: on a terminal it advances a transient bar labelled ``label`` (the line is
    not shown), piped it prints the numbered line (``piped_lines``)."""
    lines = piped_lines()
    if lines is not None:
        yield lines
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from p2w_cli.render.terminal import terminal_console

    columns = (TextColumn(label), BarColumn(), TextColumn("{task.completed} done"), TimeElapsedColumn())
    with Progress(*columns, console=terminal_console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=None)
        yield lambda _line: bar.advance(task)


class EpisodeLines:
    """A ``record`` progress callback for a stderr that is not a terminal (a pipe, a log file, CI), where the bar
    draws nothing: one line per finished episode, ``[n/total] TASK: END_REASON, S steps, T tokens, E s elapsed``
    (elapsed since the command started), an error's detail after it."""

    def __init__(self) -> None:
        self._started = time.monotonic()
        self._told = 0
        self._before: int | None = None  # episodes done before this command (a resume's kept ones)

    def __call__(self, state: RunProgress) -> None:
        if self._before is None:
            self._before = state.done - len(state.outcomes)
        for outcome in state.outcomes[self._told :]:
            self._told += 1
            elapsed = time.monotonic() - self._started
            line = (
                f"[{self._before + self._told}/{state.total}] {outcome.task_id}: {outcome.end_reason}, "
                f"{counted(outcome.steps, 'step')}, {outcome.tokens} tokens, {elapsed:.1f} s elapsed"
            )
            if outcome.end_reason == "error" and outcome.detail:
                line += f" ({clip(outcome.detail)})"
            click.echo(safe(line), err=True)


@contextmanager
def record_progress() -> Iterator[Callable[[RunProgress], None]]:
    """``record``'s progress callback: on a terminal a transient bar (done of total, failed, running, tokens,
    elapsed), elsewhere one line per finished episode (``EpisodeLines``)."""
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("recording"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} done"),
        TextColumn("{task.fields[failed]} failed, {task.fields[running]} running, {task.fields[tokens]} tokens"),
        TimeElapsedColumn(),
    )
    err = Console(stderr=True)
    lines = None if err.is_terminal else EpisodeLines()  # piped: the bar draws nothing, so say each finished episode
    bar_off = lines is not None  # rich would still print blank lines on stop
    with Progress(*columns, console=err, transient=True, disable=bar_off) as bar:
        task = bar.add_task("record", total=None, failed=0, running=0, tokens=0)

        def on_progress(state: RunProgress) -> None:
            if lines is not None:
                lines(state)
            bar.update(
                task,
                total=state.total,
                completed=state.done,
                failed=state.failed,
                running=state.running,
                tokens=state.tokens,
            )

        yield on_progress


def show_progress(ctx: click.Context, label: str, *, as_json: bool) -> None:
    from rich.table import Table

    from p2w_runtime.domain import counted, episodes_of, find_run

    async def _load() -> Any:
        async with open_db(ctx) as store:
            info = await find_run(store, label)
            attempts = await episodes_of(store, info.run_id, every_attempt=True)
            return info, await store.work_items(info.run_id), attempts, counted(attempts)

    info, items, attempts, kept = run(_load())
    if not items:
        raise click.ClickException(f"run {label} has no work items: it was not recorded with --worker")
    now = time.time()
    ends_of = {ref.task_id: ref.end_reason for ref in kept}
    tries: dict[str, list[str | None]] = {}
    for a in attempts:
        tries.setdefault(a.task_id, []).append(a.end_reason)
    rows = []
    for item in items:
        if item.done:
            state = "done"
        elif item.owner is None:
            state = "to do"
        elif item.lease_until < now:
            state = "abandoned"
        else:
            state = "running"
        ends = tries.get(item.task_id, [])
        rows.append(
            {"task_id": item.task_id, "state": state, "host": item.host, "pid": item.pid,
             "end_reason": ends_of.get(item.task_id) if item.done else None,
             "lease_left_s": round(item.lease_until - now, 1) if state == "running" else None,
             "attempts": len(ends), "aborted": sum(e == "aborted" for e in ends)}
        )  # fmt: skip
    if as_json:
        for row in rows:
            echo_json({"run_id": info.run_id, "label": info.label, **row})
        return
    table = Table("task", "state", "worker", "lease left", "attempts", "aborted")
    for row in rows:
        worker = f"{row['host']}:{row['pid']}" if row["state"] == "running" else ""
        lease = f"{row['lease_left_s']:.0f} s" if row["lease_left_s"] is not None else ""
        table.add_row(
            cell(row["task_id"]), row["state"], cell(worker), lease, str(row["attempts"]), str(row["aborted"])
        )
    console.print(table)
    console.print(_per_worker(rows))
    counts = {s: sum(r["state"] == s for r in rows) for s in ("done", "running", "abandoned", "to do")}
    click.echo(
        f"{info.label}: {counts['done']}/{len(rows)} done, {counts['running']} running, "
        f"{counts['abandoned']} abandoned (lease expired), {counts['to do']} to do; run {info.status}"
    )


def _per_worker(rows: list[dict[str, Any]]) -> Any:
    """Claimed (running), done, failed (done, ended error or blocked) and abandoned tasks by worker (host:pid of
    the task's last holder)."""
    from rich.table import Table

    by: dict[str, dict[str, int]] = {}
    for row in rows:
        if row["host"] is None:
            continue
        counts = by.setdefault(
            f"{row['host']}:{row['pid']}", dict.fromkeys(("running", "done", "failed", "abandoned"), 0)
        )
        counts[row["state"]] += 1
        counts["failed"] += row["end_reason"] in {"error", "blocked"}
    table = Table("worker", "claimed (running)", "done", "failed", "abandoned")
    for worker, counts in sorted(by.items()):
        table.add_row(cell(worker), *(str(counts[k]) for k in ("running", "done", "failed", "abandoned")))
    return table

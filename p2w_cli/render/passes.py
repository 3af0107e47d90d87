"""What ``replay`` and ``classify`` share to show a family's passes: a progress bar per run, advanced with its counts,
and each error that failed several results. Each command's watch is its own module (``judge_pass``,
``classify_pass``), so neither command imports the other's family. The work, and the exit code, are the library's
(``judge_runs``, ``classify_runs``: one entry, ``replay.derived.run_family``); these only watch and render."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from p2w_cli.render.terminal import cell, markup
from p2w_rt.replay.derived import Tally
from p2w_runtime.domain import RunInfo


def pass_progress(verb: str, console: Console, *, transient: bool) -> Progress:
    """The bar of a pass over a run's episodes: ``{verb} {run label}``, done / total, and the counts so far in the
    closing line's words (``Bars.advance``). A ``transient`` bar is only for a person watching a terminal: on a pipe
    or file it is left out (it printed an empty line there)."""
    return Progress(
        TextColumn(f"{verb} {{task.description}}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[state]}"),
        TimeElapsedColumn(),
        console=console,
        transient=transient,
        disable=transient and not console.is_terminal,
    )


def repeated_failures(counts: Tally[Any], err: Console) -> None:
    """Each error that failed more than one result, once, with how many it failed."""
    for error, n in counts.failures.most_common():
        if n > 1:
            err.print(cell(f"  {n} results failed with: {error}", "red"))


class Bars:
    """One bar per run, made when ``bar`` is first asked for it, advanced with the run's counts so far: what the pass
    made (``made``: "judged"), reused and failed, as its closing line says them. Made is what a pass pays for, so it
    is shown as it grows, not left to be read as done minus cached."""

    def __init__(self, verb: str, made: str, console: Console, *, transient: bool) -> None:
        self.verb, self.made, self.console, self.transient = verb, made, console, transient
        self.totals: dict[str, int] = {}
        self.bars: dict[str, tuple[Progress, TaskID, Tally[Any]]] = {}

    def bar(self, info: RunInfo, counts: Tally[Any]) -> tuple[Progress, TaskID, Tally[Any]]:
        if info.run_id not in self.bars:
            progress = pass_progress(self.verb, self.console, transient=self.transient)
            task = progress.add_task(markup(info.label), total=self.totals[info.run_id], state="")
            progress.start()
            self.bars[info.run_id] = (progress, task, counts)
        return self.bars[info.run_id]

    def advance(self, info: RunInfo, outcome: Any) -> tuple[Progress, Tally[Any]]:
        progress, task, counts = self.bars[info.run_id]
        counts.add(outcome)
        state = f"{self.made} {counts.new} · cached {counts.cached} · failed {counts.failed}"
        progress.update(task, advance=1, state=state)
        return progress, counts

    def stop(self, info: RunInfo | None = None) -> None:
        for run_id, (progress, _, _) in self.bars.items():
            if info is None or info.run_id == run_id:
                progress.stop()

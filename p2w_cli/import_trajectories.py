"""`import-trajectories`: trajectory files written by the Persona2Web runners (or in a plugin's format) become one
recorded run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from p2w_cli._common import RUN_LABEL, open_db, run, terminal_progress
from p2w_cli._registry_choice import RegistryChoice, RegistryOption
from p2w_cli.progress import piped_lines
from p2w_cli.render.terminal import safe
from p2w_cli.render.words import counted


def _format_names() -> list[str]:
    from p2w_runtime.importers import import_formats

    return list(import_formats())


def _formats_help() -> str:
    from p2w_runtime.importers import import_formats

    listed = "; ".join(f"{f.name}: {f.help}" for f in import_formats().values())
    return f"Which runner wrote the files ({listed})."


@click.command("import-trajectories")
@click.option(
    "--format",
    "fmt",
    cls=RegistryOption,
    described=_formats_help,
    required=True,
    type=RegistryChoice("FORMAT", _format_names),
)
@click.option(
    "--tasks",
    "tasks_dir",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Task files: personalization_{1,2,3}/ folders or one flat folder.",
)
@click.option(
    "--history",
    "history_dir",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Memory banks, one {persona}.json per persona.",
)
@click.option(
    "--label", type=RUN_LABEL, help="Run label; importing again with the same label resumes an interrupted import."
)
@click.option(
    "--scheme",
    type=click.Choice(["on-demand", "pre-execution", "no-history"]),
    help="Override the scheme read from the file names ({on|pre|base|no}_{model}_{task}.json).",
)
@click.option("--model", help="Override the backbone model read from the files or their names.")
@click.option("--skip-bad", is_flag=True, help="Import the good files, list the bad ones, exit 0.")
@click.option("--examples", is_flag=True, help="Import the bundled example trajectories of --format.")
@click.argument("paths", metavar="PATH...", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.pass_context
def import_trajectories_cmd(
    ctx: click.Context,
    fmt: str,
    tasks_dir: Path | None,
    history_dir: Path | None,
    label: str | None,
    scheme: str | None,
    model: str | None,
    skip_bad: bool,
    examples: bool,
    paths: tuple[Path, ...],
) -> None:
    """Record trajectory files of the Persona2Web runners (or of a format an installed plugin adds) as one run,
    one episode per file.

    PATH is a trajectory file or a runner's output folder: its *.json files, AgentOccam's
    captcha_stopped/ (episodes end 'blocked'), Browser-Use's {task}.error.json (episodes end
    'error') and _summary.json (the exact model and scheme). Every file is checked
    before anything is written: a malformed file, an index outside the memory bank or an
    unknown task id stops the import with exit 1 and writes nothing, unless --skip-bad.
    With --examples, tasks, memory banks, files and label default to the bundled examples.
    """
    from p2w_rt.schemas import EpisodeFinished, NewEvent
    from p2w_runtime.demo.examples import example_paths
    from p2w_runtime.importers import import_trajectories

    if examples:
        bundled = example_paths()
        tasks_dir = tasks_dir or bundled.tasks_dir
        history_dir = history_dir or bundled.history_dir
        try:
            paths = paths or tuple(bundled.trajectories(fmt))
        except ValueError as exc:  # a plugin's format has no bundled examples
            raise click.UsageError(str(exc)) from None
        label = label or f"examples-{fmt.removeprefix('p2w-')}"
    required = (("--tasks", tasks_dir), ("--history", history_dir), ("--label", label))
    missing = [name for name, value in required if not value]
    if missing or not paths:
        raise click.UsageError(f"missing {', '.join(missing) or 'PATH'} (or use --examples)")
    assert tasks_dir is not None and history_dir is not None and label is not None

    say = piped_lines()  # on a terminal the checking/writing bars instead

    def written(task_id: str, finished: NewEvent) -> None:
        if say is not None and isinstance(p := finished.payload, EpisodeFinished):
            say(f"{task_id}: {p.end_reason}, {counted(p.steps, 'step')}")

    async def _import() -> Any:
        async with open_db(ctx, create=True) as store:
            with terminal_progress() as progress:
                return await import_trajectories(
                    store,
                    list(paths),
                    fmt=fmt,
                    tasks_dir=tasks_dir,
                    history_dir=history_dir,
                    label=label,
                    scheme=scheme,
                    model=model,
                    skip_bad=skip_bad,
                    progress=progress,
                    on_episode=written,
                )

    report = run(_import())
    verb = "resumed" if report.resumed else "created"
    episodes = counted(report.episodes, "episode")
    click.echo(safe(f"{verb} run {report.run_id} (label {report.label}, {report.format}): {episodes}"))
    click.echo(f"imported {len(report.imported)}, already imported {len(report.already)}, bad {len(report.bad)}")
    if report.crashed:
        click.echo(f"crashed tasks (episodes ended 'error'): {', '.join(report.crashed)}")
    if report.missing:
        click.echo(safe(f"missing tasks (in the config's task_ids, no trajectory file): {', '.join(report.missing)}"))
    for task_id, notes in report.notes.items():
        for note in notes:
            click.echo(safe(f"{task_id}: {note}"))
    for path in report.superseded:
        click.echo(f"superseded: {path} (the task also has a trajectory)", err=True)
    for error in report.bad:
        click.echo(safe(f"bad: {error}"), err=True)

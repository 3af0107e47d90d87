"""`attach-dataset`: give a run recorded before runs carried their dataset its task files and memory banks."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from p2w_cli._common import echo_json, in_store
from p2w_cli.render.words import counted
from p2w_runtime.terminal import safe

if TYPE_CHECKING:
    from p2w_rt.schemas import MemoryEntry
    from p2w_runtime.store import EventStore


def searched_index(model_id: str, entries: list[MemoryEntry]) -> str:
    """The index hash a recorded search over ``entries`` names: our retriever's, or an importer's (the bank's
    own hash, the runners recording no model)."""
    from p2w_runtime.data import memory_bank_hash
    from p2w_runtime.importers import IMPORTED_RETRIEVER
    from p2w_runtime.retrieval import index_hash

    bank = memory_bank_hash(entries)
    return bank if model_id == IMPORTED_RETRIEVER else index_hash(model_id, bank)


@click.command("attach-dataset")
@click.argument("run_ref", metavar="RUN")
@click.option(
    "--tasks",
    "tasks_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="The task folder RUN was recorded on (checked against its dataset_hash).",
)
@click.option(
    "--history",
    "history_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Its memory-bank folder (each bank checked against the index hash the run's searches recorded).",
)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def attach_dataset_cmd(
    ctx: click.Context, run_ref: str, tasks_dir: Path, history_dir: Path | None, as_json: bool
) -> None:
    """Store the files RUN was recorded on, after checking them, as one appended `run.dataset_attached` event;
    nothing recorded is rewritten. A run that already carries its dataset is left as it is."""
    from p2w_runtime.domain import Attached, attach_dataset, find_run

    async def _attach(store: EventStore) -> tuple[str, Attached]:
        found = await find_run(store, run_ref)
        return found.label, await attach_dataset(store, found, tasks_dir, history_dir, searched_index)

    label, attached = in_store(ctx, _attach)
    files = attached.files
    if as_json:
        echo_json(
            {
                "run": label,
                "appended": attached.appended,
                "tasks": len(files.tasks),
                "banks": len(files.banks),
                "banks_checked": attached.banks_checked,
            }
        )
        return
    if not attached.appended:
        click.echo(safe(f"run {label} already carries its dataset ({counted(len(files.tasks), 'task file')}, "
                        f"{counted(len(files.banks), 'memory bank')}); nothing appended"))  # fmt: skip
        return
    click.echo(
        safe(
            f"attached to run {label}: {counted(len(files.tasks), 'task file')}, "
            f"{counted(len(files.banks), 'memory bank')} "
            f"({attached.banks_checked} matched the index hash of a recorded search)"
        )
    )

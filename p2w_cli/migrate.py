"""`migrate`: move a whole store to another database, every hash chain verified on arrival."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from p2w_cli._common import StoreLocation, run, terminal_progress
from p2w_cli.progress import piped_lines


@click.command("migrate")
@click.option("--from", "source", type=StoreLocation(), required=True, help="The store to copy (file or URL).")
@click.option("--to", "target", type=StoreLocation(), required=True, help="Where to copy it (file or URL).")
def migrate_cmd(source: Path | str, target: Path | str) -> None:
    """Copy every run, event and blob of one store into another (SQLite <-> PostgreSQL).

    The source is verified before anything is written and the target after; running it again resumes an
    interrupted migration (events already there are skipped).
    """
    from p2w_runtime.store import migrate_store, open_store, shown_url

    say = piped_lines()

    def copied(phase: str, done: int, total: int) -> None:  # piped: a line per batch of events, new or already there
        if say is not None:
            say(f"{phase}: {done}/{total} in the target")

    async def _migrate() -> Any:
        async with open_store(source, create=False, read_only=True) as src, open_store(target) as dst:
            with terminal_progress() as progress:
                return await migrate_store(src, dst, progress=progress or copied)

    summary = run(_migrate())
    where = shown_url(target) if isinstance(target, str) else target
    click.echo(
        f"migrated {summary.events} events ({summary.copied} new, {summary.events - summary.copied} already there), "
        f"{summary.blobs} blobs, {summary.streams} streams to {where}: every chain verified"
    )

"""`compact`: the finished episodes a recording left as rows, stored as segments (as `record` does as it goes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from p2w_cli._common import in_store
from p2w_cli.progress import piped_lines

if TYPE_CHECKING:
    from p2w_runtime.domain import Compacted
    from p2w_runtime.store import EventStore


@click.command("compact")
@click.argument("run_ref", metavar="[RUN]", required=False)
@click.pass_context
def compact_cmd(ctx: click.Context, run_ref: str | None) -> None:
    """Store the finished episodes of RUN (or of every run) as compressed segments, each event read back exactly as
    before: for runs recorded with P2W_COMPACT=off or by an earlier version. Running it again moves nothing."""
    from p2w_runtime.domain import compact_finished, find_run

    say = piped_lines()

    def compacted(done: int, total: int) -> None:
        if say is not None:
            say(f"compact: {done}/{total} episodes")

    async def _compact(store: EventStore) -> Compacted:
        run_id = (await find_run(store, run_ref)).run_id if run_ref else None
        return await compact_finished(store, run_id, progress=compacted)

    done = in_store(ctx, _compact)
    click.echo(f"compacted {done.events} events of {done.episodes} finished episodes")

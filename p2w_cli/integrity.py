"""`verify`, `export`, `import`: check the hash chains, and move runs between stores without trusting the bundle."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from p2w_cli._common import open_db, run
from p2w_runtime.terminal import safe


@click.command()
@click.argument("run_ref", metavar="[RUN]", required=False)
@click.pass_context
def verify(ctx: click.Context, run_ref: str | None) -> None:
    """Recompute every hash chain and blob hash (of one run, or the whole store)."""
    from p2w_runtime.store import find_run, verify_store

    async def _verify() -> Any:
        async with open_db(ctx) as store:
            run_id = (await find_run(store, run_ref)).run_id if run_ref else None
            return await verify_store(store, run_id)

    report = run(_verify())
    for problem in report.problems:
        click.echo(safe(f"MISMATCH {problem}"), err=True)
    summary = f"{report.streams} streams, {report.events} events, {report.blobs} blobs"
    if not report.ok:
        click.echo(f"verify failed: {len(report.problems)} problem(s) in {summary}", err=True)
        sys.exit(1)
    click.echo(f"ok: {summary} verified")


@click.command("export")
@click.argument("run_ref", metavar="RUN")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.pass_context
def export_cmd(ctx: click.Context, run_ref: str, output: Path) -> None:
    """Write a run (events + blobs) to a portable single-file bundle."""
    from p2w_runtime.store import export_run

    async def _export() -> Any:
        async with open_db(ctx) as store:
            return await export_run(store, run_ref, output)

    summary = run(_export())
    click.echo(
        safe(f"exported {summary.label} ({summary.run_id}): {summary.events} events, {summary.blobs} blobs -> {output}")
    )


@click.command("import")
@click.argument("bundle", type=click.Path(dir_okay=False, path_type=Path))
@click.pass_context
def import_cmd(ctx: click.Context, bundle: Path) -> None:
    """Import a bundle written by `export`; every hash is verified first, nothing is duplicated."""
    from p2w_runtime.store import import_bundle

    async def _import() -> Any:
        async with open_db(ctx, create=True) as store:
            return await import_bundle(store, bundle)

    s = run(_import())
    already = s.events - s.inserted
    click.echo(
        safe(f"imported {s.label} ({s.run_id}): {s.inserted} new events")
        + (f", {already} already present" if already else "")
        + f", {s.blobs} blobs"
    )

"""`import-curation`: AgenticShop curated results (the reference's output format) as a run to judge offline."""

from __future__ import annotations

from pathlib import Path

import click

from p2w_cli._common import RUN_LABEL, in_store

EMPTY_SHOWN = 5
"""Users named when some curated nothing; the rest are counted."""


@click.command("import-curation")
@click.argument("results", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--profiles",
    required=True,
    type=click.Path(exists=True, path_type=Path),
    help="The AgenticShop user profiles the curation answered (a *_user_profile.json or a folder).",
)
@click.option(
    "--captures",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Folder with captures.jsonl (url, status, final_url, html, screenshot) of the linked pages.",
)
@click.option("--fetch", is_flag=True, help="Capture the linked pages now in Chromium (demo sites started as needed).")
@click.option("--chromium", help="Chromium executable for --fetch (default: Playwright's, else the system one).")
@click.option("--label", type=RUN_LABEL, required=True, help="Run label.")
@click.option("--model", default="unknown", show_default=True, help="The curating model, for the run's metadata.")
@click.pass_context
def import_curation_cmd(
    ctx: click.Context,
    results: Path,
    profiles: Path,
    captures: Path | None,
    fetch: bool,
    chromium: str | None,
    label: str,
    model: str,
) -> None:
    """AgenticShop curated results (the reference's search output) as a run to judge offline."""
    from p2w_runtime.demo.sites import DemoHosting
    from p2w_runtime.importers import import_curation

    done = in_store(
        ctx,
        lambda store: import_curation(
            store,
            results,
            profiles,
            label=label,
            model=model,
            captures=captures,
            fetch=fetch,
            chromium=chromium,
            hosting=DemoHosting(),
        ),
        create=True,
    )
    click.echo(f"imported {label} as run {done.run_id}")
    if done.empty:
        shown = ", ".join(done.empty[:EMPTY_SHOWN]) + (", …" if len(done.empty) > EMPTY_SHOWN else "")
        click.echo(
            f"{len(done.empty)} of {done.users} users curated no products (judged as such and left out of the means,"
            f" as the reference does): {shown}",
            err=True,
        )

"""`schema export`: keep schemas/json in step with the pydantic models (``--check`` for CI)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from p2w_cli._common import exit_in_one_line
from p2w_runtime.errors import UserError


@click.group()
def schema() -> None:
    """The JSON Schema files of the event and dataset models."""


@schema.command("export")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), help="Default: schemas/json.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if the files drift from the models.")
def schema_export(directory: Path | None, check: bool) -> None:
    """Generate schemas/json/*.json from the pydantic models."""
    from p2w_rt.schemas import JSON_DIR, drifted_schemas, export_schemas

    target = directory or JSON_DIR
    if check:
        drift = drifted_schemas(target)
        if drift:
            click.echo(f"schema drift in {target}: {', '.join(drift)} (run `p2w-rt schema export`)", err=True)
            sys.exit(1)
        click.echo(f"ok: {target} matches the models")
        return
    try:
        written = export_schemas(target)
    except OSError as exc:
        exit_in_one_line(UserError(f"{target}: cannot write the schema files there ({exc.strerror or exc})"))
    click.echo(f"wrote {len(written)} schema files to {target}")

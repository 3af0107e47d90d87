"""The p2w-rt command line: one click group, thin commands that parse, call and print.

Conventions for commands: take the store with ``open_db(ctx)``, run coroutines with
``run(...)`` (which turns ``UserError`` into one line on stderr and its exit code), and
print with ``console`` / ``echo_json``.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Coroutine
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click
from rich.console import Console

from p2w_runtime.errors import UserError
from p2w_runtime.logs import configure_logging
from p2w_runtime.store import Recorder, open_store

T = TypeVar("T")
console = Console(highlight=False, soft_wrap=True)


@dataclass(frozen=True)
class AppContext:
    db: Path
    log_file: Path


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine; a ``UserError`` becomes one line on stderr and a non-zero exit."""
    try:
        return asyncio.run(coro)
    except UserError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)


def open_db(ctx: click.Context, *, create: bool = False) -> AbstractAsyncContextManager[Recorder]:
    """The store named by ``--db``; ``create`` only for commands that write a new run."""
    return open_store(ctx.find_object(AppContext).db, create=create)


def echo_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, default=str))


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 110})
@click.option(
    "--db",
    envvar="P2W_DB",
    default="p2w.db",
    show_default=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Event store (SQLite file). Env: P2W_DB.",
)
@click.option(
    "--log-file",
    envvar="P2W_LOG_FILE",
    type=click.Path(dir_okay=False, path_type=Path),
    help="JSON-lines log file (default: the user log dir). Env: P2W_LOG_FILE.",
)
@click.option("-v", "--verbose", count=True, help="More console logging (-v info, -vv debug).")
@click.version_option(package_name="p2w-rt")
@click.pass_context
def main(ctx: click.Context, db: Path, log_file: Path | None, verbose: int) -> None:
    """Record, judge, classify and diff personalized web-agent runs."""
    ctx.obj = AppContext(db=db, log_file=configure_logging(verbose=verbose, log_file=log_file))


# --- commands are registered below, one block per command or group --------------------------

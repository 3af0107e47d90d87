"""What every command shares: the app context set by ``main``, the store, the event loop and the console.

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

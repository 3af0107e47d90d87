"""What every command shares: the app context set by ``main``, the store, the event loop and the console.

Conventions for commands: do the store work with ``in_store(ctx, work)`` (or take the store with ``open_db(ctx)``),
run coroutines with ``run(...)`` (which turns ``UserError`` into one line on stderr and its exit code), and
print with ``console`` / ``echo_json`` (recorded text through ``p2w_cli.render.terminal``).
"""

from __future__ import annotations

import atexit
import gc
import json
import logging
import os
import sys
import time
import unicodedata
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from p2w_cli.render.terminal import safe, terminal_console
from p2w_runtime.errors import UserError
from p2w_runtime.store import store_location

if TYPE_CHECKING:
    from p2w_runtime.store import EventStore

T = TypeVar("T")
console = terminal_console()
STARTED = time.monotonic()
"""When the CLI began (``cli`` imports this module first): the wait a command reports counts from here."""
_GC_THRESHOLDS = gc.get_threshold()
atexit.register(gc.freeze)
"""Start-up allocates hundreds of thousands of objects that live as long as the process (modules, classes), and
each full collection walks all of them: with the default thresholds, collecting took a quarter of ``runs``' CPU,
about half of it in the collection Python makes at exit. While a command starts (``MainGroup.main`` until
``started_up``), a full collection waits for 1,000 younger ones instead of 10 (young cycles are collected as
usual); at exit, every object is frozen out of the last collection (docs/design/startup.md)."""


def started_up() -> None:
    """The command's start-up is over (its store is open): the collector runs as usual for the work itself."""
    gc.set_threshold(*_GC_THRESHOLDS)


def numpy_on_one_thread() -> None:
    """For a command whose numpy work is resampling small arrays (``diff``'s and ``agree``'s bootstraps), called
    before numpy loads: OpenBLAS starts a thread per core as numpy loads, and those threads spin on CPU the command
    never uses (docs/design/startup.md). A value the user set is kept."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


def waited() -> float:
    """Seconds the user has waited for this command so far: imports and model loading included."""
    return time.monotonic() - STARTED


def notice(text: str) -> None:
    """A line on a terminal's stderr saying what a long silence is; nothing on a pipe, where a command's stderr stays
    its one error line."""
    if sys.stderr.isatty():
        click.echo(safe(text), err=True)


class ModelLoadNotice(logging.Handler):
    """Says "loading MODEL …" on a terminal's stderr when the runtime logs ``retrieval.embedder.load`` (importing
    torch and reading the weights take seconds), whatever the console's log level, so a long silence has a reason.
    Not on a pipe: there a failed command's stderr stays its one error line."""

    EVENT = "retrieval.embedder.load"

    def emit(self, record: logging.LogRecord) -> None:
        event = record.msg
        if isinstance(event, dict) and event.get("event") == self.EVENT:
            notice(f"loading {event.get('embedder')} …")

    @classmethod
    def install(cls) -> None:
        """Once per process (click may call the group's callback again in one process, as tests do)."""
        logger = logging.getLogger("p2w_runtime.retrieval")
        if not any(isinstance(handler, cls) for handler in logger.handlers):
            logger.addHandler(cls())


@dataclass(frozen=True)
class AppContext:
    db: Path | str
    """A SQLite file, or a ``postgresql://`` URL (``p2w_runtime.store.store_location``)."""
    log_file: Path


class StoreLocation(click.ParamType[Path | str, Any]):
    """``--db``: a SQLite file path, or a PostgreSQL URL kept as text (a ``Path`` would fold its ``//``)."""

    name = "FILE|URL"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path | str:
        if isinstance(value, Path):
            return value
        try:
            return store_location(str(value))
        except ValueError as exc:  # a folder, or a URL that is not PostgreSQL's
            self.fail(str(exc), param, ctx)


class RunLabel(click.ParamType[str, Any]):
    """A run's label (``--label``, ``--record-as``): one printable line with something in it, since every listing,
    diff and bundle header shows it and ``find_run`` matches it exactly."""

    name = "LABEL"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if not text.strip():
            self.fail(f"{text!r} is only whitespace; a label names the run", param, ctx)
        odd = next((ch for ch in text if unicodedata.category(ch)[0] == "C"), None)
        if odd is not None:
            self.fail(f"{text!r} holds the control character U+{ord(odd):04X}; a label is one line", param, ctx)
        return text


RUN_LABEL = RunLabel()


def db_path(ctx: click.Context) -> Path | str:
    """The ``--db`` the group's callback resolved; every command runs under that group."""
    app = ctx.find_object(AppContext)
    if app is None:
        raise click.UsageError("p2w-rt commands run under the p2w-rt group")
    return app.db


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine; a ``UserError`` becomes one line on stderr and a non-zero exit."""
    from p2w_runtime import event_loop

    return fail_as_one_line(lambda: event_loop.run(coro))


def exit_in_one_line(exc: UserError) -> NoReturn:
    """``exc`` as one redacted line on stderr, and its exit code."""
    from p2w_runtime.redaction import redact_text

    click.echo(f"error: {safe(redact_text(str(exc)))}", err=True)
    sys.exit(exc.exit_code)


def fail_as_one_line(work: Callable[[], T]) -> T:
    """Call ``work``; a ``UserError`` becomes one redacted line on stderr and its exit code."""
    try:
        return work()
    except UserError as exc:
        exit_in_one_line(exc)
    except KeyboardInterrupt:
        interrupted()


def interrupted() -> NoReturn:
    """Ctrl-C wherever it reaches a command: one line on stderr, exit 130 (``exit_at_once_when_interrupted``)."""
    click.echo("interrupted", err=True)
    sys.exit(130)


def newer_schema(exc: BaseException) -> BaseException | None:
    """The ``schemas.NewerSchemaError`` that ``exc`` is or holds (an exception group, a cause), else None.

    An event written by a later p2w-rt can meet any command that reads events, wherever it reads them, so the one
    line is said here, for every command. Looked up in ``sys.modules``: until the payload models are imported no
    such error can have been raised, and the start-up of a command does not pay for importing them.
    """
    upcast = sys.modules.get("p2w_rt.schemas._upcast")
    seen: list[BaseException] = []
    pending: list[BaseException] = [exc]
    while upcast is not None and pending:
        current = pending.pop()
        if isinstance(current, upcast.NewerSchemaError):
            return current
        if any(current is other for other in seen):
            continue
        seen.append(current)
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        pending.extend(e for e in (current.__cause__, current.__context__) if e is not None)
    return None


class MainGroup(click.Group):
    """The root group; it keeps its command line so that ``wants_help`` can see a subcommand's ``--help``, and
    imports a command's module (``lazy``: name -> ``module:attribute``) only when the command is asked for: the
    command modules together cost more to import than ``runs`` needs in all (docs/design/startup.md)."""

    def __init__(self, *args: Any, lazy: Mapping[str, str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.lazy = dict(lazy)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *self.lazy})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in self.lazy:
            module, _, attribute = self.lazy[cmd_name].partition(":")
            command = getattr(import_module(module), attribute)
            assert isinstance(command, click.Command) and command.name == cmd_name, self.lazy[cmd_name]
            self.add_command(command)
        return self.commands.get(cmd_name)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        gc.set_threshold(_GC_THRESHOLDS[0], _GC_THRESHOLDS[1], 1000)  # see _GC_THRESHOLDS
        try:
            return super().main(*args, **kwargs)
        except UserError as exc:  # raised while parsing, before a command's own handler (a plugin that cannot load)
            exit_in_one_line(exc)
        except Exception as exc:
            if (newer := newer_schema(exc)) is None:
                raise
            click.echo(f"error: {safe(str(newer))}", err=True)
            sys.exit(2)
        finally:
            started_up()

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        """The group's options parsed: a Ctrl-C is ``interrupted``, not click's "Aborted!" and exit 1."""
        try:
            return super().make_context(info_name, args, parent, **extra)
        except KeyboardInterrupt:
            interrupted()

    def invoke(self, ctx: click.Context) -> Any:
        """The group's callback, the command's import, parsing and work: a Ctrl-C in any is ``interrupted``."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            interrupted()

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        ctx.meta[_ARGS] = tuple(args)
        return super().parse_args(ctx, args)


_ARGS = "p2w.args"


def wants_help(ctx: click.Context) -> bool:
    """Whether the command line asks for a (sub)command's help, which click shows after the group's callback ran."""
    return any(arg in ctx.help_option_names for arg in ctx.meta.get(_ARGS, ()))


@asynccontextmanager
async def open_db(ctx: click.Context, *, create: bool = False) -> AsyncIterator[EventStore]:
    """The store named by ``--db``; ``create`` only for commands that write a new run. In a store a viewer has stored
    pages in, a command that appended to runs brings their first pages up to date when its work ends, as every
    writer through ``open_store`` does (the next fresh viewer reads the row, not the run), saying so on a terminal."""
    from p2w_runtime.store import open_store

    async with open_store(db_path(ctx), create=create, notify=notice) as store:
        started_up()
        yield store


def in_store(ctx: click.Context, work: Callable[[EventStore], Awaitable[T]], *, create: bool = False) -> T:
    """``work`` against the store ``open_db`` opens, run to its end by ``run``: a command's store work in one call."""

    async def _work() -> T:
        async with open_db(ctx, create=create) as store:
            return await work(store)

    return run(_work())


def echo_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, default=str))


@contextmanager
def terminal_progress() -> Iterator[Callable[[str, int, int], None] | None]:
    """``update(phase, done, total)`` drawing one rich bar per phase on stderr when it is a terminal; ``None``
    otherwise (logs, pipes, CI), so long imports and bundle transfers stay quiet in scripts."""
    if not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (TextColumn("{task.description:<10}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=terminal_console(stderr=True), transient=True) as bar:
        tasks: dict[str, Any] = {}

        def update(phase: str, done: int, total: int) -> None:
            if phase not in tasks:
                tasks[phase] = bar.add_task(phase, total=total)
            bar.update(tasks[phase], completed=done, total=total)

        yield update

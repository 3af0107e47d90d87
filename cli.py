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


# --- store: runs, show, verify, export, import ------------------------------------------------
@main.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object per run.")
@click.pass_context
def runs(ctx: click.Context, as_json: bool) -> None:
    """List the runs in the store."""
    from rich.table import Table

    from p2w_runtime.store import list_runs

    async def _runs() -> list[Any]:
        async with open_db(ctx) as store:
            return await list_runs(store)

    found = run(_runs())
    if as_json:
        for r in found:
            echo_json(
                {
                    "run_id": r.run_id,
                    "label": r.label,
                    "source": r.started.source,
                    "agent": r.started.agent,
                    "model": r.started.backbone_model,
                    "scheme": r.started.scheme,
                    "episodes": r.episodes,
                    "status": r.finished.status if r.finished else "running",
                    "recorded_at": r.recorded_at,
                }
            )
        return
    table = Table("run id", "label", "source", "agent", "model", "scheme", "episodes", "status", "recorded at")
    for r in found:
        table.add_row(
            r.run_id,
            r.label,
            r.started.source,
            r.started.agent,
            r.started.backbone_model,
            r.started.scheme or "-",
            str(r.episodes),
            r.finished.status if r.finished else "unfinished",
            r.recorded_at[:19],
        )
    console.print(table if found else f"no runs in {ctx.find_object(AppContext).db}")


@main.command()
@click.argument("run_ref", metavar="RUN")
@click.argument("task_id", required=False)
@click.option("--json", "as_json", is_flag=True, help="Print the decoded events as JSON lines.")
@click.pass_context
def show(ctx: click.Context, run_ref: str, task_id: str | None, as_json: bool) -> None:
    """Show a run's episodes, or one episode's timeline (step, event type, gist)."""
    from rich.table import Table

    from p2w_runtime.store import UnknownRun, episode_streams, find_run
    from replay.timeline import timeline
    from schemas import EpisodeFinished, EpisodeStarted

    async def _load() -> tuple[Any, list[Any]]:
        async with open_db(ctx) as store:
            info = await find_run(store, run_ref)
            streams = await episode_streams(store, info.run_id)
            if task_id is None:
                episodes = []
                for stream in streams:
                    decoded = [e.decode() async for e in store.read_stream(stream)]
                    episodes.append((stream, decoded[0].payload, decoded[-1].payload))
                return info, episodes
            matches = [s for s in streams if s.split("/", 1)[1].split("#")[0] == task_id]
            if not matches:
                raise UnknownRun(f"run {info.label!r} has no episode for task {task_id!r}")
            return info, [e.decode() async for e in store.read_stream(matches[-1])]

    info, items = run(_load())
    if as_json:
        if task_id is None:
            for stream, started, last in items:
                echo_json(
                    {
                        "stream": stream,
                        "task_id": started.task_id,
                        "level": started.level,
                        "end_reason": last.end_reason if isinstance(last, EpisodeFinished) else None,
                    }
                )
        else:
            for event in items:
                echo_json(event.model_dump(mode="json"))
        return
    console.print(
        f"[bold]{info.label}[/] {info.run_id}  {info.started.agent} / {info.started.backbone_model} / "
        f"{info.started.scheme or '-'}  ({info.started.source})"
    )
    if task_id is None:
        table = Table("task", "level", "end", "steps", "answer")
        for _stream, started, last in items:
            assert isinstance(started, EpisodeStarted)
            done = isinstance(last, EpisodeFinished)
            table.add_row(
                started.task_id,
                str(started.level),
                last.end_reason if done else "unfinished",
                str(last.steps) if done else "-",
                (last.answer or "")[:60] if done else "",
            )
    else:
        table = Table("seq", "step", "event", "gist")
        for row in timeline(items):
            table.add_row(str(row.seq), "-" if row.step is None else str(row.step), row.type, row.gist)
    console.print(table)


@main.command()
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
        click.echo(f"MISMATCH {problem}", err=True)
    summary = f"{report.streams} streams, {report.events} events, {report.blobs} blobs"
    if not report.ok:
        click.echo(f"verify failed: {len(report.problems)} problem(s) in {summary}", err=True)
        sys.exit(1)
    click.echo(f"ok: {summary} verified")


@main.command("export")
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
        f"exported {summary.label} ({summary.run_id}): {summary.events} events, {summary.blobs} blobs -> {output}"
    )


@main.command("import")
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
        f"imported {s.label} ({s.run_id}): {s.inserted} new events"
        + (f", {already} already present" if already else "")
        + f", {s.blobs} blobs"
    )


@main.group()
def schema() -> None:
    """The JSON Schema files of the event and dataset models."""


@schema.command("export")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), help="Default: schemas/json.")
@click.option("--check", is_flag=True, help="Write nothing; exit 1 if the files drift from the models.")
def schema_export(directory: Path | None, check: bool) -> None:
    """Generate schemas/json/*.json from the pydantic models."""
    from schemas import JSON_DIR, drifted_schemas, export_schemas

    target = directory or JSON_DIR
    if check:
        drift = drifted_schemas(target)
        if drift:
            click.echo(f"schema drift in {target}: {', '.join(drift)} (run `p2w-rt schema export`)", err=True)
            sys.exit(1)
        click.echo(f"ok: {target} matches the models")
        return
    written = export_schemas(target)
    click.echo(f"wrote {len(written)} schema files to {target}")

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


# --- history: build and query the retrieval indexes of persona memory banks --------------------
def _history_options(command: Any) -> Any:
    """--history, --embedder and --cache-dir, shared by the history commands."""
    command = click.option(
        "--cache-dir",
        envvar="P2W_CACHE_DIR",
        type=click.Path(file_okay=False, path_type=Path),
        help="Index cache folder (default: the user cache dir, p2w-rt/retrieval). Env: P2W_CACHE_DIR.",
    )(command)
    command = click.option(
        "--embedder",
        metavar="NAME|DIR",
        help="sentence-transformers model name (already downloaded) or local directory. Default: bundled "
        "all-MiniLM-L6-v2.",
    )(command)
    return click.option(
        "--history",
        "history_dir",
        default="sample",
        show_default=True,
        callback=_history_dir,
        type=click.Path(file_okay=False, path_type=Path),
        help="Folder of <persona>.json memory banks; `sample` is the bundled sample personas.",
    )(command)


def _history_dir(_ctx: click.Context, _param: click.Parameter, value: Path) -> Path:
    from p2w_runtime.sample import sample_history_dir

    return sample_history_dir() if str(value) == "sample" else value


def _load_embedder_quietly(name: str | None) -> Any:
    from p2w_runtime.retrieval import load_embedder

    with Console(stderr=True).status(f"loading embedder {name or 'all-MiniLM-L6-v2'}"):
        return load_embedder(name)


@main.group()
def history() -> None:
    """Index and search persona browsing histories with the agent's retriever."""


@history.command("index")
@_history_options
def history_index(history_dir: Path, embedder: str | None, cache_dir: Path | None) -> None:
    """Build every persona's index cache (encodes only changed banks)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table
    from rich.text import Text

    from p2w_runtime.retrieval import IndexSummary, index_history

    async def _index() -> IndexSummary:  # blocking work; run() turns user errors into one line
        model = _load_embedder_quietly(embedder)
        columns = (TextColumn("{task.description:<24}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task("reading banks", total=None)

            def report(persona: str, done: int, total: int) -> None:
                bar.update(task, description=persona, completed=done, total=total)

            return index_history(history_dir, model, cache_dir, progress=report)

    summary = run(_index())
    table = Table("persona", "entries", "encoded", "from cache", "seconds", "index hash")
    for p in summary.personas:
        row = (p.persona, str(p.entries), str(p.encoded), str(p.entries - p.encoded), f"{p.seconds:.2f}")
        table.add_row(Text(row[0]), *row[1:], p.index_hash[:12])
    console.print(table)
    rate = f" ({summary.encoded / summary.seconds:.0f} entries/s)" if summary.encoded else ""
    console.print(
        f"{len(summary.personas)} personas, {summary.entries} entries: {summary.encoded} encoded, "
        f"{summary.cached} from cache in {summary.seconds:.1f}s{rate} with {summary.model_id}"
    )


@history.command("search")
@click.argument("persona")
@click.argument("query")
@_history_options
@click.option("--k", "k", default=20, show_default=True, type=click.IntRange(min=1), help="At most this many hits.")
@click.option("--threshold", default=0.5, show_default=True, type=float, help="Minimum cosine similarity.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with the hits.")
def history_search(
    persona: str,
    query: str,
    history_dir: Path,
    embedder: str | None,
    cache_dir: Path | None,
    k: int,
    threshold: float,
    as_json: bool,
) -> None:
    """Show the history entries the retriever returns for QUERY."""
    from rich.table import Table
    from rich.text import Text

    from p2w_runtime.retrieval import HistoryIndex, HistoryRetriever

    async def _search() -> tuple[HistoryIndex, list[Any]]:  # blocking work; run() turns user errors into one line
        retriever = HistoryRetriever(history_dir, _load_embedder_quietly(embedder), cache_dir)
        with Console(stderr=True).status(f"opening the index of {persona}"):
            index = retriever.index(persona)
        return index, index.search(query, k, threshold)

    index, hits = run(_search())
    if as_json:
        echo_json(
            {
                "persona": persona,
                "query": query,
                "model_id": index.model_id,
                "index_hash": index.index_hash,
                "k": k,
                "threshold": threshold,
                "hits": [hit.model_dump(mode="json") for hit in hits],
            }
        )
        return
    console.print(
        Text(f"{persona}: {len(hits)} of {index.size} entries with cosine >= {threshold} (k={k}, {index.model_id})")
    )
    table = Table("rank", "score", "type", "object", "website", "timestamp")
    for hit in hits:
        e = hit.entry  # Text(): history entries are data, not rich markup ("[2-pack] socks")
        table.add_row(str(hit.rank), f"{hit.score:.3f}", *map(Text, (e.type, e.object, e.website or "-", e.timestamp)))
    if hits:
        console.print(table)


# --- import-trajectories: files written by the Persona2Web runners -> one run ------------------
def _trajectory_files(paths: tuple[Path, ...]) -> list[Path]:
    """Files as given; a directory stands for the *.json files directly inside it, sorted."""
    files: list[Path] = []
    for path in paths:
        files.extend(sorted(path.glob("*.json")) if path.is_dir() else [path])
    return files


@main.command("import-trajectories")
@click.option(
    "--format",
    "fmt",
    required=True,
    type=click.Choice(["p2w-agentoccam", "p2w-browser-use"]),
    help="Which Persona2Web runner wrote the files.",
)
@click.option(
    "--tasks",
    "tasks_dir",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Task files: personalization_{1,2,3}/ folders or one flat folder.",
)
@click.option(
    "--history",
    "history_dir",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Memory banks, one {persona}.json per persona.",
)
@click.option("--label", help="Run label; importing again with the same label resumes an interrupted import.")
@click.option(
    "--scheme",
    type=click.Choice(["on-demand", "pre-execution", "no-history"]),
    help="Override the scheme read from the file names ({on|pre|base|no}_{model}_{task}.json).",
)
@click.option("--model", help="Override the backbone model read from the files or their names.")
@click.option("--skip-bad", is_flag=True, help="Import the good files, list the bad ones, exit 0.")
@click.option("--examples", is_flag=True, help="Import the bundled example trajectories of --format.")
@click.argument("paths", metavar="PATH...", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.pass_context
def import_trajectories_cmd(
    ctx: click.Context,
    fmt: str,
    tasks_dir: Path | None,
    history_dir: Path | None,
    label: str | None,
    scheme: str | None,
    model: str | None,
    skip_bad: bool,
    examples: bool,
    paths: tuple[Path, ...],
) -> None:
    """Record trajectory files of the Persona2Web runners as one run, one episode per file.

    PATH is a trajectory file or a folder of them (its *.json files). Every file is checked
    before anything is written: a malformed file, an index outside the memory bank or an
    unknown task id stops the import with exit 1 and writes nothing, unless --skip-bad.
    With --examples, tasks, memory banks, files and label default to the bundled examples.
    """
    from p2w_runtime.examples import example_paths
    from p2w_runtime.importers import import_trajectories

    if examples:
        bundled = example_paths()
        tasks_dir = tasks_dir or bundled.tasks_dir
        history_dir = history_dir or bundled.history_dir
        paths = paths or tuple(bundled.trajectories(fmt))
        label = label or f"examples-{fmt.removeprefix('p2w-')}"
    required = (("--tasks", tasks_dir), ("--history", history_dir), ("--label", label))
    missing = [name for name, value in required if not value]
    if missing or not paths:
        raise click.UsageError(f"missing {', '.join(missing) or 'PATH'} (or use --examples)")
    assert tasks_dir is not None and history_dir is not None and label is not None

    async def _import() -> Any:
        async with open_db(ctx, create=True) as store:
            return await import_trajectories(
                store,
                _trajectory_files(paths),
                fmt=fmt,  # type: ignore[arg-type]
                tasks_dir=tasks_dir,
                history_dir=history_dir,
                label=label,
                scheme=scheme,  # type: ignore[arg-type]
                model=model,
                skip_bad=skip_bad,
            )

    report = run(_import())
    verb = "resumed" if report.resumed else "created"
    click.echo(f"{verb} run {report.run_id} (label {report.label}, {report.format}): {report.episodes} episodes")
    click.echo(f"imported {len(report.imported)}, already imported {len(report.already)}, bad {len(report.bad)}")
    for error in report.bad:
        click.echo(f"bad: {error}", err=True)


# --- replay, metrics: judge recorded runs offline, and tabulate the judgments ------------------
def _key_values(pairs: tuple[str, ...], option: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key or not value:
            raise click.BadParameter(f"expected NAME=URL, got {pair!r}", param_hint=option)
        out[key.strip().lower()] = value.strip()
    return out


@main.command("replay")
@click.argument("run_ref", metavar="RUN")
@click.option(
    "--judge",
    "judge_ids",
    multiple=True,
    required=True,
    help="Judge id; repeat for several: rubric-rules, rubric-llm, action-wise, outcome-based, "
    "action-wise-rules, outcome-based-rules, webarena.",
)
@click.option("--model", default="gpt-5-mini", show_default=True, help="Model of the LLM judges.")
@click.option("--base-url", envvar="OPENAI_BASE_URL", help="OpenAI-compatible endpoint. Env: OPENAI_BASE_URL.")
@click.option("--api-key", help="API key (default: env OPENAI_API_KEY); never stored.")
@click.option("--temperature", type=float, help="Sampling temperature of the LLM judges (default: the model's).")
@click.option(
    "--concurrency", default=8, show_default=True, type=click.IntRange(min=1), help="LLM judgments in flight at once."
)
@click.option("--dry-run", is_flag=True, help="Estimate LLM calls, tokens and cost; call and append nothing.")
@click.option("--force", is_flag=True, help="Judge again even when a cached judgment exists (older ones stay).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per judged episode.")
@click.option(
    "--webarena-config",
    type=click.Path(exists=True, path_type=Path),
    help="WebArena task configs (test.raw.json, one config, or a folder) for --judge webarena.",
)
@click.option(
    "--site-url",
    "site_urls",
    multiple=True,
    metavar="NAME=URL",
    help="Base URL of a WebArena site placeholder (gitlab=http://...); default: env GITLAB, SHOPPING...",
)
@click.option(
    "--location-site",
    "location_sites",
    multiple=True,
    metavar="SITE",
    help="Another location-aware website for the rubric (added to amazon, instacart, resy, opentable).",
)
@click.pass_context
def replay_cmd(
    ctx: click.Context,
    run_ref: str,
    judge_ids: tuple[str, ...],
    model: str,
    base_url: str | None,
    api_key: str | None,
    temperature: float | None,
    concurrency: int,
    dry_run: bool,
    force: bool,
    as_json: bool,
    webarena_config: Path | None,
    site_urls: tuple[str, ...],
    location_sites: tuple[str, ...],
) -> None:
    """Judge every episode of RUN offline; judgments are appended and cached (prints "cached")."""
    from replay.judging import ReplayOptions, replay_command

    options = ReplayOptions(
        judges=judge_ids,
        model=model,
        base_url=base_url,
        api_key=api_key,
        temperature=temperature,
        concurrency=concurrency,
        dry_run=dry_run,
        force=force,
        as_json=as_json,
        webarena_config=webarena_config,
        site_urls=_key_values(site_urls, "--site-url"),
        location_sites=location_sites,
    )

    async def _replay() -> int:
        async with open_db(ctx) as store:
            return await replay_command(store, run_ref, options, console, Console(stderr=True, highlight=False))

    sys.exit(run(_replay()))


@main.command("metrics")
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@click.option("--judge", help="Only this judge's judgments (default: every judge, one row each).")
@click.option(
    "--by",
    help="Group columns, comma-separated: architecture, model, scheme, level, judge, run "
    "[default: architecture,model,scheme].",
)
@click.option("--format", "fmt", type=click.Choice(["table", "md", "csv", "json"]), default="table", show_default=True)
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), help="Write the per-level plot (PNG).")
@click.pass_context
def metrics_cmd(
    ctx: click.Context, run_refs: tuple[str, ...], judge: str | None, by: str | None, fmt: str, plot: Path | None
) -> None:
    """P_web, P_pref, P_avg, Intent and SR of judged runs (the paper's Table 5), and by ambiguity level."""
    from replay.metrics import metrics_command

    columns = [c.strip() for c in by.split(",") if c.strip()] if by else None

    async def _metrics() -> None:
        async with open_db(ctx) as store:
            await metrics_command(
                store,
                run_refs,
                judge=judge,
                by=columns,
                fmt=fmt,
                plot=plot,
                out=console,
                err=Console(stderr=True, highlight=False),
            )

    run(_metrics())


# --- classify, diff, stats: error analysis and run-to-run comparison ---------------------------
@main.command("classify")
@click.argument("run_refs", metavar="RUN...", nargs=-1, required=True)
@click.option(
    "--classifier",
    type=click.Choice(["rules", "llm"]),
    default="rules",
    show_default=True,
    help="rules: deterministic, from the structured events; llm: an OpenAI-compatible model.",
)
@click.option("--summary", is_flag=True, help="Print error counts by agent / model / scheme instead of episodes.")
@click.option("--per-run", is_flag=True, help="Summary and plot: one column per run, not per agent / model / scheme.")
@click.option("--plot", type=click.Path(dir_okay=False, path_type=Path), help="Write the error summary chart (PNG).")
@click.option("--model", default="gpt-5-mini", show_default=True, help="Model of the llm classifier.")
@click.option("--base-url", envvar="OPENAI_BASE_URL", help="OpenAI-compatible endpoint. Env: OPENAI_BASE_URL.")
@click.option("--api-key", help="API key (default: env OPENAI_API_KEY); never stored.")
@click.option("--temperature", type=float, help="Sampling temperature of the llm classifier (default: the model's).")
@click.option(
    "--concurrency",
    default=8,
    show_default=True,
    type=click.IntRange(min=1),
    help="LLM classifications in flight at once.",
)
@click.option("--force", is_flag=True, help="Classify again even when a cached classification exists.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per episode (with --summary: the summary).")
@click.option(
    "--location-site",
    "location_sites",
    multiple=True,
    metavar="SITE",
    help="Another location-aware website (added to amazon, instacart, resy, opentable).",
)
@click.pass_context
def classify_cmd(
    ctx: click.Context,
    run_refs: tuple[str, ...],
    classifier: str,
    summary: bool,
    per_run: bool,
    plot: Path | None,
    model: str,
    base_url: str | None,
    api_key: str | None,
    temperature: float | None,
    concurrency: int,
    force: bool,
    as_json: bool,
    location_sites: tuple[str, ...],
) -> None:
    """Label each episode with Persona2Web's error types and its navigation end reason, with evidence.

    Classifications are appended to the run and cached (prints "cached").
    """
    from replay.classify import ClassifyOptions, classify_command

    options = ClassifyOptions(
        classifier=classifier,
        model=model,
        base_url=base_url,
        api_key=api_key,
        temperature=temperature,
        concurrency=concurrency,
        force=force,
        as_json=as_json,
        summary=summary,
        per_run=per_run,
        plot=plot,
        location_sites=location_sites,
    )

    async def _classify() -> int:
        async with open_db(ctx) as store:
            return await classify_command(store, run_refs, options, console, Console(stderr=True, highlight=False))

    sys.exit(run(_classify()))


@main.command("diff")
@click.argument("a_ref", metavar="A")
@click.argument("b_ref", metavar="B")
@click.option(
    "--judge",
    default="rubric-rules",
    show_default=True,
    help="Whose judgments to compare (rules judges are run first when needed).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object: metrics, tasks, only_in_a/b, mcnemar_p.")
@click.pass_context
def diff_cmd(ctx: click.Context, a_ref: str, b_ref: str, judge: str, as_json: bool) -> None:
    """Compare run A with run B task by task; either may be FILE.db:RUN (a run in another database)."""
    from replay.diff import diff_command

    run(diff_command(ctx.find_object(AppContext).db, a_ref, b_ref, judge=judge, as_json=as_json, out=console))


@main.command("stats")
@click.argument("run_refs", metavar="RUN RUN...", nargs=-1, required=True)
@click.option(
    "--judge",
    default="rubric-rules",
    show_default=True,
    help="Whose judgments to use (rules judges are run first when needed).",
)
@click.option("--json", "as_json", is_flag=True, help="One JSON object: per-run figures, mean and std.")
@click.pass_context
def stats_cmd(ctx: click.Context, run_refs: tuple[str, ...], judge: str, as_json: bool) -> None:
    """Mean and standard deviation of each metric over repeated runs of the same tasks (Table 8)."""
    from replay.stats import stats_command

    if len(run_refs) < 2:
        raise click.UsageError("stats needs at least two runs")
    run(stats_command(ctx.find_object(AppContext).db, run_refs, judge=judge, as_json=as_json, out=console))


# --- record: run the personalized agent in Chromium and record every step ----------------------
def _sample_or_path(value: str, which: str) -> Path:
    """`sample` names the bundled sample personas; anything else is a folder."""
    from p2w_runtime.sample import sample_history_dir, sample_tasks_dir

    if value == "sample":
        return sample_tasks_dir() if which == "tasks" else sample_history_dir()
    return Path(value)


@main.command("record")
@click.option(
    "--tasks",
    "tasks_dir",
    default="sample",
    show_default=True,
    help="Task folder (personalization_{1,2,3}/ or flat), or `sample`.",
)
@click.option(
    "--history",
    "history_dir",
    default="sample",
    show_default=True,
    help="Memory-bank folder ({persona}.json), or `sample`.",
)
@click.option(
    "--scheme", type=click.Choice(["no-history", "on-demand", "pre-execution"]), default="on-demand", show_default=True
)
@click.option("--model", required=True, help="Backbone model name at the endpoint.")
@click.option("--base-url", envvar="OPENAI_BASE_URL", help="OpenAI-compatible endpoint. Env: OPENAI_BASE_URL.")
@click.option("--api-key", envvar="OPENAI_API_KEY", help="Env: OPENAI_API_KEY. Never stored.")
@click.option("--level", type=click.IntRange(0, 2), help="Only tasks of this ambiguity level.")
@click.option("--task", "task_ids", multiple=True, help="Only these task ids (repeatable).")
@click.option("--limit", type=click.IntRange(1), help="At most N tasks.")
@click.option("--concurrency", type=click.IntRange(1), default=4, show_default=True)
@click.option("--label", help="Run label (default: SCHEME-MODEL).")
@click.option("--max-steps", type=click.IntRange(1), default=25, show_default=True)
@click.option("--resume", "resume", metavar="RUN", help="Continue an interrupted run: finished episodes are kept.")
@click.option(
    "--chromium",
    envvar="P2W_CHROMIUM",
    help="Chromium executable (default: Playwright's own, else /usr/bin/chromium). Env: P2W_CHROMIUM.",
)
@click.option("--embedder", help="sentence-transformers name or path (default: bundled all-MiniLM-L6-v2).")
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), help="Retrieval index cache.")
@click.option("--prices", type=click.Path(dir_okay=False, path_type=Path), help="Extra model prices (JSON).")
@click.option(
    "--max-retries",
    type=click.IntRange(0),
    default=4,
    show_default=True,
    help="Retries of an LLM call on timeouts, 429 and 5xx (with backoff).",
)
@click.option(
    "--llm-timeout", type=click.FloatRange(0.1), default=120.0, show_default=True, help="Seconds per LLM call."
)
@click.option(
    "--page-timeout",
    type=click.FloatRange(0.1),
    default=15.0,
    show_default=True,
    help="Seconds a navigation may take before the page is stopped.",
)
@click.pass_context
def record_cmd(
    ctx: click.Context,
    tasks_dir: str,
    history_dir: str,
    scheme: str,
    model: str,
    base_url: str | None,
    api_key: str | None,
    level: int | None,
    task_ids: tuple[str, ...],
    limit: int | None,
    concurrency: int,
    label: str | None,
    max_steps: int,
    resume: str | None,
    chromium: str | None,
    embedder: str | None,
    cache_dir: Path | None,
    prices: Path | None,
    max_retries: int,
    llm_timeout: float,
    page_timeout: float,
) -> None:
    """Record one run of the personalized agent: one episode per task, every step as events."""
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    from p2w_runtime.agent import AgentConfig, RecordRequest, RunProgress, record
    from p2w_runtime.llm import RetryPolicy

    config = AgentConfig(scheme=scheme, max_steps=max_steps, page_timeout_s=page_timeout)  # type: ignore[arg-type]
    request = RecordRequest(
        tasks_dir=_sample_or_path(tasks_dir, "tasks"),
        history_dir=_sample_or_path(history_dir, "history"),
        model=model,
        label=label,
        config=config,
        base_url=base_url,
        api_key=api_key,
        level=level,
        task_ids=task_ids,
        limit=limit,
        concurrency=concurrency,
        chromium=chromium,
        embedder=embedder,
        cache_dir=cache_dir,
        prices=prices,
        resume=resume,
        retry=RetryPolicy(max_retries=max_retries),
        llm_timeout_s=llm_timeout,
    )
    columns = (
        TextColumn("recording"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total} done"),
        TextColumn("{task.fields[failed]} failed, {task.fields[running]} running, {task.fields[tokens]} tokens"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("record", total=None, failed=0, running=0, tokens=0)

        def on_progress(state: RunProgress) -> None:
            bar.update(
                task,
                total=state.total,
                completed=state.done,
                failed=state.failed,
                running=state.running,
                tokens=state.tokens,
            )

        async def _record() -> Any:
            async with open_db(ctx, create=True) as store:
                return await record(store, request, on_progress)

        summary = run(_record())
    reasons: dict[str, int] = {}
    for outcome in summary.outcomes:
        reasons[outcome.end_reason] = reasons.get(outcome.end_reason, 0) + 1
    tokens = sum(o.tokens for o in summary.outcomes)
    costs = [o.cost_usd for o in summary.outcomes if o.cost_usd is not None]
    kept = f", {summary.kept} kept from before" if summary.kept else ""
    click.echo(
        f"recorded {summary.label} ({summary.run_id}): {len(summary.outcomes)} episodes{kept}; "
        + ", ".join(f"{n} {r}" for r, n in sorted(reasons.items()))
        + f"; {tokens} tokens"
        + (f", ${sum(costs):.4f}" if costs else "")
    )
    if summary.outcomes and all(o.end_reason == "error" for o in summary.outcomes):
        click.echo(f"error: every episode failed; first: {summary.outcomes[0].detail}", err=True)
        sys.exit(1)


# --- sites: the bundled demo websites, served alone for a person to browse ---------------------
@main.group()
def sites() -> None:
    """The bundled demo websites (*.p2w.test) the sample tasks run on."""


@sites.command("serve")
@click.option("--port", default=8642, show_default=True, type=click.IntRange(0, 65535), help="0 picks a free port.")
def sites_serve(port: int) -> None:
    """Serve the demo sites on 127.0.0.1 until Ctrl-C, and print how to open them in Chromium."""
    from p2w_runtime.sites import SITE_HOSTS, start_sites

    async def _serve() -> None:
        running = await start_sites(port)
        try:
            rules = running.host_resolver_rules.partition("=")[2]
            click.echo(f"demo sites on 127.0.0.1:{running.port}: " + ", ".join(f"http://{h}/" for h in SITE_HOSTS))
            click.echo(f'open them with: chromium --host-resolver-rules="{rules}" {running.start_url}')
            click.echo(f"final confirmations pressed: {running.control_url}/_p2w/confirmations  (Ctrl-C stops)")
            await asyncio.Event().wait()
        finally:
            await running.stop()

    run(_serve())


# --- demo: the whole product offline on the bundled runs ---------------------------------------
@main.command("demo")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default="p2w-demo",
    show_default=True,
    help="Folder for the fresh demo database, the report and the plots.",
)
@click.option(
    "--record",
    "record_first",
    is_flag=True,
    help="First record the sample tasks with the configured endpoint, and judge them with rubric-llm too.",
)
@click.option("--model", default="gpt-4.1-mini", show_default=True, help="Model for --record (agent and judge).")
@click.option("--base-url", envvar="OPENAI_BASE_URL", help="OpenAI-compatible endpoint for --record.")
@click.option("--api-key", envvar="OPENAI_API_KEY", help="Env: OPENAI_API_KEY. Never stored.")
@click.option("--chromium", envvar="P2W_CHROMIUM", help="Chromium executable for --record.")
def demo_cmd(
    out_dir: Path, record_first: bool, model: str, base_url: str | None, api_key: str | None, chromium: str | None
) -> None:
    """Import two recorded runs of the sample tasks, judge, classify and diff them, and write a report."""
    from p2w_runtime.examples import example_run_bundles
    from p2w_runtime.store import open_store
    from replay.demo import import_example_runs, run_demo, write_report
    from replay.judges import JudgeSettings

    out_dir.mkdir(parents=True, exist_ok=True)
    db = out_dir / "demo.db"
    for stale in (db, db.with_name("demo.db-wal"), db.with_name("demo.db-shm")):
        stale.unlink(missing_ok=True)
    err = Console(stderr=True, highlight=False)

    async def _demo() -> Any:
        async with open_store(db, create=True) as store:
            runs = await import_example_runs(store, example_run_bundles())
            err.print(f"imported the example runs {', '.join(runs)} into {db}")
            llm_settings = factory = None
            if record_first:
                runs.append(await _record_sample(store, model, base_url, api_key, chromium, err))
                llm_settings = JudgeSettings(model=model)

                def factory() -> Any:
                    from p2w_runtime.llm import LlmClient

                    return LlmClient(model, base_url=base_url, api_key=api_key)

            return await run_demo(
                store,
                db,
                runs,
                out_dir=out_dir,
                out=console,
                err=err,
                llm_judged=runs[2:],
                llm_settings=llm_settings,
                llm_factory=factory,
            )

    report = run(_demo())
    path = write_report(report, out_dir / "report.md")
    click.echo(f"\nreport with plots: {path}  (database: {db}; try `p2w-rt --db {db} show earlier`)")


async def _record_sample(
    store: Any, model: str, base_url: str | None, api_key: str | None, chromium: str | None, err: Console
) -> str:
    """Record the ambiguous sample tasks (levels 1 and 2) with the configured model; returns the run label."""
    from p2w_runtime.agent import RecordRequest, record
    from p2w_runtime.data import load_tasks
    from p2w_runtime.sample import sample_history_dir, sample_tasks_dir

    if not base_url and not api_key:
        raise click.UsageError("--record needs an endpoint: --base-url / OPENAI_BASE_URL (and a key if it needs one)")
    ambiguous = tuple(t.task_id for t in load_tasks(sample_tasks_dir()) if t.level > 0)
    request = RecordRequest(
        tasks_dir=sample_tasks_dir(),
        history_dir=sample_history_dir(),
        model=model,
        label=f"recorded-{model}",
        base_url=base_url,
        api_key=api_key,
        task_ids=ambiguous,
        chromium=chromium,
        concurrency=2,
    )
    err.print(f"recording {len(ambiguous)} sample tasks with {model} at {base_url or 'api.openai.com'} …")
    summary = await record(store, request)
    return summary.label

"""`history index` and `history search`: see what the agent's retriever finds in a persona's memory bank."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from p2w_cli._common import console, echo_json, open_db, run, waited
from p2w_cli._options import FINITE_FLOAT
from p2w_cli.render.terminal import cell, markup

if TYPE_CHECKING:
    from p2w_runtime.data import BankSource


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
    from p2w_runtime.demo.sample import sample_history_dir

    return sample_history_dir() if str(value) == "sample" else value


async def _run_banks(ctx: click.Context, run_ref: str, history_dir: Path) -> BankSource:
    """The banks run ``run_ref`` carries, or ``--history`` when given and the same."""
    from p2w_runtime.domain import find_run, run_banks

    given = ctx.get_parameter_source("history_dir") == click.core.ParameterSource.COMMANDLINE
    async with open_db(ctx, create=False) as store:
        return await run_banks(store, await find_run(store, run_ref), history_dir if given else None)


@click.group()
def history() -> None:
    """Index and search persona browsing histories with the agent's retriever."""


@history.command("index")
@_history_options
@click.option("--json", "as_json", is_flag=True, help="One JSON object per persona instead of the table.")
def history_index(history_dir: Path, embedder: str | None, cache_dir: Path | None, as_json: bool) -> None:
    """Build every persona's index cache (encodes only changed banks)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.table import Table

    from p2w_runtime.retrieval import IndexSummary, index_history, load_embedder

    async def _index() -> IndexSummary:  # blocking work; run() turns user errors into one line
        model = load_embedder(embedder)
        columns = (TextColumn("{task.description:<24}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task("reading banks", total=None)

            def report(persona: str, done: int, total: int) -> None:
                bar.update(task, description=persona, completed=done, total=total)

            return index_history(history_dir, model, cache_dir, progress=report)

    summary = run(_index())
    if as_json:
        for p in summary.personas:
            echo_json(
                {
                    "persona": p.persona,
                    "entries": p.entries,
                    "encoded": p.encoded,
                    "from_cache": p.entries - p.encoded,
                    "seconds": round(p.seconds, 3),
                    "index_hash": p.index_hash,
                    "model_id": summary.model_id,
                }
            )
        return
    table = Table("persona", "entries", "encoded", "from cache", "seconds", "index hash")
    for p in summary.personas:
        row = (p.persona, str(p.entries), str(p.encoded), str(p.entries - p.encoded), f"{p.seconds:.2f}")
        table.add_row(cell(row[0]), *row[1:], p.index_hash[:12])
    console.print(table)
    rate = f" ({summary.encoded / summary.seconds:.0f} entries/s)" if summary.encoded else ""
    console.print(
        cell(
            f"{len(summary.personas)} personas, {summary.entries} entries: {summary.encoded} encoded, "
            f"{summary.cached} from cache in {summary.seconds:.1f}s{rate} with {summary.model_id}"
        )
    )


@history.command("search")
@click.argument("persona")
@click.argument("query")
@_history_options
@click.option("--k", "k", default=20, show_default=True, type=click.IntRange(min=1), help="At most this many hits.")
@click.option("--threshold", default=0.5, show_default=True, type=FINITE_FLOAT, help="Minimum cosine similarity.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object with the hits.")
@click.option(
    "--run",
    "run_ref",
    metavar="RUN",
    help="Search the memory banks RUN carries (in --db) instead of a folder; with --history, that folder once "
    "it is checked to hold the same banks.",
)
@click.pass_context
def history_search(
    ctx: click.Context,
    persona: str,
    query: str,
    history_dir: Path,
    embedder: str | None,
    cache_dir: Path | None,
    k: int,
    threshold: float,
    as_json: bool,
    run_ref: str | None,
) -> None:
    """Show the history entries the retriever returns for QUERY."""
    from rich.table import Table

    from p2w_runtime.retrieval import HistoryIndex, HistoryRetriever, SearchHit, load_embedder

    async def _search() -> tuple[HistoryIndex, list[SearchHit]]:  # blocking work; run() turns user errors into one line
        banks = await _run_banks(ctx, run_ref, history_dir) if run_ref else history_dir
        retriever = HistoryRetriever(banks, load_embedder(embedder), cache_dir)
        with Console(stderr=True).status(f"opening the index of {markup(persona)}"):
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
                "hits": [hit.to_retrieval_hit().model_dump(mode="json") for hit in hits],
            }
        )
        return
    console.print(
        cell(
            f"{persona}: {len(hits)} of {index.size} entries with cosine >= {threshold} (k={k}, {index.model_id}; "
            f"{waited():.2f} s)"
        )
    )
    table = Table("rank", "score", "type", "object", "website", "timestamp")
    for hit in hits:
        e = hit.entry  # cell(): history entries are data, not rich markup ("[2-pack] socks")
        table.add_row(str(hit.rank), f"{hit.score:.3f}", *map(cell, (e.type, e.object, e.website or "-", e.timestamp)))
    if hits:
        console.print(table)
    elif best := index.search(query, 1, -1.0):  # the closest entry says how far to lower the threshold
        hint = f"no entry reaches cosine {threshold} (the closest scores {best[0].score:.3f}): lower --threshold"
        click.echo(hint, err=True)

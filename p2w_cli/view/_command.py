"""`view`: the runs in a browser (a local ASGI app), or `--export DIR RUN...` as static HTML files."""

from __future__ import annotations

from pathlib import Path

import click

from p2w_cli._common import StoreLocation, db_path, run


@click.command("view")
@click.argument("run_refs", metavar="[RUN...]", nargs=-1)
@click.option(
    "--db",
    "view_db",
    type=StoreLocation(),
    help="Event store to view (default: the global --db).",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to bind (the store is unprotected).")
@click.option("--port", default=0, show_default=True, type=click.IntRange(0, 65535), help="Port; 0 picks a free one.")
@click.option("--open", "open_browser", is_flag=True, help="Open the viewer in the default web browser.")
@click.option(
    "--with",
    "others",
    multiple=True,
    type=StoreLocation(),
    help="Another database whose runs compare can name as FILE.db:RUN (repeatable).",
)
@click.option(
    "--export",
    "export_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write the pages of RUN... as static HTML into this folder instead of serving; an export there before "
    "is replaced.",
)
@click.option(
    "--force",
    is_flag=True,
    help="With --export: write into a folder that is not empty and holds no export (files of the same names are "
    "replaced, nothing is deleted).",
)
@click.option(
    "--annotator",
    metavar="NAME",
    help="Offer a label form on each episode page; what you submit is recorded as the judgment human:NAME "
    "(as p2w-rt import-labels records it, for p2w-rt agree --human). Without it the viewer is read-only.",
)
@click.pass_context
def view_cmd(
    ctx: click.Context,
    run_refs: tuple[str, ...],
    view_db: Path | str | None,
    host: str,
    port: int,
    open_browser: bool,
    others: tuple[Path | str, ...],
    export_dir: Path | None,
    force: bool,
    annotator: str | None,
) -> None:
    """Browse runs, episodes, judgments and comparisons in a web browser (read-only unless --annotator)."""
    db = _sqlite_file(view_db or db_path(ctx))
    other_files = tuple(_sqlite_file(other, "--with") for other in others)
    if annotator is not None:
        from p2w_rt.replay.agreement import check_annotator

        if export_dir is not None:
            raise click.UsageError("--annotator labels in the served viewer; a static export has no form to post")
        from p2w_runtime.errors import UserError

        try:
            annotator = check_annotator("--annotator", annotator)
        except UserError as exc:
            raise click.UsageError(str(exc)) from None
    if export_dir is not None:
        _export(db, run_refs, export_dir, force)
        return
    if force:
        raise click.UsageError("--force is only for --export")
    if run_refs:
        raise click.UsageError("RUN... is only for --export; the viewer serves every run of --db")

    async def _check() -> None:  # a missing or foreign database fails here, in one line, before anything binds
        from p2w_runtime.llm import PriceTable
        from p2w_runtime.store import ReadOnlyStore, open_store

        PriceTable.default()  # the episode pages price calls with it: a bad $P2W_PRICES file is named now

        async with open_store(db, create=False) as store:
            if annotator is not None and getattr(store, "read_only", False):  # every label post would be refused
                raise ReadOnlyStore(
                    f"{db}: opened read-only (the file, its folder or its medium is read-only), so --annotator "
                    "cannot record labels in it; view it without --annotator"
                )
        for path in other_files:
            async with open_store(path, create=False):
                pass

    run(_check())
    _serve(db, other_files, host, port, open_browser, annotator)


def _sqlite_file(location: Path | str, option: str | None = None) -> Path:
    """A store the viewer can read: a SQLite file (``--with``'s must exist). ``StoreLocation`` has refused
    folders and other schemes, naming a URL without its password."""
    if not isinstance(location, Path):
        raise click.UsageError("view reads SQLite files; export the runs (p2w-rt export) and import them into one")
    if option is not None and not location.is_file():
        raise click.BadParameter(f"{location}: no such database file", param_hint=option)
    return location


def _export(db: Path, run_refs: tuple[str, ...], folder: Path, force: bool) -> None:
    from p2w_cli.view.app import ExportSummary, export_static
    from p2w_runtime.store import open_store

    if not run_refs:
        raise click.UsageError("--export needs the runs to export: p2w-rt view --export DIR RUN...")

    async def _write() -> ExportSummary:
        async with open_store(db, create=False) as store:
            return await export_static(store, run_refs, folder, source=db.name, force=force)  # a name, not a path

    summary = run(_write())
    for problem in summary.problems:
        click.echo(f"warning: {problem}", err=True)
    replaced = ", replacing the export that was there" if summary.replaced else ""
    click.echo(
        f"wrote {summary.pages} pages and {summary.blobs} blobs to {folder}{replaced}; open {folder / 'index.html'}"
    )


def _serve(db: Path, others: tuple[Path, ...], host: str, port: int, open_browser: bool, annotator: str | None) -> None:
    import socket
    import sys
    import threading
    import webbrowser

    import uvicorn

    from p2w_cli.view._hosts import is_loopback
    from p2w_cli.view.app import create_app

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        click.echo(f"error: --host {host} --port {port}: cannot listen there ({exc.strerror or exc})", err=True)
        sys.exit(2)
    sock.listen(128)
    bound = sock.getsockname()[1]
    url = f"http://{'[' + host + ']' if ':' in host else host}:{bound}/"
    loopback = is_loopback(host)
    if not loopback:
        click.echo(f"warning: serving {db} on {host}, reachable from other machines, without authentication", err=True)
    click.echo(f"p2w-rt view: {db} at {url}  (Ctrl-C to stop)", err=False)
    if open_browser:
        threading.Timer(0.5, webbrowser.open, args=(url,)).start()
    if annotator:
        click.echo(f"labels submitted on episode pages are recorded in {db} as human:{annotator}", err=True)
    app = create_app(db, others=others, annotator=annotator, any_host=not loopback)
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])

"""The viewer as an ASGI app (Starlette on uvicorn): server-rendered pages over a store opened once.

Every page carries a strict Content-Security-Policy (scripts and styles from the viewer only);
recorded pages are served from ``/dom/`` under a CSP ``sandbox`` with no network at all, and shown
in an ``<iframe sandbox>`` without ``allow-scripts``, so nothing recorded ever runs.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from p2w_cli.view._blobs import BlobProblem, media_type, read_blob
from p2w_cli.view._episode import UnknownEpisode, episode_page
from p2w_cli.view._links import ServerLinks
from p2w_cli.view._plots import NoPlot, plot_png
from p2w_cli.view._queries import PAGE_SIZE, EpisodeFilter, RunCache, run_page, run_row
from p2w_cli.view._render import STATIC, environment
from p2w_cli.view._side_by_side import side_by_side
from p2w_runtime.domain import UnknownRun, find_run, list_runs
from p2w_runtime.store import EventStore, open_store
from replay.diff import DEFAULT_JUDGE, MissingJudgments, diff_runs, load_run_data, parse_ref
from replay.metrics import TITLES

PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'"
)
RECORDED_CSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:"
"""For recorded pages and blobs: no scripts (CSP sandbox without allow-scripts), nothing fetched from anywhere."""
SAFE_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}


class Forbidden(LookupError):
    """A compare asked for a database the viewer was not started with."""


@dataclass
class ViewState:
    """The stores the viewer reads: ``db`` and the extra files given with ``--with`` (compare only)."""

    db: Path
    others: Sequence[Path] = ()
    stores: dict[Path, EventStore] = field(default_factory=dict)

    def store(self) -> EventStore:
        return self.stores[self.db.resolve()]

    def store_for(self, path: Path) -> EventStore:
        found = self.stores.get(path.resolve())
        if found is None:
            raise Forbidden(f"{path}: not a database this viewer was started with (add --with {path})")
        return found


def create_app(db: Path, *, others: Sequence[Path] = ()) -> Starlette:
    """The viewer over ``db`` (and ``others`` for comparisons), opened at startup, never written."""
    state = ViewState(Path(db), tuple(Path(o) for o in others))
    env = environment()
    links = ServerLinks()
    cache = RunCache()

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            for path in (state.db, *state.others):
                if path.resolve() not in state.stores:
                    state.stores[path.resolve()] = await stack.enter_async_context(open_store(path, create=False))
            yield

    def page(template: str, status: int = 200, **context: Any) -> HTMLResponse:
        html = env.get_template(template).render(links=links, source=str(state.db), **context)
        return HTMLResponse(html, status, headers={"Content-Security-Policy": PAGE_CSP, **SAFE_HEADERS})

    def problem(status: int, heading: str, message: str) -> HTMLResponse:
        return page("error.html", status, heading=heading, message=message)

    async def runs(request: Request) -> Response:
        store = state.store()
        return page("runs.html", rows=[run_row(await cache.get(store, info)) for info in await list_runs(store)])

    async def run(request: Request) -> Response:
        q = request.query_params
        info = await find_run(state.store(), request.path_params["run_id"])
        level = q.get("level", "")
        wanted = EpisodeFilter(
            level=int(level) if level.isdigit() else None,
            website=q.get("website", ""),
            label=q.get("label", ""),
            success=q.get("success", ""),
            judge=q.get("judge", ""),
        )
        number = q.get("page", "1")
        read = await cache.get(state.store(), info)
        p = run_page(read, wanted, int(number) if number.isdigit() else 1, PAGE_SIZE)
        if not wanted.judge and p.judges:
            wanted = EpisodeFilter(wanted.level, wanted.website, wanted.label, wanted.success, p.judges[0])
        return page("run.html", p=p, f=wanted)

    async def episode(request: Request) -> Response:
        info = await find_run(state.store(), request.path_params["run_id"])
        store = state.store()
        judgments = await cache.judgments(store, info)
        classifications = (await cache.get(store, info)).classifications
        p = await episode_page(store, info.run_id, request.path_params["episode_id"], judgments, classifications)
        return page("episode.html", p=p, run_label=info.label)

    async def plot(request: Request) -> Response:
        info = await find_run(state.store(), request.path_params["run_id"])
        png = plot_png(await cache.get(state.store(), info), request.path_params["name"])
        return Response(png, media_type="image/png", headers={"Content-Security-Policy": RECORDED_CSP, **SAFE_HEADERS})

    async def blob(request: Request) -> Response:
        data = await read_blob(state.store(), request.path_params["sha"])
        mime, _ = media_type(data)
        return Response(data, media_type=mime, headers={"Content-Security-Policy": RECORDED_CSP, **SAFE_HEADERS})

    async def dom(request: Request) -> Response:
        data = await read_blob(state.store(), request.path_params["sha"])
        headers = {"Content-Security-Policy": RECORDED_CSP, **SAFE_HEADERS}
        return Response(data, media_type="text/html; charset=utf-8", headers=headers)

    async def compare(request: Request) -> Response:
        q = request.query_params
        a_text, b_text, judge = q.get("a", ""), q.get("b", ""), q.get("judge", "") or DEFAULT_JUDGE
        if not a_text or not b_text:
            return problem(400, "Compare needs two runs", "give both ?a=RUN and ?b=RUN (or FILE.db:RUN)")
        data, local = [], []
        for text in (a_text, b_text):
            ref = parse_ref(text, state.db)
            if not isinstance(ref.db, Path):
                return problem(400, "Not a SQLite file", f"{text}: the viewer compares runs of SQLite files")
            store = state.store_for(ref.db)
            data.append(await load_run_data(store, await find_run(store, ref.run), judge, text))
            local.append(ref.db.resolve() == state.db.resolve())
        d = diff_runs(data[0], data[1])
        return page("compare.html", d=d, headers=TITLES, side=side_by_side, a_local=local[0], b_local=local[1])

    async def not_found(request: Request, exc: Exception) -> Response:
        return problem(404, "Not found", str(exc) or f"nothing at {request.url.path}")

    async def blob_problem(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, BlobProblem)
        status, heading = (500, "Corrupt blob") if exc.corrupt else (404, "Missing blob")
        return problem(status, heading, str(exc))

    async def forbidden(request: Request, exc: Exception) -> Response:
        return problem(403, "Not available", str(exc))

    async def not_judged(request: Request, exc: Exception) -> Response:
        return problem(409, "Not judged", str(exc))

    async def http_error(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 500)
        return problem(status, "Not found" if status == 404 else f"HTTP {status}", f"nothing at {request.url.path}")

    return Starlette(
        routes=[
            Route("/", runs),
            Route("/run/{run_id}", run),
            Route("/run/{run_id}/episode/{episode_id:path}", episode),
            Route("/run/{run_id}/plot/{name}.png", plot),
            Route("/blob/{sha}", blob),
            Route("/dom/{sha}", dom),
            Route("/compare", compare),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        exception_handlers={
            UnknownRun: not_found,
            UnknownEpisode: not_found,
            NoPlot: not_found,
            BlobProblem: blob_problem,
            Forbidden: forbidden,
            MissingJudgments: not_judged,
            404: http_error,
            405: http_error,
        },
        lifespan=lifespan,
    )

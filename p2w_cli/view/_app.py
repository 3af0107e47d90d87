"""The viewer as an ASGI app (Starlette on uvicorn): server-rendered pages over a store opened once.

Every page carries a strict Content-Security-Policy (scripts and styles from the viewer only);
recorded pages are served from ``/dom/`` under a CSP ``sandbox`` with no network at all, and shown
in an ``<iframe sandbox>`` without ``allow-scripts``, so nothing recorded ever runs.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from p2w_cli.view._annotate import FORM_BYTES, Annotating, parse_form
from p2w_cli.view._blobs import BlobProblem, media_type, read_blob
from p2w_cli.view._clip import whole_text
from p2w_cli.view._episode import EpisodePage, UnknownEpisode, page_of_step
from p2w_cli.view._filters import parse_filter, parse_search
from p2w_cli.view._hosts import LoopbackOnly
from p2w_cli.view._json import as_json
from p2w_cli.view._links import ServerLinks
from p2w_cli.view._live import runs_live
from p2w_cli.view._pages import Forbidden, ViewQueries, ViewState
from p2w_cli.view._plots import NoPlot
from p2w_cli.view._problems import BadRequest
from p2w_cli.view._render import STATIC, environment
from p2w_rt.replay.diff import MissingJudgments
from p2w_runtime.domain import UnknownRun
from p2w_runtime.store import open_store

PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; frame-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'self'"
)
RECORDED_CSP = "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:"
"""For recorded pages and blobs: no scripts (CSP sandbox without allow-scripts), nothing fetched from anywhere."""
SAFE_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "Cache-Control": "no-store"}
API_CSP = "default-src 'none'; frame-ancestors 'none'"
REFUSAL_HEADERS = {"Content-Security-Policy": API_CSP, **SAFE_HEADERS}


def create_app(
    db: Path, *, others: Sequence[Path] = (), annotator: str | None = None, any_host: bool = False
) -> Starlette:
    """The viewer over ``db`` (and ``others`` for comparisons), opened at startup, never written unless
    ``annotator`` is given: then the episode page offers a label form whose posts are recorded as that person's
    labels (``import-labels``' path). Each page has a JSON twin under ``/api/`` built by the same query
    (``ViewQueries``, kept in ``app.state.queries``). Only requests naming a loopback host are served
    (``_hosts.py``), unless ``any_host`` (a viewer bound to an address other machines reach)."""
    state = ViewState(Path(db), tuple(Path(o) for o in others))
    annotating = Annotating(annotator, secrets.token_urlsafe(32)) if annotator else None
    queries = ViewQueries(state)
    env = environment()
    links = ServerLinks()

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

    def data(value: object, status: int = 200) -> Response:
        headers = {"Content-Security-Policy": API_CSP, **SAFE_HEADERS}
        return Response(as_json(value), status, headers=headers, media_type="application/json")

    async def problem(request: Request, status: int, heading: str, message: str) -> Response:
        if request.url.path.startswith("/api/"):
            return data({"error": heading, "message": message}, status)
        back = await queries.run_of_path(request.url.path)  # a bad URL under a run links back to that run
        return page("error.html", status, heading=heading, message=message, back_run=back)

    async def runs(request: Request) -> Response:
        (judge,) = _only(request, "judge")
        rows = await queries.runs(judge)
        live = runs_live([row.info for row in rows])  # the state the rows show
        return page("runs.html", rows=rows, live=live, judge=judge)

    async def api_runs(request: Request) -> Response:
        (judge,) = _only(request, "judge")
        return data(await queries.runs(judge))

    async def run(request: Request) -> Response:
        return page("run.html", p=await queries.run(request.path_params["run_id"], *parse_filter(request.query_params)))

    async def api_run(request: Request) -> Response:
        return data(await queries.run(request.path_params["run_id"], *parse_filter(request.query_params)))

    async def api_usage(request: Request) -> Response:
        return data(await queries.usage(request.path_params["run_id"]))

    async def api_live(request: Request) -> Response:
        return data(await queries.live(request.path_params["run_id"]))

    async def api_runs_live(request: Request) -> Response:
        return data(await queries.runs_live())

    async def search(request: Request) -> Response:
        return page("search.html", s=await queries.search(*parse_search(request.query_params)))

    async def api_search(request: Request) -> Response:
        return data(await queries.search(*parse_search(request.query_params)))

    async def episode_query(request: Request) -> EpisodePage | Response:
        """The page asked for, or, for ``?step=N``, a redirect to the page that shows step N (the fragment the
        link carries, ``#step-N`` or ``#llm-N-K``, is kept by the browser)."""
        run_id, episode_id = request.path_params["run_id"], request.path_params["episode_id"]
        q = request.query_params
        against = q.get("against", "")
        if "step" in q:
            number = _whole("step", q["step"], 0)
            target = request.url.remove_query_params("step").include_query_params(page=page_of_step(number))
            return RedirectResponse(str(target), 302)
        return await queries.episode(run_id, episode_id, _whole("page", q.get("page", "1"), 1), against)

    async def episode(request: Request) -> Response:
        found = await episode_query(request)
        if isinstance(found, Response):
            return found
        labelled = request.query_params.get("labelled")
        return page("episode.html", p=found, annotate=annotating, labelled=labelled)

    async def api_episode(request: Request) -> Response:
        found = await episode_query(request)
        return found if isinstance(found, Response) else data(found)

    async def judges(request: Request) -> Response:
        p = await queries.judges(request.path_params["run_id"], request.path_params["episode_id"])
        return page("judges.html", p=p)

    async def api_judges(request: Request) -> Response:
        return data(await queries.judges(request.path_params["run_id"], request.path_params["episode_id"]))

    async def label(request: Request) -> Response:
        """The label form's post: refused without ``--annotator``, from another origin, or without this server's
        token (a page of another site cannot post here); a bad field is a 400 naming it."""
        if annotating is None:
            raise Forbidden("this viewer is read-only: start it with p2w-rt view --annotator NAME to label episodes")
        origin = request.headers.get("origin")  # "null" from the viewer's own no-referrer pages: the token decides
        if origin not in (None, "null") and origin != f"{request.url.scheme}://{request.headers.get('host', '')}":
            raise Forbidden(f"a label form posted from {origin[:80]!r}, not from this viewer")
        body = b""
        async for chunk in request.stream():  # read no more than a label form holds (parse_form refuses more)
            body += chunk
            if len(body) > FORM_BYTES:
                break
        form = parse_form(body)
        if not hmac.compare_digest(form.get("token", [""])[0], annotating.token):
            raise Forbidden("the label form's token is not this viewer's: reload the episode page and label again")
        run_id, episode_id = request.path_params["run_id"], request.path_params["episode_id"]
        back = _whole("page", form.get("page", ["1"])[0], 1)  # checked before anything is written
        summary = await queries.label(run_id, episode_id, form, annotating.annotator)
        done = "written" if summary.written else "already"
        return RedirectResponse(links.episode(run_id, episode_id, page=back, labelled=done) + "#label-form", 303)

    async def compare(request: Request) -> Response:
        return page("compare.html", c=await queries.compare(*_only(request, "a", "b", "judge")))

    async def api_compare(request: Request) -> Response:
        return data(await queries.compare(*_only(request, "a", "b", "judge")))

    async def plot(request: Request) -> Response:
        png = await queries.plot(request.path_params["run_id"], request.path_params["name"])
        return Response(png, media_type="image/png", headers={"Content-Security-Policy": RECORDED_CSP, **SAFE_HEADERS})

    async def blob(request: Request) -> Response:
        data = await read_blob(state.store(), request.path_params["sha"])
        mime, _ = media_type(data)
        return Response(data, media_type=mime, headers={"Content-Security-Policy": RECORDED_CSP, **SAFE_HEADERS})

    async def text(request: Request) -> Response:
        """The whole of a value the episode page shows clipped, as plain text."""
        page, sha = _only(request, "page", "sha")
        run_id, episode_id = request.path_params["run_id"], request.path_params["episode_id"]
        found = await queries.episode(run_id, episode_id, _whole("page", page or "1", 1), "")
        if (whole := whole_text(found, sha)) is None:
            return await problem(request, 404, "Not found", "no recorded value of this episode page has that sha256")
        headers = {"Content-Security-Policy": RECORDED_CSP, **SAFE_HEADERS}
        return Response(whole.encode(), media_type="text/plain; charset=utf-8", headers=headers)

    async def dom(request: Request) -> Response:
        data = await read_blob(state.store(), request.path_params["sha"])
        headers = {"Content-Security-Policy": RECORDED_CSP, **SAFE_HEADERS}
        return Response(data, media_type="text/html; charset=utf-8", headers=headers)

    async def not_found(request: Request, exc: Exception) -> Response:
        return await problem(request, 404, "Not found", str(exc) or f"nothing at {request.url.path}")

    async def blob_problem(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, BlobProblem)
        status, heading = (500, "Corrupt blob") if exc.corrupt else (404, "Missing blob")
        return await problem(request, status, heading, str(exc))

    async def bad_request(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, BadRequest)
        return await problem(request, 400, exc.heading, str(exc))

    async def forbidden(request: Request, exc: Exception) -> Response:
        return await problem(request, 403, "Not available", str(exc))

    async def not_judged(request: Request, exc: Exception) -> Response:
        return await problem(request, 409, "Not judged", str(exc))

    async def http_error(request: Request, exc: Exception) -> Response:
        status = getattr(exc, "status_code", 500)
        heading = "Not found" if status == 404 else f"HTTP {status}"
        return await problem(request, status, heading, f"nothing at {request.url.path}")

    async def server_error(request: Request, exc: Exception) -> Response:
        """One line for the reader; the traceback goes to the viewer's log (uvicorn), never into a page."""
        return await problem(
            request, 500, "Viewer error", f"{request.url.path}: the viewer failed ({type(exc).__name__})"
        )

    app = Starlette(
        routes=[
            Route("/", runs),
            Route("/run/{run_id}", run),
            Route("/run/{run_id}/episode/{episode_id:path}", episode),
            Route("/run/{run_id}/judges/{episode_id:path}", judges),
            Route("/run/{run_id}/text/{episode_id:path}", text),
            Route("/run/{run_id}/plot/{name}.png", plot),
            Route("/blob/{sha}", blob),
            Route("/dom/{sha}", dom),
            Route("/compare", compare),
            Route("/search", search),
            Route("/label/{run_id}/{episode_id:path}", label, methods=["POST"]),
            Route("/api/runs", api_runs),
            Route("/api/runs/live", api_runs_live),
            Route("/api/run/{run_id}", api_run),
            Route("/api/run/{run_id}/usage", api_usage),
            Route("/api/run/{run_id}/live", api_live),
            Route("/api/search", api_search),
            Route("/api/run/{run_id}/episode/{episode_id:path}", api_episode),
            Route("/api/run/{run_id}/judges/{episode_id:path}", api_judges),
            Route("/api/compare", api_compare),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        exception_handlers={
            UnknownRun: not_found,
            UnknownEpisode: not_found,
            NoPlot: not_found,
            BlobProblem: blob_problem,
            BadRequest: bad_request,
            Forbidden: forbidden,
            MissingJudgments: not_judged,
            404: http_error,
            405: http_error,
            Exception: server_error,
        },
        lifespan=lifespan,
        middleware=[] if any_host else [Middleware(LoopbackOnly, headers=REFUSAL_HEADERS)],
    )
    app.state.queries = queries
    return app


def _only(request: Request, *names: str) -> tuple[str, ...]:
    """The query parameters of a page that takes only ``names`` (each empty when not given); any other is a 400."""
    odd = next((k for k in request.query_params if k not in names), None)
    if odd is not None:
        allowed = ", ".join(f"?{n}=" for n in names)
        raise BadRequest("Bad parameter", f"?{odd[:40]}=: not a parameter of this page (only {allowed})")
    return tuple(request.query_params.get(n, "") for n in names)


def _whole(name: str, text: str, least: int) -> int:
    """A query parameter that must be a whole number of at least ``least``; else a 400 naming it."""
    try:
        value = int(text)
    except ValueError:
        raise BadRequest("Bad parameter", f"?{name}={text[:40]!r}: not a whole number") from None
    if value < least:
        raise BadRequest("Bad parameter", f"?{name}={value}: must be at least {least}")
    return value

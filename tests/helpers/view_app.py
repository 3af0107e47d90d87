"""The viewer app served from a thread of the test's own process, so a test can read its state, and its pages read
back as JSON or HTML; a run page as a viewer process just started serves it."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from html import unescape
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, urlsplit

import uvicorn

from p2w_cli.view._filters import parse_filter
from p2w_cli.view._pages import ViewQueries, ViewState
from p2w_cli.view._run_page import RunPage, RunRow
from p2w_cli.view.app import create_app
from p2w_runtime.store import open_store
from tests.helpers.view_support import fetch

T = TypeVar("T")


@contextmanager
def serving_app(db: Path) -> Iterator[tuple[str, Any]]:
    """The viewer app on uvicorn in a thread of this process (so a test can read its state); yields (url, app)."""
    app = create_app(db)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the viewer did not start"
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/", app
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def get_json(url: str) -> tuple[int, Any]:
    status, headers, body = fetch(url)
    assert headers["content-type"] == "application/json", headers
    return status, json.loads(body)


def get_html(url: str) -> str:
    status, _, body = fetch(url)
    assert status == 200, body[:300]
    return body.decode("utf-8")


def link_queries(html: str, text: str) -> list[dict[str, str]]:
    """The query of each link of ``html`` whose text is ``text``."""
    hrefs = re.findall(r'<a [^>]*href="([^"]*)"[^>]*>' + re.escape(text) + "</a>", html)
    return [dict(parse_qsl(urlsplit(unescape(h)).query)) for h in hrefs]


def fresh_viewer(db: Path, ask: Callable[[ViewQueries], Awaitable[T]]) -> tuple[T, ViewQueries]:
    """What a viewer process just started on ``db`` answers to its first request (``ask``), and its queries."""

    async def go() -> tuple[T, ViewQueries]:
        state = ViewState(db)
        async with open_store(db, create=False) as store:
            state.stores[db.resolve()] = store
            queries = ViewQueries(state)
            return await ask(queries), queries

    return asyncio.run(go())


def fresh_open(db: Path, ref: str, query: Mapping[str, str] | None = None) -> tuple[RunPage, ViewQueries]:
    """A run page as a viewer process just started on ``db`` serves it: its first request."""
    return fresh_viewer(db, lambda queries: queries.run(ref, *parse_filter(query or {})))


def fresh_runs(db: Path, judge: str = "") -> tuple[list[RunRow], ViewQueries]:
    """The runs page as a viewer process just started on ``db`` serves it: its first request."""
    return fresh_viewer(db, lambda queries: queries.runs(judge))

"""Text hidden by CSS stays hidden offline: the final state records the page's stylesheets.

A real Chromium records a page whose stylesheets hide text (a same-origin sheet, one it
``@import``s, a cross-origin one the CSSOM will not read, a rule a script inserted); the
``webarena`` judge then reads ``outerText`` on the recorded page and must get what the live
page gave. A final_state recorded before stylesheets were kept (schema v1) still loads.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from aiohttp import web

from p2w_rt.replay.derived import PassSettings
from p2w_rt.replay.webarena import WebArenaJudge, WebArenaSettings
from p2w_rt.schemas import GENESIS_HASH, FinalState, NewEvent, StoredEvent
from p2w_runtime.actions import parse_action
from p2w_runtime.browser import BrowserSession, EpisodeSettings, ExecResult
from tests.helpers.webarena_support import judged

BOX = (
    '<div id="box">Visible<span class="hidden"> HIDDEN-1</span><span class="imported"> HIDDEN-2</span>'
    '<span class="cross"> HIDDEN-3</span><span class="scripted"> HIDDEN-4</span></div>'
)


def static(text: str, content_type: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def handler(request: web.Request) -> web.Response:
        return web.Response(text=text, content_type=content_type)

    return handler


async def serve(app: web.Application) -> tuple[web.AppRunner, str]:
    runner = web.AppRunner(app, shutdown_timeout=0.5)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    return runner, f"http://127.0.0.1:{runner.addresses[0][1]}"


@pytest_asyncio.fixture
async def styled_page() -> AsyncIterator[str]:
    """The URL of a page that hides four spans by four kinds of stylesheet."""
    cdn = web.Application()
    cdn.router.add_get("/cross.css", static(".cross { display: none }", "text/css"))
    cdn_runner, cdn_base = await serve(cdn)
    css = {
        "/main.css": '@import url("/imported.css");\n.hidden { display: none }',
        "/imported.css": ".imported { display: none }",
    }
    page = (
        f'<html><head><link rel="stylesheet" href="/main.css"><link rel="stylesheet" href="{cdn_base}/cross.css">'
        "</head><body>" + BOX + "<script>const s = document.styleSheets[0];"
        " s.insertRule('.scripted { display: none }', s.cssRules.length)</script>"
        "</body></html>"
    )
    app = web.Application()
    app.router.add_get("/", static(page, "text/html"))
    for path, text in css.items():
        app.router.add_get(path, static(text, "text/css"))
    runner, base = await serve(app)
    yield f"{base}/"
    await runner.cleanup()
    await cdn_runner.cleanup()


@pytest.fixture
async def judge(tmp_path: Path) -> AsyncIterator[WebArenaJudge]:
    check = {
        "url": "last",
        "locator": "document.querySelector('#box').outerText",
        "required_contents": {"exact_match": "visible"},
    }
    path = tmp_path / "configs.json"
    path.write_text(
        json.dumps([{"task_id": 1, "intent": "q", "eval": {"eval_types": ["program_html"], "program_html": [check]}}])
    )
    judge = WebArenaJudge(PassSettings(plugins=(WebArenaSettings(configs=str(path)),)))
    yield judge
    await judge.aclose()


async def test_recorded_stylesheets_hide_offline_what_css_hid_live(styled_page: str, judge: WebArenaJudge) -> None:
    async with BrowserSession("/usr/bin/chromium") as session:
        episode = await session.new_context(settings=EpisodeSettings(navigation_timeout_s=10.0, action_timeout_s=5.0))
        try:
            assert await episode.execute(parse_action(f"goto [{styled_page}]")) == ExecResult("executed")
            page = await episode.current_page()
            live = await page.evaluate("() => document.querySelector('#box').outerText")
            state = await episode.final_state()
        finally:
            await episode.close()
    assert live == "Visible" and state.errors == []
    sheets = json.loads(state.stylesheets)
    assert {url.rsplit("/", 1)[1] for url in sheets} == {"main.css", "imported.css", "cross.css"}
    assert ".scripted" in next(css for url, css in sheets.items() if url.endswith("/main.css"))

    styled = await judged(judge, 1, "done", url=state.url, page=state.dom_html.decode(), stylesheets=sheets)
    assert styled.evidence["program_html.1"].text == live and styled.metrics["score"] == 1.0
    unstyled = await judged(judge, 1, "done", url=state.url, page=state.dom_html.decode())  # as a v1 recording
    assert "HIDDEN-1" in unstyled.evidence["program_html.1"].text and unstyled.metrics["score"] == 0.0


def test_a_v1_final_state_without_stylesheets_still_loads() -> None:
    current = StoredEvent.seal(
        NewEvent(stream="r/1", payload=FinalState(url="http://x/", dom_html="ab")), seq=1, prev_hash=GENESIS_HASH
    )
    v1_payload = {k: v for k, v in json.loads(current.payload_json).items() if k != "stylesheets"}
    v1 = dataclasses.replace(current, schema_version=1, payload_json=json.dumps(v1_payload))
    event = v1.decode()
    assert event.schema_version == 2 and event.payload.stylesheets is None and event.payload.dom_html == "ab"
    assert FinalState.SCHEMA_VERSION == 2

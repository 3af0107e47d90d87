"""A page whose main thread never yields (a script looping on ``alert()``) answers no Playwright call without a
timeout and no CDP detach: every call the agent makes on it still returns within its bounds, and the agent can
leave it."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from p2w_runtime.actions import parse_action
from p2w_runtime.browser import BrowserSession, EpisodeBrowser, EpisodeSettings

pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.slow]

SETTINGS = EpisodeSettings(navigation_timeout_s=2.0, action_timeout_s=1.0)
ALERTS = "data:text/html,<h1>Alerts</h1><script>while(true)alert('again')</script>"
LIMIT_S = 60.0
"""Far above what any call takes when bounded (observe, the slowest, ~15 s with these settings); the calls hung."""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def session() -> AsyncIterator[BrowserSession]:
    async with BrowserSession("/usr/bin/chromium") as session:
        yield session


@pytest_asyncio.fixture(loop_scope="module")
async def wedged(session: BrowserSession) -> AsyncIterator[EpisodeBrowser]:
    episode = await session.new_context(settings=SETTINGS)
    opened = await asyncio.wait_for(episode.execute(parse_action(f"goto [{ALERTS}]")), LIMIT_S)
    assert opened.status == "executed" and opened.timed_out, opened
    yield episode
    await episode.close()


async def test_actions_on_the_page_time_out_instead_of_hanging(wedged: EpisodeBrowser) -> None:
    for action in ("scroll [down]", "press [Enter]", "go_back"):
        started = time.monotonic()
        result = await asyncio.wait_for(wedged.execute(parse_action(action)), LIMIT_S)
        assert (result.status, result.timed_out) == ("executed", True), (action, result)
        assert "timed out" in (result.error or "") and time.monotonic() - started < 20, (action, result)


async def test_the_page_is_observed_as_unreadable_and_the_agent_can_leave_it(wedged: EpisodeBrowser) -> None:
    seen = await asyncio.wait_for(wedged.observe(), LIMIT_S)
    assert seen.url.startswith("data:") and "could not be read" in seen.ax_text, seen.ax_text
    final = await asyncio.wait_for(wedged.final_state(), LIMIT_S)
    assert final.errors, "what could not be captured is named"
    left = await asyncio.wait_for(wedged.execute(parse_action("goto [data:text/html,<h1>Elsewhere</h1>]")), LIMIT_S)
    assert left.status == "executed" and not left.error, left
    assert 'heading "Elsewhere"' in (await asyncio.wait_for(wedged.observe(), LIMIT_S)).ax_text

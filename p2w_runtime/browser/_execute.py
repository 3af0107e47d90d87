"""Executing the grammar's browser actions on the active tab, with every wait bounded."""

from __future__ import annotations

import asyncio

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Locator, Page
from playwright.async_api import TimeoutError as PlaywrightTimeout

from p2w_rt.schemas import ParsedAction
from p2w_runtime.actions import AGENT_ACTIONS
from p2w_runtime.browser._blocking import FINAL_CONFIRMATION_ERROR, FINAL_CONFIRMATION_SELECTOR, refused_confirmations
from p2w_runtime.browser._errors import first_line
from p2w_runtime.browser._handle import EpisodeHandle, Timeouts
from p2w_runtime.browser._types import ExecResult

EXECUTED = ExecResult("executed")
_SCROLL_JS = """(direction) => {
  const before = window.scrollY;
  window.scrollBy({top: direction * window.innerHeight * 0.8, behavior: 'instant'});
  return window.scrollY !== before;
}"""

_CLICK_FACTS_JS = """el => {
  const target = (el.closest('a[href], area[href]') || {}).target || '';
  return {
    confirmation: !!el.closest('SELECTOR'),
    opensTab: target !== '' && !['_self', '_parent', '_top'].includes(target.toLowerCase()),
  };
}""".replace("SELECTOR", FINAL_CONFIRMATION_SELECTOR)
"""Before a click: is it a final confirmation (refused), and will it open a tab (then awaited like a navigation)?"""


async def execute_action(episode: EpisodeHandle, action: ParsedAction) -> ExecResult:
    if action.name in AGENT_ACTIONS:
        raise ValueError(f"{action.name} is not a browser action; the agent loop handles it")
    handler = _HANDLERS.get(action.name)
    if handler is None:
        return ExecResult("invalid", f"unknown action {action.name!r}")
    page = await episode.current_page()
    try:
        result = await asyncio.wait_for(handler(episode, page, action.args), action_deadline_s(episode.settings))
    except PlaywrightTimeout as exc:
        await episode.stop_loading(page)
        return ExecResult("executed", f"{action.render()} timed out: {first_line(exc)}", timed_out=True)
    except TimeoutError:
        await episode.stop_loading(page)
        why = f"the page did not answer within {action_deadline_s(episode.settings):g}s"
        return ExecResult("executed", f"{action.render()} timed out: {why}", timed_out=True)
    except PlaywrightError as exc:
        return ExecResult("invalid", f"{action.render()} failed: {first_line(exc)}")
    if result.status != "executed":
        return result
    if await refused_confirmations(page, episode.settings.action_timeout_s):
        return ExecResult("blocked", FINAL_CONFIRMATION_ERROR)
    settle_error = await episode.settle(await episode.current_page())
    if settle_error and not result.error:
        return ExecResult("executed", settle_error, timed_out=True)
    return result


def action_deadline_s(timeouts: Timeouts) -> float:
    """The most one action may take: the longest chain of bounded waits a handler makes (``type`` on a field: look,
    fill, then a navigating Enter). It also bounds the waits Playwright gives no timeout (``evaluate``,
    ``Locator.count``), which a page whose main thread never yields (a script looping on ``alert()``) left hanging."""
    return timeouts.navigation_timeout_s + 2 * timeouts.action_timeout_s


async def _resolve(episode: EpisodeHandle, page: Page, element_id: str) -> Locator | ExecResult:
    """The live element behind an id the agent saw, or an ``invalid`` result saying why there is none."""
    found = episode.ids.lookup(int(element_id))
    if found is None:
        return ExecResult("invalid", f"element [{element_id}] does not exist; use an id from the latest observation")
    owner, ref = found
    if owner is not page:
        return ExecResult("invalid", f"element [{element_id}] is not in the current tab")
    locator = page.locator(f"aria-ref={ref}")
    try:
        count = await locator.count()
    except PlaywrightError:
        count = 0
    if count == 0:
        return ExecResult(
            "invalid", f"element [{element_id}] is no longer on the page; use an id from the latest observation"
        )
    return locator


async def _click(episode: EpisodeHandle, page: Page, args: list[str]) -> ExecResult:
    target = await _resolve(episode, page, args[0])
    if isinstance(target, ExecResult):
        return target
    timeout_ms = episode.settings.action_timeout_s * 1000
    facts = await target.evaluate(_CLICK_FACTS_JS, timeout=timeout_ms)
    if facts["confirmation"]:
        return ExecResult("blocked", FINAL_CONFIRMATION_ERROR)
    if not await target.is_visible():
        return ExecResult("invalid", f"element [{args[0]}] is not visible; scroll to it or choose another element")
    navigation_ms = episode.settings.navigation_timeout_s * 1000
    if facts["opensTab"]:
        async with episode.context.expect_page(timeout=navigation_ms):
            await target.click(timeout=navigation_ms)
    else:
        await target.click(timeout=navigation_ms)
    return EXECUTED


async def _type(episode: EpisodeHandle, page: Page, args: list[str]) -> ExecResult:
    element_id, text, press_enter = args
    target = await _resolve(episode, page, element_id)
    if isinstance(target, ExecResult):
        return target
    timeout_ms = episode.settings.action_timeout_s * 1000
    tag = await target.evaluate("el => el.tagName", timeout=timeout_ms)
    if tag == "SELECT":
        return await _select(target, element_id, text, timeout_ms)
    try:
        await target.fill(text, timeout=timeout_ms)
    except PlaywrightTimeout as exc:
        return ExecResult("invalid", f"element [{element_id}] cannot be typed into: {first_line(exc)}")
    if press_enter == "1":
        await target.press("Enter", timeout=episode.settings.navigation_timeout_s * 1000)
    return EXECUTED


async def _select(target: Locator, element_id: str, text: str, timeout_ms: float) -> ExecResult:
    """``type`` on a drop-down picks the option by its label (or value), as a person would."""
    options: list[dict[str, str]] = await target.evaluate(
        "el => Array.from(el.options).map(o => ({label: o.label.trim(), value: o.value}))", timeout=timeout_ms
    )
    wanted = text.strip().lower()
    for option in options:
        if wanted in (option["label"].lower(), option["value"].lower()):
            await target.select_option(value=option["value"], timeout=timeout_ms)
            return EXECUTED
    labels = ", ".join(option["label"] for option in options)
    return ExecResult("invalid", f"element [{element_id}] has no option {text!r}; options: {labels}")


async def _hover(episode: EpisodeHandle, page: Page, args: list[str]) -> ExecResult:
    target = await _resolve(episode, page, args[0])
    if isinstance(target, ExecResult):
        return target
    try:
        await target.hover(timeout=episode.settings.action_timeout_s * 1000)
    except PlaywrightTimeout as exc:
        return ExecResult("invalid", f"element [{args[0]}] cannot be hovered: {first_line(exc)}")
    return EXECUTED


async def _press(episode: EpisodeHandle, page: Page, args: list[str]) -> ExecResult:
    """Keys go to the focused element when there is one, so a navigating Enter is awaited like a click."""
    focused = page.locator("*:focus")
    if await focused.count() == 1:
        await focused.press(args[0], timeout=episode.settings.navigation_timeout_s * 1000)
    else:
        await page.keyboard.press(args[0])
    return EXECUTED


async def _scroll(episode: EpisodeHandle, page: Page, args: list[str]) -> ExecResult:
    moved = await page.evaluate(_SCROLL_JS, -1 if args[0] == "up" else 1)
    if not moved:
        return ExecResult("executed", f"the page did not move: already at the {'top' if args[0] == 'up' else 'bottom'}")
    return EXECUTED


async def _goto(episode: EpisodeHandle, page: Page, args: list[str]) -> ExecResult:
    url = args[0]
    if url.lower().startswith("javascript:"):
        return ExecResult("invalid", "goto does not run javascript: URLs")
    if "://" not in url and not url.startswith(("about:", "data:")):
        url = "http://" + url
    try:
        await page.goto(url, timeout=episode.settings.navigation_timeout_s * 1000, wait_until="domcontentloaded")
    except PlaywrightTimeout:
        raise
    except PlaywrightError as exc:
        return ExecResult("executed", f"goto [{url}] failed: {first_line(exc)}")
    return EXECUTED


async def _go_back(episode: EpisodeHandle, page: Page, args: list[str]) -> ExecResult:
    index, _ = await episode.navigation_history(page)
    if index == 0:
        return ExecResult("invalid", "there is no previous page in this tab")
    await page.go_back(timeout=episode.settings.navigation_timeout_s * 1000, wait_until="domcontentloaded")
    return EXECUTED


async def _go_forward(episode: EpisodeHandle, page: Page, args: list[str]) -> ExecResult:
    index, entries = await episode.navigation_history(page)
    if index >= entries - 1:
        return ExecResult("invalid", "there is no next page in this tab")
    await page.go_forward(timeout=episode.settings.navigation_timeout_s * 1000, wait_until="domcontentloaded")
    return EXECUTED


async def _new_tab(episode: EpisodeHandle, page: Page, args: list[str]) -> ExecResult:
    episode.activate(await episode.context.new_page())
    return EXECUTED


async def _tab_focus(episode: EpisodeHandle, page: Page, args: list[str]) -> ExecResult:
    pages = episode.pages
    index = int(args[0])
    if index >= len(pages):
        return ExecResult("invalid", f"there is no tab {index}; open tabs are 0..{len(pages) - 1}")
    episode.activate(pages[index])
    await pages[index].bring_to_front()
    return EXECUTED


async def _close_tab(episode: EpisodeHandle, page: Page, args: list[str]) -> ExecResult:
    await page.close()
    remaining = episode.pages
    episode.activate(remaining[-1] if remaining else await episode.context.new_page())
    return EXECUTED


_HANDLERS = {
    "click": _click,
    "type": _type,
    "hover": _hover,
    "press": _press,
    "scroll": _scroll,
    "goto": _goto,
    "go_back": _go_back,
    "go_forward": _go_forward,
    "new_tab": _new_tab,
    "tab_focus": _tab_focus,
    "close_tab": _close_tab,
}

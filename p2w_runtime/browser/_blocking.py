"""Pages the agent must not go on with (HTTP errors, CAPTCHAs), and the buttons it must never press."""

from __future__ import annotations

import asyncio

from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Page

CAPTCHA_TEXT_MARKERS: tuple[str, ...] = (
    "captcha",
    "are you a robot",
    "i'm not a robot",
    "verify you are human",
    "verify you are a human",
    "unusual traffic from your computer",
    "checking your browser before accessing",
    "press & hold to confirm you are",
)
CAPTCHA_TITLES: tuple[str, ...] = ("just a moment...", "attention required! | cloudflare")
CAPTCHA_FRAME_MARKERS: tuple[str, ...] = ("recaptcha", "hcaptcha", "challenges.cloudflare.com", "captcha")

FINAL_CONFIRMATION_SELECTOR = '[data-final-confirmation="true"]'
FINAL_CONFIRMATION_ERROR = (
    "refused: this element is marked as a final confirmation (payment, order, booking); "
    "the agent never submits payments or final confirmations"
)

_PAGE_FACTS_JS = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  return {
    status: nav && nav.responseStatus ? nav.responseStatus : 0,
    title: document.title || '',
    text: document.body ? document.body.innerText.slice(0, 20000) : '',
    frames: Array.from(document.querySelectorAll('iframe[src]')).slice(0, 50).map(f => f.src),
  };
}"""

CONFIRMATION_GUARD_JS = """(() => {
  const marked = (el) => !!(el && el.closest && el.closest('SELECTOR'));
  const refuse = (event) => {
    event.preventDefault();
    event.stopImmediatePropagation();
    window.__p2wRefusedConfirmations = (window.__p2wRefusedConfirmations || 0) + 1;
  };
  window.addEventListener('click', (e) => { if (marked(e.target)) refuse(e); }, true);
  window.addEventListener('submit', (e) => { if (marked(e.submitter) || marked(e.target)) refuse(e); }, true);
})();""".replace("SELECTOR", FINAL_CONFIRMATION_SELECTOR)
"""Init script for every document: cancels any click or form submission that would press a marked element, however
it was triggered (Enter in a field submits through the form's default button). Defence in depth behind the
explicit check that ``click`` does before touching an element."""

_REFUSED_JS = """() => {
  const n = window.__p2wRefusedConfirmations || 0;
  window.__p2wRefusedConfirmations = 0;
  return n;
}"""


async def detect_block(page: Page, timeout_s: float = 5.0) -> str | None:
    """Why this page blocks the agent, or None: HTTP status >= 400 of the main document, or CAPTCHA markers."""
    try:
        facts = await asyncio.wait_for(page.evaluate(_PAGE_FACTS_JS), timeout_s)
    except (PlaywrightError, TimeoutError):
        return None
    status = int(facts.get("status") or 0)
    if status >= 400:
        return f"HTTP {status} on the main document ({page.url})"
    title = str(facts.get("title", "")).strip().lower()
    if title in CAPTCHA_TITLES:
        return f"CAPTCHA challenge page (title {facts['title']!r})"
    for marker in CAPTCHA_TEXT_MARKERS:
        if marker in title:
            return f"CAPTCHA marker {marker!r} in the page title"
        if marker in str(facts.get("text", "")).lower():
            return f"CAPTCHA marker {marker!r} in the page text"
    for src in facts.get("frames", []):
        for marker in CAPTCHA_FRAME_MARKERS:
            if marker in str(src).lower():
                return f"CAPTCHA frame {src!r}"
    return None


async def refused_confirmations(page: Page, timeout_s: float) -> int:
    """How many presses the guard cancelled since the last call (0 if the page cannot be asked)."""
    try:
        return int(await asyncio.wait_for(page.evaluate(_REFUSED_JS), timeout_s))
    except (PlaywrightError, TimeoutError):
        return 0

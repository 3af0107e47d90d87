"""The final page's external stylesheets, recorded so offline checks see the page styled as the agent did.

WebArena's ``program_html`` locators read ``outerText``, which leaves out what CSS hides
(``display: none``). The recorded DOM keeps ``<link rel=stylesheet>`` but not the CSS behind
it, so offline the hidden text would come back. The CSS is taken from the page's CSSOM (rules
added by scripts included, ``@import`` followed); a cross-origin sheet the CSSOM will not read
is fetched again through the context's request client (its cookies, no CORS).
"""

from __future__ import annotations

import json
from typing import Any

import structlog

log = structlog.get_logger(__name__)

_COLLECT = """() => {
  const found = {};
  const walk = (sheet) => {
    if (!sheet || !sheet.href || sheet.href in found) return;
    try {
      const rules = [...sheet.cssRules];
      found[sheet.href] = rules.map((r) => r.cssText).join("\\n");
      for (const rule of rules) if (rule.styleSheet) walk(rule.styleSheet);
    } catch (e) {
      found[sheet.href] = null;
    }
  };
  for (const sheet of document.styleSheets) walk(sheet);
  return found;
}"""


async def collect_stylesheets(page: Any, timeout_s: float) -> bytes:
    """JSON ``{href: css}`` of every external stylesheet of ``page`` ("" when a sheet could not be read)."""
    found: dict[str, str | None] = await page.evaluate(_COLLECT)
    sheets: dict[str, str] = {}
    for href, css in found.items():
        if css is None:
            css = await _fetch(page, href, timeout_s)
        sheets[href] = css
    return json.dumps(sheets, ensure_ascii=False, sort_keys=True).encode() if sheets else b""


async def _fetch(page: Any, href: str, timeout_s: float) -> str:
    try:
        response = await page.context.request.get(href, timeout=timeout_s * 1000)
        return await response.text() if response.ok else ""
    except Exception as exc:  # a sheet that cannot be fetched any more is recorded empty, not fatal
        log.debug("browser.stylesheet_unreadable", href=href[:200], error=str(exc).splitlines()[0] if str(exc) else "")
        return ""

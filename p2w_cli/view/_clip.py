"""Recorded text on a page, bounded per value: a long value is shown clipped, the whole of it one click away.

An answer, a rationale or a model's response has no size limit; printed whole (and more than once: an answer heads
the episode page and ends it, and sat in a cell's ``title`` on the run page), one 15 MB answer made a 15 MB run page
and a 30 MB episode page. Every printed value is cut at ``LONGEST`` characters (``capped``, the pages' finalize),
saying how much was left out; where a template shows a value with ``clip``, the cut ends in a link to the whole text
(``/run/RUN/text/EPISODE?page=N&sha=SHA``, or ``texts/SHA.txt`` in a static export). Measured: docs/design/view.md.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from jinja2 import pass_context
from jinja2.runtime import Context
from markupsafe import Markup

from p2w_cli.view._json import as_json

LONGEST = 20_000
"""Characters of one recorded value a page shows: a long prompt (a 60,000-character accessibility tree) is cut
too; the rest is behind the link."""


def capped(value: str) -> str:
    """``value`` cut to ``LONGEST`` characters, saying how many more it has (no markup: it may be an attribute)."""
    if len(value) <= LONGEST:
        return value
    return f"{value[:LONGEST]} … [{len(value) - LONGEST:,} more characters not shown]"


def text_sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pass_context
def clip(ctx: Context, text: str | None) -> str | Markup:
    """A recorded value of the episode page ``p``: whole when short, else its first ``LONGEST`` characters and a
    link to the whole text."""
    if text is None or len(text) <= LONGEST:
        return text or ""
    p = ctx["p"]
    href = ctx["links"].text(p.run_id, p.episode_id, p.page, text)
    more = f"… {len(text) - LONGEST:,} more characters: the whole text"
    return Markup('{}<a class="whole" href="{}">{}</a>').format(text[:LONGEST], href, more)  # finalize spells controls


def whole_text(page: object, sha: str) -> str | None:
    """The recorded value of ``page`` (an episode page's model, as its JSON carries it) whose sha256 is ``sha``."""
    stack: list[Any] = [orjson.loads(as_json(page))]
    while stack:
        value = stack.pop()
        if isinstance(value, str) and len(value) > LONGEST and text_sha(value) == sha:
            return value
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return None

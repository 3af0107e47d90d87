"""Jinja2 with autoescaping on for every template, and the few filters the pages share.

Everything recorded (agent text, page titles, URLs, LLM messages) is untrusted: it is only ever
printed through autoescaping, and a recorded URL becomes a link only when it is http(s). Every printed
value also has its invisible control characters spelled out (``shown``), as the terminal's ``safe`` does: a
bidi override in a page title would otherwise reverse the URL and answer printed after it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from p2w_cli.render.metrics import outdated_hint
from p2w_cli.render.words import counted
from p2w_cli.view._clip import capped, clip
from p2w_cli.view._filters import END_REASONS
from p2w_cli.view._order import SORT_KEYS
from p2w_rt.replay.metrics import TITLES, judge_label, signed
from p2w_rt.replay.metrics import figure as metric

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"


_BIDI = (0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x2028, 0x2029)
_SPELLED: dict[int, str] = {
    **{c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0)) if c not in (0x09, 0x0A, 0x0D)},
    **{c: f"\\u{c:04x}" for c in _BIDI},
}
"""C0 and C1 controls but tab and line ends (the pages keep a message's lines), DEL, bidi controls and line
separators -> a visible escape (``\\u202e``), as ``p2w_runtime.terminal.safe`` spells them."""
_HIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def shown(value: object) -> object:
    """Jinja's ``finalize``: a printed string with its invisible control characters spelled out (markup stays
    markup), so recorded text shows what it holds and cannot reorder the text around it, and cut at ``LONGEST``
    characters unless it is markup (``_clip.py``); other values as they are."""
    if isinstance(value, str) and not isinstance(value, Markup):
        value = capped(value)
    if not isinstance(value, str) or _HIDDEN.search(value) is None:
        return value
    spelled = _HIDDEN.sub(lambda found: _SPELLED[ord(found[0])], value)
    return Markup(spelled) if isinstance(value, Markup) else spelled


def safe_href(url: str | None) -> str | None:
    """The URL if it is http(s) (so ``javascript:`` and ``data:`` never become links) and holds no control
    character (it would be printed spelled out, another URL), else None: then it is printed as text."""
    if not url or _HIDDEN.search(url) is not None:
        return None
    try:
        return url if urlsplit(url).scheme in ("http", "https") else None
    except ValueError:
        return None


def figure(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def money(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}"


def count(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"


def duration(seconds: float | None) -> str:
    """``8.4 s``, ``3 m 05 s``, ``2 h 04 m``: a time as a reader compares it."""
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} m {secs:02d} s"
    return f"{minutes // 60} h {minutes % 60:02d} m"


def shorten(text: str | None, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word's end, with an ellipsis when anything was cut: never
    "Fremont, Se". Only the first ``limit * 4`` characters are looked at: a cut of a 15 MB answer reads 360."""
    text = " ".join((text or "")[: limit * 4].split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-–—") + "…"


def pretty(value: Any) -> str:
    """JSON for the page, indented; the template escapes it."""
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=["jinja2.ext.do"],
        finalize=shown,
    )
    env.filters.update(
        metric=metric,
        signed=signed,
        figure=figure,
        money=money,
        count=count,
        duration=duration,
        pretty=pretty,
        shorten=shorten,
        noun=lambda n, word, plural="": counted(n, word, plural),
        safe_href=safe_href,
        outdated_hint=outdated_hint,
    )
    env.globals.update(clip=clip, titles=TITLES, end_reasons=END_REASONS, sort_keys=SORT_KEYS, judge_label=judge_label)
    return env

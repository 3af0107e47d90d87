"""Jinja2 with autoescaping on for every template, and the few filters the pages share.

Everything recorded (agent text, page titles, URLs, LLM messages) is untrusted: it is only ever
printed through autoescaping, and a recorded URL becomes a link only when it is http(s).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from p2w_cli.render.metrics import outdated_hint
from p2w_cli.render.words import counted
from p2w_cli.view._filters import END_REASONS
from p2w_cli.view._order import SORT_KEYS
from p2w_rt.replay.metrics import TITLES, judge_label, signed
from p2w_rt.replay.metrics import figure as metric

TEMPLATES = Path(__file__).parent / "templates"
STATIC = Path(__file__).parent / "static"


def safe_href(url: str | None) -> str | None:
    """The URL if it is http(s) (so ``javascript:`` and ``data:`` never become links), else None."""
    if not url:
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
    """``text`` cut to at most ``limit`` characters at a word's end, with an ellipsis when anything was cut (the
    pages show the whole text in the cell's ``title``): never "Fremont, Se"."""
    text = " ".join((text or "").split())
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
    env.globals.update(titles=TITLES, end_reasons=END_REASONS, sort_keys=SORT_KEYS, judge_label=judge_label)
    return env

"""WebArena's evaluators, run offline on recorded final states: the ``webarena`` judge, a plugin of the ``judge``
family (its settings: ``WebArenaSettings``, from ``--webarena-config`` and ``--site-url``). Its names load on first
use: registering the plugin loads none of the judge's code."""

from __future__ import annotations

from typing import TYPE_CHECKING

from p2w_runtime.lazy import lazy_names

if TYPE_CHECKING:
    from p2w_rt.replay.webarena._checks import clean_answer, exact_match, must_include, url_match
    from p2w_rt.replay.webarena._config import WebArenaConfigError, load_tasks, parse_task, substitute_sites
    from p2w_rt.replay.webarena._helpers import resolve_dot_segments
    from p2w_rt.replay.webarena._judge import WebArenaJudge
    from p2w_rt.replay.webarena._page import ChromiumNotFound, PageRenderer
    from p2w_rt.replay.webarena._plugin import WEBARENA
    from p2w_rt.replay.webarena._settings import WebArenaSettings
    from p2w_rt.replay.webarena._tokenize import word_tokenize

__all__ = [
    "WEBARENA",
    "ChromiumNotFound",
    "PageRenderer",
    "WebArenaConfigError",
    "WebArenaJudge",
    "WebArenaSettings",
    "clean_answer",
    "exact_match",
    "load_tasks",
    "must_include",
    "parse_task",
    "resolve_dot_segments",
    "substitute_sites",
    "url_match",
    "word_tokenize",
]

_MODULES = {
    "clean_answer": "_checks",
    "exact_match": "_checks",
    "must_include": "_checks",
    "url_match": "_checks",
    "WebArenaConfigError": "_config",
    "load_tasks": "_config",
    "parse_task": "_config",
    "substitute_sites": "_config",
    "resolve_dot_segments": "_helpers",
    "WebArenaJudge": "_judge",
    "ChromiumNotFound": "_page",
    "PageRenderer": "_page",
    "WEBARENA": "_plugin",
    "WebArenaSettings": "_settings",
    "word_tokenize": "_tokenize",
}
"""Where each exported name lives."""

__getattr__ = lazy_names(__name__, _MODULES, globals())

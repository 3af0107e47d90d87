"""WebArena's evaluators, run offline on recorded final states."""

from replay.webarena._checks import clean_answer, exact_match, must_include, url_match
from replay.webarena._config import (
    SITE_PLACEHOLDERS,
    EvalSpec,
    HtmlCheck,
    WebArenaConfigError,
    WebArenaTask,
    load_tasks,
    parse_task,
    substitute_sites,
)
from replay.webarena._helpers import resolve_dot_segments
from replay.webarena._page import ChromiumNotFound, PageRenderer, RecordedPage
from replay.webarena._tokenize import word_tokenize

__all__ = [
    "SITE_PLACEHOLDERS",
    "ChromiumNotFound",
    "EvalSpec",
    "HtmlCheck",
    "PageRenderer",
    "RecordedPage",
    "WebArenaConfigError",
    "WebArenaTask",
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

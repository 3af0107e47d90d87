"""WebArena's evaluators, run offline on recorded final states."""

from replay.webarena._checks import clean_answer, exact_match, must_include, url_match
from replay.webarena._config import (
    SITE_PLACEHOLDERS,
    EvalSpec,
    HtmlCheck,
    WebArenaConfigError,
    WebArenaTask,
    load_tasks,
)
from replay.webarena._page import ChromiumNotFound, PageRenderer, RecordedPage

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
    "url_match",
]

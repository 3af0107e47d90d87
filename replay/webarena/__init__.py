"""WebArena's evaluators, run offline on recorded final states: the ``webarena`` judge, a plugin of the ``judge``
family (its settings: ``WebArenaSettings``, from ``--webarena-config`` and ``--site-url``)."""

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

"""The episode domain: stream names, the event grammar, the one writer, the started events, the listing, and the
seal a finished episode gets in its run's stream.

Everything that writes an episode (the agent, both importers, the synthetic and test builders) goes through
``EpisodeWriter``; everything that lists a run's episodes goes through ``episodes_of``
(docs/design/episode-grammar.md).
"""

from p2w_runtime.episode._errors import EpisodeGrammarError
from p2w_runtime.episode._grammar import EPISODE_TYPES, EpisodeGrammar
from p2w_runtime.episode._listing import NOT_AN_OUTCOME, EpisodeRef, counted, episodes_of
from p2w_runtime.episode._seal import Appender, append_sealed, episode_seals
from p2w_runtime.episode._started import Provenance, TaskLike, episode_started, run_started
from p2w_runtime.episode._streams import (
    ATTEMPT_MARK,
    CLASSIFICATIONS_SUFFIX,
    DERIVED_SUFFIXES,
    JUDGMENTS_SUFFIX,
    RETRIEVAL_CF_SUFFIX,
    attempt_id,
    episode_of,
    episode_stream,
    is_derived,
    run_of,
    under,
)
from p2w_runtime.episode._writer import EpisodeWriter

__all__ = [
    "ATTEMPT_MARK",
    "CLASSIFICATIONS_SUFFIX",
    "DERIVED_SUFFIXES",
    "EPISODE_TYPES",
    "JUDGMENTS_SUFFIX",
    "NOT_AN_OUTCOME",
    "RETRIEVAL_CF_SUFFIX",
    "Appender",
    "EpisodeGrammar",
    "EpisodeGrammarError",
    "EpisodeRef",
    "EpisodeWriter",
    "Provenance",
    "TaskLike",
    "append_sealed",
    "attempt_id",
    "counted",
    "episode_of",
    "episode_seals",
    "episode_started",
    "episode_stream",
    "episodes_of",
    "is_derived",
    "run_of",
    "run_started",
    "under",
]

"""Stream naming: the one place that knows how a run's streams are named.

A run is stream ``RUN``; each episode is ``RUN/EPISODE`` where the episode id is the task id, or
``TASK#n`` for the n-th attempt at a task (``record --resume``); results derived from a run's episodes
live in ``RUN/judgments``, ``RUN/classifications`` and ``RUN/retrieval-cf``, never in an episode's own
stream (deriving a result must not change the episode's last hash, which is what results are cached by).
"""

from __future__ import annotations

from p2w_runtime.store import TREE_SEPARATOR as SEPARATOR
from p2w_runtime.store import tree_prefix, tree_root

ATTEMPT_MARK = "#"
JUDGMENTS_SUFFIX = "/judgments"
CLASSIFICATIONS_SUFFIX = "/classifications"
RETRIEVAL_CF_SUFFIX = "/retrieval-cf"


def under(run_id: str) -> str:
    """The prefix every stream under a run starts with (its episodes and derived streams)."""
    return tree_prefix(run_id)


def episode_stream(run_id: str, episode_id: str) -> str:
    return f"{under(run_id)}{episode_id}"


def attempt_id(task_id: str, attempt: int) -> str:
    """The episode id of the ``attempt``-th try at a task: the task id, then ``TASK#2``, ``TASK#3``..."""
    return task_id if attempt <= 1 else f"{task_id}{ATTEMPT_MARK}{attempt}"


def run_of(stream: str) -> str:
    """The run a stream belongs to (a run's own stream belongs to itself): the root of its stream tree."""
    return tree_root(stream)


def episode_of(stream: str) -> str:
    """The episode id of an episode stream (``""`` for a run's own stream)."""
    return stream.partition(SEPARATOR)[2]

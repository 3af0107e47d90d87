"""Stream naming: the one place that knows how a run's streams are named.

A run is stream ``RUN``; each episode is ``RUN/EPISODE`` where the episode id is the task id, or
``TASK#n`` for the n-th attempt at a task (``record --resume``); results derived from a run's episodes
live in ``RUN/judgments``, ``RUN/classifications`` and ``RUN/retrieval-cf``, never in an episode's own
stream (deriving a result must not change the episode's last hash, which is what results are cached by).

So an episode id must never be one of those names: ``check_task_id`` is the one rule of what a task id may be, applied
wherever a run's episodes are chosen or started (docs/design/episode-grammar.md, "Task ids").
"""

from __future__ import annotations

from collections.abc import Iterable

from p2w_runtime.domain._errors import BadTaskId
from p2w_runtime.store import TREE_SEPARATOR as SEPARATOR
from p2w_runtime.store import tree_prefix, tree_root

ATTEMPT_MARK = "#"
JUDGMENTS_SUFFIX = "/judgments"
CLASSIFICATIONS_SUFFIX = "/classifications"
RETRIEVAL_CF_SUFFIX = "/retrieval-cf"
DERIVED_NAMES = frozenset(
    suffix.removeprefix(SEPARATOR) for suffix in (JUDGMENTS_SUFFIX, CLASSIFICATIONS_SUFFIX, RETRIEVAL_CF_SUFFIX)
)
"""The names of a run's derived streams (``RUN/NAME``). No episode may take one, and no derived family may declare
another (``replay.derived.DerivedStream``): an episode recorded before a new name was reserved could hold it."""
DOT_SEGMENTS = frozenset({".", ".."})
"""Ids a browser takes for a relative path: the viewer's ``/run/RUN/episode/..`` would open the page above it."""


def under(run_id: str) -> str:
    """The prefix every stream under a run starts with (its episodes and derived streams)."""
    return tree_prefix(run_id)


def episode_stream(run_id: str, episode_id: str) -> str:
    return f"{under(run_id)}{episode_id}"


def task_id_problem(task_id: str) -> str | None:
    """Why ``task_id`` cannot name episodes (``RUN/TASK``, ``RUN/TASK#n``); None when it can."""
    if not task_id:
        return "it is empty"
    if task_id in DOT_SEGMENTS:
        return "a link to its episode would be read as a relative path and never reach it"
    if ATTEMPT_MARK in task_id:
        return f"{ATTEMPT_MARK!r} marks an attempt (TASK{ATTEMPT_MARK}2 is the second attempt at TASK)"
    if task_id in DERIVED_NAMES:
        return f"the run's derived results live in RUN{SEPARATOR}{task_id}"
    return None


def check_task_id(task_id: str, where: str) -> None:
    """``BadTaskId`` naming ``where`` (the run, or the file the id came from) when ``task_id`` cannot name episodes."""
    if (reason := task_id_problem(task_id)) is not None:
        raise BadTaskId(where, task_id, reason)


def check_task_ids(task_ids: Iterable[str], where: str) -> None:
    """``check_task_id`` for each id, the first bad one refused: before a run that would record them starts."""
    for task_id in task_ids:
        check_task_id(task_id, where)


def attempt_id(task_id: str, attempt: int) -> str:
    """The episode id of the ``attempt``-th try at a task: the task id, then ``TASK#2``, ``TASK#3``..."""
    return task_id if attempt <= 1 else f"{task_id}{ATTEMPT_MARK}{attempt}"


def run_of(stream: str) -> str:
    """The run a stream belongs to (a run's own stream belongs to itself): the root of its stream tree."""
    return tree_root(stream)


def episode_of(stream: str) -> str:
    """The episode id of an episode stream (``""`` for a run's own stream)."""
    return stream.partition(SEPARATOR)[2]

"""Which episodes `rerun` re-executes, and what it says of one the re-execution cut short.

A task named twice is re-executed once (the second pass wrote into the first's scratch stream and failed with a
grammar error that told the user to verify an intact store); a run with no finished episode is refused, not
reported identical with exit 0; an episode whose re-execution stopped before its first decision names the
recorded decision it lacks, not ``None``.
"""

from __future__ import annotations

import asyncio

import pytest

from p2w_runtime.agent import AGENT_NAME
from p2w_runtime.domain import EpisodeRef, RunInfo, episodes_of, find_run
from p2w_runtime.domain.trajectory import EpisodeRecord
from p2w_runtime.errors import UserError
from p2w_runtime.rerun import load_episode, select_episodes
from p2w_runtime.rerun._compare import decisions, first_mismatch
from p2w_runtime.store import MemoryEventStore
from tests.helpers.classify_builders import add_run, good_episode

TASKS = ("Alex_Garcia_A1", "Alex_Garcia_B1")
Runs = tuple[RunInfo, list[EpisodeRef], RunInfo, list[EpisodeRef]]
"""The run ``two`` and its counted episodes, the run ``none`` and its (none)."""


async def _runs() -> Runs:
    async with MemoryEventStore() as store:
        await add_run(store, "two", [good_episode("two", t) for t in TASKS], run_id="two", agent=AGENT_NAME)
        await add_run(store, "none", [], run_id="none", agent=AGENT_NAME)
        two, none = await find_run(store, "two"), await find_run(store, "none")
        return two, await episodes_of(store, two.run_id), none, await episodes_of(store, none.run_id)


@pytest.fixture(scope="module")
def runs() -> Runs:
    return asyncio.run(_runs())


def test_a_task_named_twice_is_re_executed_once(runs: Runs) -> None:
    two, refs, _, _ = runs
    chosen = select_episodes(two, refs, (TASKS[1], TASKS[0], TASKS[1]))
    assert [ref.task_id for ref in chosen] == [TASKS[1], TASKS[0]]


def test_a_run_with_no_finished_episode_is_refused(runs: Runs) -> None:
    _, _, none, refs = runs
    with pytest.raises(UserError, match="run 'none' has no finished episode to re-execute"):
        select_episodes(none, refs, ())


async def _recorded_and_cut_short() -> tuple[list[EpisodeRecord], list[EpisodeRecord]]:
    async with MemoryEventStore() as store:
        await add_run(store, "two", [good_episode("two", TASKS[0])], run_id="two", agent=AGENT_NAME)
        (ref,) = await episodes_of(store, "two")
        episode = await load_episode(store, ref.stream)
        return episode.events, []  # the re-execution stopped before its first decision


def test_an_episode_cut_short_names_the_recorded_decision_it_lacks() -> None:
    recorded, cut = asyncio.run(_recorded_and_cut_short())
    mismatch = first_mismatch(recorded, cut, None)
    assert mismatch is not None and mismatch.kind == "ends earlier"
    assert (mismatch.recorded, mismatch.reexecuted) == (decisions(recorded)[0].shown, None)
    assert mismatch.recorded is not None

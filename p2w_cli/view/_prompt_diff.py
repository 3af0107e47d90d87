"""The episode page's prompt diff (``?against=RUN``): at the first step where this episode and the other run's
episode of the same task part ways (``replay.diff.episode_divergence``, what ``diff`` and compare report), the
recorded LLM calls' prompts of both, diffed line by line.

Calls are paired by role in the order they were made at that step (the first planner call with the first planner
call); one without a partner is diffed against nothing. Only that step's events are read from each stream
(``_range``); the divergence itself needs both trajectories whole, as compare does.
"""

from __future__ import annotations

import difflib
import json
from collections import defaultdict
from dataclasses import dataclass

from p2w_cli.view._range import read_range
from p2w_rt.replay.diff import Divergence, episode_divergence
from p2w_rt.schemas import LlmCall
from p2w_runtime.domain import RunInfo, episodes_of
from p2w_runtime.domain.trajectory import Trajectory, episode_shape, first_seq_of_step, load_trajectory
from p2w_runtime.store import EventStore

CONTEXT_LINES = 3


@dataclass(frozen=True, slots=True)
class CallDiff:
    role: str
    index: int
    """1 for the step's first call of this role, 2 for the second..."""
    here: str | None
    """This episode's call (its event id), None when only the other run made it."""
    there: str | None
    lines: list[tuple[str, str]]
    """(kind, text) of a unified diff: ``+`` (only in the other run), ``-`` (only here), `` `` (both), ``@``."""
    responses: tuple[str | None, str | None] = (None, None)
    """What each call answered (here, there): the same prompt with another answer is a model's doing."""

    @property
    def same(self) -> bool:
        return not self.lines


@dataclass(frozen=True, slots=True)
class PromptDiff:
    against: RunInfo
    episode_id: str
    """The other run's episode of the same task."""
    divergence: Divergence | None
    """None when both episodes took the same actions on the same pages."""
    calls: list[CallDiff]


class NoCounterpart(LookupError):
    """The other run has no counted episode of this task."""


def prompt_text(call: LlmCall) -> list[str]:
    """A call's messages as lines: ``[role]`` then its content (text as is, anything else as indented JSON)."""
    lines: list[str] = []
    for message in call.messages:
        content = message.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False, indent=2)
        lines += [f"[{message.get('role', '?')}]", *text.splitlines()]
    return lines


async def _calls_at(store: EventStore, stream: str, step: int) -> list[tuple[str, LlmCall]]:
    shape = await episode_shape(store, stream)
    if shape is None:
        return []
    lo = await first_seq_of_step(store, stream, step, 2, shape.tail_from)
    hi = await first_seq_of_step(store, stream, step + 1, lo, shape.tail_from)
    return [
        (e.event_id, e.payload)
        for e in await read_range(store, stream, lo, hi)
        if isinstance(e.payload, LlmCall) and e.payload.step == step
    ]


def _by_role(calls: list[tuple[str, LlmCall]]) -> dict[str, list[tuple[str, LlmCall]]]:
    roles: dict[str, list[tuple[str, LlmCall]]] = defaultdict(list)
    for event_id, call in calls:
        roles[call.role].append((event_id, call))
    return roles


async def prompt_diff(
    store: EventStore, here: Trajectory, other_store: EventStore, other: RunInfo, other_name: str
) -> PromptDiff:
    """``here`` is this episode's trajectory (whole); ``other_name`` is how the page names the other run."""
    refs = [r for r in await episodes_of(other_store, other.run_id) if r.task_id == here.task_id]
    if not refs:
        raise NoCounterpart(f"run {other_name} has no counted episode of task {here.task_id!r}")
    there = await load_trajectory(other_store, refs[0].stream)
    divergence = episode_divergence(here, there)
    if divergence is None:
        return PromptDiff(other, refs[0].episode_id, None, [])
    mine = _by_role(await _calls_at(store, here.stream, divergence.step))
    theirs = _by_role(await _calls_at(other_store, there.stream, divergence.step))
    diffs = []
    for role in dict.fromkeys([*mine, *theirs]):
        a, b = mine.get(role, []), theirs.get(role, [])
        for i in range(max(len(a), len(b))):
            left, right = (a[i] if i < len(a) else None), (b[i] if i < len(b) else None)
            lines = difflib.unified_diff(
                prompt_text(left[1]) if left else [],
                prompt_text(right[1]) if right else [],
                fromfile=f"this run, step {divergence.step}",
                tofile=f"{other_name}, step {divergence.step}",
                lineterm="",
                n=CONTEXT_LINES,
            )
            shown = [("@" if n < 2 or line[:1] == "@" else line[:1] or " ", line) for n, line in enumerate(lines)]
            answers = (left[1].response if left else None, right[1].response if right else None)
            diffs.append(CallDiff(role, i + 1, left[0] if left else None, right[0] if right else None, shown, answers))
    return PromptDiff(other, refs[0].episode_id, divergence, diffs)

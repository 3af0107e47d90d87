"""Where each of an AgentOccam run's actions stands: the runner's own count, ``num_actions``, numbers them.

``AgentOccam.act`` calls ``env.step`` once per action and ``env.step`` counts it (``num_actions`` of the
status logged with the step). A memory access is an action too (``env.step("note [Memory accessed: ...]")``)
but is never logged as a step: it shows as a gap in ``num_actions``, and in the file's ``memory`` list when it
found something (an access that found nothing leaves only the gap). On-demand, the accesses of ``memory``
fill the gaps in order; when there are fewer accesses than unlogged actions, which gap slot held the access
that found nothing is not recorded: the found ones are placed in the latest slots (an agent retries a
question that found nothing, so the empty one usually comes first) and every other slot is named as an
unaccounted action. Pre-execution accesses happen before the first action and take no slot.

``env.step`` past ``max_steps`` returns at once: that step is logged (``done: true``) but not carried out.
Without the config copy the limit is known only from a last step that is ``done`` without a stop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from p2w_runtime.importers._errors import TrajectoryImportError


class LoggedStep(Protocol):
    @property
    def num_actions(self) -> int | None: ...
    @property
    def done(self) -> bool | None: ...


@dataclass(frozen=True, slots=True)
class Slot:
    """One action of the runner: a logged step (``step`` = its index) or a memory access (``access`` = index)."""

    number: int
    step: int | None = None
    access: int | None = None
    executed: bool = True


@dataclass(slots=True)
class Placement:
    slots: list[Slot] = field(default_factory=list)
    unaccounted: list[int] = field(default_factory=list)
    """Action numbers the runner counted that no logged step or memory access fills."""
    unplaced: int = 0
    """On-demand accesses no unlogged action can hold (``num_actions`` leaves too few gaps): they stand first."""
    carried_out: int = 0
    """Actions ``env.step`` carried out (the one past ``max_steps`` is not)."""


def _counts(path: Path, steps: Sequence[LoggedStep]) -> list[int] | None:
    counts = [s.num_actions for s in steps]
    if not counts or any(c is None for c in counts):
        return None
    previous = 0
    for i, count in enumerate(counts):
        assert count is not None
        if count <= previous:
            raise TrajectoryImportError(
                path, f"trajectory[{i}].num_actions", f"{count} does not follow {previous}: the runner counts up"
            )
        previous = count
    return [c for c in counts if c is not None]


def place_actions(
    path: Path,
    steps: Sequence[LoggedStep],
    accesses: int,
    *,
    on_demand: bool,
    max_steps: int | None,
    summary_actions: int | None,
    stops: Sequence[bool],
) -> Placement:
    """Every action in the runner's order; ``stops[i]``: logged step ``i`` holds a stop action.

    Without ``num_actions`` (hand-written files) the logged steps are numbered 1, 2, ... and the accesses
    stand before them, unnumbered (``Slot.number`` 0), as do pre-execution accesses and on-demand ones that
    find no gap (a file whose scheme was overridden).
    """
    counts = _counts(path, steps)
    placement = Placement()
    if counts is None:
        placement.slots = [Slot(0, access=i) for i in range(accesses)]
        placement.slots += [Slot(n, step=n - 1) for n in range(1, len(steps) + 1)]
    else:
        total = max(counts[-1], summary_actions or 0)
        free = [n for n in range(1, total + 1) if n not in set(counts)]
        placed = min(accesses, len(free)) if on_demand else 0
        before = accesses - placed
        at = dict(zip(free[len(free) - placed :], range(before, accesses), strict=True))
        placement.unaccounted = free[: len(free) - placed]
        placement.unplaced = before if on_demand else 0
        placement.slots = [Slot(0, access=i) for i in range(before)]
        by_count = {c: i for i, c in enumerate(counts)}
        for n in range(1, total + 1):
            if n in by_count:
                placement.slots.append(Slot(n, step=by_count[n]))
            elif n in at:
                placement.slots.append(Slot(n, access=at[n]))
    _mark_unexecuted(placement, steps, max_steps, stops, numbered=counts is not None)
    return placement


def _mark_unexecuted(
    placement: Placement, steps: Sequence[LoggedStep], max_steps: int | None, stops: Sequence[bool], *, numbered: bool
) -> None:
    """The step past ``max_steps`` (known from the config copy, or from a last ``done`` step without a stop)."""
    last = len(steps) - 1
    limit = max_steps if numbered else None
    slots = []
    for slot in placement.slots:
        past = limit is not None and slot.number > limit
        ended = limit is None and slot.step == last and bool(steps[last].done) and not stops[last]
        slots.append(Slot(slot.number, slot.step, slot.access, executed=not (past or ended)))
    placement.slots = slots
    total = max([s.number for s in slots] + placement.unaccounted, default=0)
    if limit is not None:
        placement.carried_out = min(total, limit)
    else:
        placement.carried_out = total - sum(1 for s in slots if not s.executed)

"""Where two trajectories of the same task part ways.

The two action sequences are aligned with ``difflib.SequenceMatcher`` over one token per action:
the rendered action and the URL it was taken on. The first block that is not equal is the first
divergence; an action inserted in one run shows up with nothing on the other side. When one episode
is a fork of the other at step K, its steps before K were re-played from the source, so the search
starts at step K: a fork's report names what changed once it went live.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from p2w_rt.replay.diff._runs import StepAction


@dataclass(frozen=True, slots=True)
class Divergence:
    step: int
    """The step of the first differing action in A, or in B when A has none there."""
    a_action: str | None
    b_action: str | None
    a_url: str | None
    b_url: str | None
    after_fork_step: int | None = None
    """K when the search started at a fork's step K (steps before it are the source's by construction)."""

    def to_json(self) -> dict[str, object]:
        return {
            "step": self.step,
            "after_fork_step": self.after_fork_step,
            "a_action": self.a_action,
            "b_action": self.b_action,
            "a_url": self.a_url,
            "b_url": self.b_url,
        }


def _key(action: StepAction) -> str:
    return f"{action.action} @ {action.url.rstrip('/')}"


def first_divergence(
    a: Sequence[StepAction], b: Sequence[StepAction], *, after_fork_step: int | None = None
) -> Divergence | None:
    """None when both runs took the same actions on the same pages (from step ``after_fork_step`` on, if given)."""
    if after_fork_step is not None:
        a = [x for x in a if x.step >= after_fork_step]
        b = [x for x in b if x.step >= after_fork_step]
    matcher = SequenceMatcher(None, [_key(x) for x in a], [_key(x) for x in b], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        left = a[i1] if i1 < i2 else None
        right = b[j1] if j1 < j2 else None
        anchor = left or right
        assert anchor is not None
        return Divergence(
            step=anchor.step,
            a_action=left.action if left else None,
            b_action=right.action if right else None,
            a_url=left.url if left else None,
            b_url=right.url if right else None,
            after_fork_step=after_fork_step,
        )
    return None


def jaccard(a: frozenset[int], b: frozenset[int]) -> float | None:
    """Overlap of retrieved history entries; None when neither run retrieved anything."""
    union = a | b
    return len(a & b) / len(union) if union else None

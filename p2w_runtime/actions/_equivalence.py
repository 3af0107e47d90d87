"""WebArena's repeated-action rule, so an agent that keeps doing the same thing is stopped the same way.

Mirrors ``is_equivalent`` and ``early_stop`` in WebArena's ``run.py``: element actions compare by element id only
(``type`` ignores the text), scroll by direction, press by keys, goto by URL, tab_focus by index, stop by answer,
argument-less actions always match. ``note`` and ``memory_access`` are not WebArena actions; they compare by text.
"""

from __future__ import annotations

from collections.abc import Sequence

from p2w_rt.schemas import ParsedAction


def equivalent(a: ParsedAction, b: ParsedAction) -> bool:
    """True if WebArena would count ``a`` and ``b`` as the same action."""
    if a.name != b.name:
        return False
    if a.name in ("click", "hover", "type"):
        return a.args[:1] == b.args[:1]
    return a.args == b.args


def repeated_action(actions: Sequence[ParsedAction], k: int = 3) -> bool:
    """WebArena's early stop: the last action repeated ``k`` times in a row, or a ``type`` into the same element
    ``k`` times anywhere in the episode."""
    if not actions or k < 1:
        return False
    last = actions[-1]
    if last.name == "type":
        return sum(equivalent(action, last) for action in actions) >= k
    tail = actions[-k:]
    return len(tail) >= k and all(equivalent(action, last) for action in tail)

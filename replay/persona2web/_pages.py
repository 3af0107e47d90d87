"""The recorded page texts the intent rule reads: AX trees of observations and of the final state.

A rules judge scores synchronously; the blobs it needs are fetched once before (``fetch_pages``), and only
for goals that are a state of the site: the AX tree of every step whose action presses an element (to name
the element, ``[66] button "Add to cart"``) and of the step after it, and of every page the goal can end on.
Imported runs have no AX trees, so their ``RecordedPages`` is empty and the rule reads URLs and words.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from p2w_rt.replay.persona2web._goal import Goal, is_goal_page
from p2w_runtime.domain.trajectory import Trajectory

PRESSING = frozenset({"click", "press", "type"})
"""Actions that can press or submit something (their first argument is an element id): only they attempt a goal,
besides a ``goto`` that opens the goal's page."""


@dataclass(frozen=True, slots=True)
class Element:
    """One node of a recorded AX tree: its role, accessible name and, for a link, where it points."""

    id: str
    role: str
    name: str
    url: str = ""

    def describe(self) -> str:
        return f'[{self.id}] {self.role} "{self.name}"' + (f" -> {self.url}" if self.url else "")


_NODE = re.compile(r'^(?P<indent> *)\[(?P<id>\d+)\] (?P<role>[\w-]+)(?: "(?P<name>(?:[^"\\]|\\.)*)")?(?P<rest>.*)$')
_URL = re.compile(r"^ */url: (?P<url>\S+)")


def element(ax_text: str, element_id: str) -> Element | None:
    """The node ``[element_id]`` of an AX tree as the agent saw it, with the ``/url:`` line under it."""
    marker = f"[{element_id}] "
    lines = ax_text.splitlines()
    for i, line in enumerate(lines):
        if marker not in line:
            continue
        node = _NODE.match(line)
        if node is None or node.group("id") != element_id:
            continue
        name = node.group("name") or node.group("rest").lstrip(": ").strip()
        url = ""
        for below in lines[i + 1 : i + 4]:
            found = _URL.match(below)
            if found:
                url = found.group("url")
                break
        return Element(element_id, node.group("role"), name, url)
    return None


@dataclass(slots=True)
class RecordedPages:
    """Blob hash -> decoded text, for the AX trees ``fetch_pages`` read; empty when none were recorded."""

    texts: dict[str, str] = field(default_factory=dict)

    def text(self, blob: str | None) -> str | None:
        return self.texts.get(blob) if blob else None


def needed_blobs(t: Trajectory, goal: Goal) -> list[str]:
    """The AX trees the intent rule may read for this goal, in step order (none for an information goal).

    Only pages next to a press count: the one it was made on (to name the element), the one after it, and any page
    the goal can end on; an episode that only navigated and stopped needs none (each blob read costs milliseconds).
    """
    if not goal.acts:
        return []
    pressing = {a.step for a in t.actions if a.parsed is not None and a.parsed.name in PRESSING}
    if goal.best is not None:  # the results page an item was chosen from, whether clicked or left by a goto
        pressing |= {a.step for a in t.actions if a.parsed is not None and a.parsed.name == "goto"}
    near = pressing | {step + 1 for step in pressing}
    wanted = [
        o.ax_tree for o in t.observations if o.ax_tree and (o.step in near or is_goal_page(goal.kind, o.url, o.title))
    ]
    final = t.final_state
    last = max((a.step for a in t.actions), default=0)
    if final is not None and final.ax_tree and (last in pressing or is_goal_page(goal.kind, final.url, final.title)):
        wanted.append(final.ax_tree)
    return list(dict.fromkeys(wanted))


async def fetch_pages(t: Trajectory, goal: Goal, get_blob: Callable[[str], Awaitable[bytes]]) -> RecordedPages:
    """Read the AX trees ``needed_blobs`` names from the store."""
    pages = RecordedPages()
    for blob in needed_blobs(t, goal):
        pages.texts[blob] = (await get_blob(blob)).decode("utf-8", errors="replace")
    return pages

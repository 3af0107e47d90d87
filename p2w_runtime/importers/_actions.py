"""Actions of imported trajectories in our model.

AgentOccam writes the WebArena/AgentOccam grammar, parsed by the shared ``p2w_runtime.actions``
parser; on top of it AgentOccam has navigation and planning actions of its own (``go_home``,
``branch [id] [intent]``, ``prune [id] [reason]``) that are kept as written. Browser-Use writes
structured actions, mapped here onto the same grammar.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from p2w_rt.schemas import ParsedAction
from p2w_runtime.actions import ActionParseError, parse_action

AGENTOCCAM_ONLY_ACTIONS: Mapping[str, int] = {"go_home": 0, "branch": 2, "prune": 2}
"""AgentOccam actions outside the shared grammar, with their number of bracketed arguments."""

_HEAD = re.compile(r"\s*([a-z_]+)\b\s*(.*?)\s*\Z", re.S)
_BRACKETED = re.compile(r"\[(.*?)\](?=\s*(?:\[|\Z))", re.S)


def parse_agentoccam_action(text: str) -> tuple[ParsedAction | None, str | None]:
    """``(parsed, None)`` for a valid action, ``(None, why)`` for text outside the grammar."""
    try:
        return parse_action(text), None
    except ActionParseError as exc:
        head = _HEAD.match(text)
        if head is None or head.group(1) not in AGENTOCCAM_ONLY_ACTIONS:
            return None, str(exc)
        name, rest = head.groups()
        args = [a.strip() for a in _BRACKETED.findall(rest)]
        if len(args) != AGENTOCCAM_ONLY_ACTIONS[name]:
            return None, f"{name} takes {AGENTOCCAM_ONLY_ACTIONS[name]} bracketed arguments; got {text.strip()!r}"
        return ParsedAction(name=name, args=args), None


BROWSER_USE_NAMES: Mapping[str, str] = {
    "navigate": "goto",
    "go_to_url": "goto",
    "open_tab": "goto",
    "input": "type",
    "input_text": "type",
    "click": "click",
    "click_element": "click",
    "click_element_by_index": "click",
    "send_keys": "press",
    "scroll": "scroll",
    "scroll_down": "scroll",
    "scroll_up": "scroll",
    "go_back": "go_back",
    "switch": "tab_focus",
    "switch_tab": "tab_focus",
    "close": "close_tab",
    "close_tab": "close_tab",
    "select_dropdown": "select_option",
    "select_dropdown_option": "select_option",
    "done": "stop",
}
"""Browser-Use action name -> our grammar; names not listed (search, extract, wait, find_text, ...) are kept."""

_ARG_KEYS = ("element_index", "text", "url", "query")


def map_browser_use_action(action: Mapping[str, Any]) -> ParsedAction:
    """Our action for one entry of a Browser-Use step's ``actions`` list.

    The Persona2Web runner records only ``element_index``, ``text``, ``url`` and ``query``
    of each action, so parameters it dropped (scroll direction, keys, tab id) stay absent
    rather than guessed. ``input`` becomes ``type [id] [text] [0]`` (Browser-Use does not
    press Enter), ``done`` becomes ``stop [answer]``, ``search`` keeps its name because the
    search engine it used is not recorded.
    """
    source = str(action["action"])
    name = BROWSER_USE_NAMES.get(source, source)
    if source == "scroll_up":
        return ParsedAction(name=name, args=["up"])
    if source == "scroll_down":
        return ParsedAction(name=name, args=["down"])
    if name == "type":
        return ParsedAction(name=name, args=[_text(action.get("element_index")), _text(action.get("text")), "0"])
    if name == "stop":
        return ParsedAction(name=name, args=[_text(action.get("text"))])
    return ParsedAction(name=name, args=[_text(action[key]) for key in _ARG_KEYS if action.get(key) is not None])


def _text(value: Any) -> str:
    return "" if value is None else str(value)

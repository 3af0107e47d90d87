"""The WebArena / AgentOccam action grammar: parse replies, compare actions, describe the action space.

Free of Playwright on purpose: the browser, the agent loop, replay and the importers all share this one parser.
"""

from p2w_runtime.actions._equivalence import repeated_action
from p2w_runtime.actions._extract import extract_action
from p2w_runtime.actions._grammar import (
    ACTION_NAMES,
    AGENT_ACTIONS,
    BROWSER_ACTIONS,
    ActionParseError,
    parse_action,
)
from p2w_runtime.actions._prompt import ACTION_SPACE_PROMPT

__all__ = [
    "ACTION_NAMES",
    "ACTION_SPACE_PROMPT",
    "AGENT_ACTIONS",
    "BROWSER_ACTIONS",
    "ActionParseError",
    "extract_action",
    "parse_action",
    "repeated_action",
]

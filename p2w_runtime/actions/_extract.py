"""Find the action in an LLM reply.

Convention (the agent prompt states it, see ``ACTION_SPACE_PROMPT``): the reply ends with the action in a fenced
block, as in WebArena's "the next action I will perform is ```click [12]```". Accepted, in this order:

1. the LAST fenced block (```...```); a language tag line such as ```text is dropped;
2. else the LAST line starting with ``Action:`` (markdown emphasis allowed), continued over following lines while
   its brackets are still open, so a multi-line ``stop [...]`` answer survives;
3. else the whole reply, if it starts with an action name (a model that answers with the bare action).
"""

from __future__ import annotations

import re

from p2w_runtime.actions._grammar import ACTION_NAMES, ActionParseError

_FENCE = re.compile(r"```(.*?)```", re.S)
_ACTION_LINE = re.compile(r"^\s*[*_]*action[*_]*\s*:[*_]*\s*(.*)$", re.I)
_LANGUAGE_TAG = re.compile(r"[A-Za-z0-9_+.-]*")
_STARTS_WITH_ACTION = re.compile(rf"^({'|'.join(ACTION_NAMES)})\b", re.I)


def extract_action(reply: str) -> str:
    """Return the action text of ``reply`` following the convention above; raise ``ActionParseError`` if none."""
    blocks = _FENCE.findall(reply)
    if blocks:
        return _drop_language_tag(blocks[-1]).strip()
    lines = reply.splitlines()
    for index in range(len(lines) - 1, -1, -1):
        match = _ACTION_LINE.match(lines[index])
        if match:
            return _balanced_continuation(match.group(1), lines[index + 1 :]).strip()
    if _STARTS_WITH_ACTION.match(reply.strip()):
        return reply.strip()
    raise ActionParseError(
        "no action found: put the action in a fenced block at the end of the reply, e.g. ```click [12]```"
    )


def _drop_language_tag(block: str) -> str:
    first, newline, rest = block.partition("\n")
    tag = first.strip()
    if newline and tag and _LANGUAGE_TAG.fullmatch(tag) and tag.lower() not in ACTION_NAMES:
        return rest
    return block


def _balanced_continuation(first: str, following: list[str]) -> str:
    text = first
    for line in following:
        if text.count("[") <= text.count("]"):
            break
        text += "\n" + line
    return text

"""The WebArena / AgentOccam action grammar: one action string in, one ``ParsedAction`` out.

Kept free of Playwright so replay, importers and re-execution can parse recorded actions without a browser.
Arguments are normalized (``type`` always carries its press-enter flag, key names get Playwright's spelling)
so that ``ParsedAction.render()`` is canonical and two spellings of one action compare equal.
"""

from __future__ import annotations

import re

from p2w_rt.schemas import ParsedAction


class ActionParseError(ValueError):
    """An action string (usually an LLM reply) does not follow the grammar; the message says what was expected."""


NO_ARG_ACTIONS: tuple[str, ...] = ("go_back", "go_forward", "new_tab", "close_tab")
ELEMENT_ACTIONS: tuple[str, ...] = ("click", "hover", "type")
AGENT_ACTIONS: tuple[str, ...] = ("note", "stop", "memory_access")
"""Actions the agent loop handles itself; they never reach the browser."""
BROWSER_ACTIONS: tuple[str, ...] = (*ELEMENT_ACTIONS, "press", "scroll", "goto", "tab_focus", *NO_ARG_ACTIONS)
ACTION_NAMES: tuple[str, ...] = (*BROWSER_ACTIONS, *AGENT_ACTIONS)

EXAMPLES: dict[str, str] = {
    "click": "click [12]",
    "hover": "hover [12]",
    "type": "type [12] [blue running shoes] [1]",
    "press": "press [Enter]",
    "scroll": "scroll [down]",
    "goto": "goto [http://shop.p2w.test/]",
    "tab_focus": "tab_focus [0]",
    "note": "note [size M is sold out]",
    "stop": "stop [the answer]",
    "memory_access": "memory_access [which size does the user usually buy?]",
    **{name: name for name in NO_ARG_ACTIONS},
}

_KEY_ALIASES: dict[str, str] = {
    "ctrl": "Control",
    "control": "Control",
    "cmd": "Meta",
    "command": "Meta",
    "meta": "Meta",
    "alt": "Alt",
    "option": "Alt",
    "shift": "Shift",
    "enter": "Enter",
    "return": "Enter",
    "esc": "Escape",
    "escape": "Escape",
    "tab": "Tab",
    "backspace": "Backspace",
    "delete": "Delete",
    "del": "Delete",
    "space": "Space",
    "pageup": "PageUp",
    "pagedown": "PageDown",
    "home": "Home",
    "end": "End",
    "up": "ArrowUp",
    "down": "ArrowDown",
    "left": "ArrowLeft",
    "right": "ArrowRight",
}

_HEAD = re.compile(r"([A-Za-z_]+)\s*(.*)\Z", re.S)
_ELEMENT_ID = re.compile(r"\[\s*(\d+)\s*\]\s*(.*)\Z", re.S)
_ENTER_FLAG = re.compile(r"\]\s*\[\s*([01])\s*\]\Z")


def parse_action(text: str) -> ParsedAction:
    """Parse one action such as ``type [12] [red [XL] shirt] [0]``; text arguments may contain brackets."""
    stripped = text.strip()
    if not stripped:
        raise ActionParseError("empty action; expected e.g. `click [12]` or `stop [answer]`")
    head = _HEAD.match(stripped)
    if head is None:
        names = ", ".join(ACTION_NAMES)
        raise ActionParseError(f"an action starts with its name (one of {names}); got {_clip(text)!r}")
    name, rest = head.group(1).lower(), head.group(2).strip()
    if name not in ACTION_NAMES:
        raise ActionParseError(f"unknown action {head.group(1)!r}; expected one of {', '.join(ACTION_NAMES)}")
    if name in NO_ARG_ACTIONS:
        if rest:
            raise ActionParseError(f"{name} takes no argument; got {_clip(rest)!r}")
        return ParsedAction(name=name, args=[])
    if name == "type":
        return _parse_type(rest)
    arg = _single_bracketed(name, rest)
    return ParsedAction(name=name, args=[_check_arg(name, arg)])


def _parse_type(rest: str) -> ParsedAction:
    id_match = _ELEMENT_ID.match(rest)
    if id_match is None:
        raise ActionParseError(f"type needs a numeric element id first, e.g. `{EXAMPLES['type']}`; got {_clip(rest)!r}")
    element_id, remainder = id_match.group(1), id_match.group(2).strip()
    if not (remainder.startswith("[") and remainder.endswith("]")):
        raise ActionParseError(
            f"type needs the text in brackets after the id, e.g. `{EXAMPLES['type']}`; got {_clip(remainder)!r}"
        )
    flag = _ENTER_FLAG.search(remainder)
    if flag is not None:
        return ParsedAction(name="type", args=[element_id, remainder[1 : flag.start()], flag.group(1)])
    return ParsedAction(name="type", args=[element_id, remainder[1:-1], "1"])


def _single_bracketed(name: str, rest: str) -> str:
    if not (rest.startswith("[") and rest.endswith("]")):
        raise ActionParseError(
            f"{name} needs one argument in brackets, e.g. `{EXAMPLES[name]}`; got {_clip(rest) or 'nothing'!r}"
        )
    return rest[1:-1].strip()


def _check_arg(name: str, arg: str) -> str:
    """Validate and normalize the single argument of ``name``."""
    if name in ("click", "hover", "tab_focus"):
        if not arg.isdigit():
            what = "a tab index" if name == "tab_focus" else "a numeric element id"
            raise ActionParseError(f"{name} needs {what}, e.g. `{EXAMPLES[name]}`; got [{_clip(arg)}]")
        return str(int(arg))
    if name == "scroll":
        direction = arg.lower().removeprefix("direction=").strip()
        if direction not in ("up", "down"):
            raise ActionParseError(f"scroll takes [up] or [down]; got [{_clip(arg)}]")
        return direction
    if name == "press":
        return _normalize_keys(arg)
    if name == "goto":
        if not arg or any(c.isspace() for c in arg):
            raise ActionParseError(f"goto needs one URL without spaces, e.g. `{EXAMPLES['goto']}`; got [{_clip(arg)}]")
        return arg
    if name in ("note", "memory_access") and not arg:
        raise ActionParseError(f"{name} needs a non-empty text, e.g. `{EXAMPLES[name]}`")
    return arg


def _normalize_keys(arg: str) -> str:
    """Give key combinations Playwright's spelling (``ctrl + a`` -> ``Control+a``) so the browser accepts them."""
    arg = re.sub(r"\s*\+\s*", "+", arg)
    if not arg or any(c.isspace() for c in arg.strip()):
        raise ActionParseError(f"press needs one key combination without spaces, e.g. `press [Control+a]`; got [{arg}]")
    parts = arg.split("+")
    if any(not part for part in parts):
        raise ActionParseError(f"press: malformed key combination [{arg}]; write keys joined by '+', e.g. Control+a")
    return "+".join(_KEY_ALIASES.get(part.lower(), part) for part in parts)


def _clip(text: str, limit: int = 80) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."

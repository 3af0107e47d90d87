"""Turn Playwright's AI-mode aria snapshot into the compact, numbered text the agent reads.

Playwright marks elements with refs such as ``f3e12`` (document ``f3``, element ``e12``); the agent sees plain
numbers instead (``[17] button "Add to cart"``), handed out by an ``ElementIds`` registry so one element keeps its
number for as long as its document lives. Anonymous ``generic`` wrappers are dropped (their children move up), and
``cursor``/``box`` annotations are removed. Boxes are kept per line so an over-long page can be cut around the
viewport, which is what makes ``scroll`` meaningful to the agent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

_ITEM = re.compile(r"^(\s*)- (.*)$")
_KEY = re.compile(r'^(?P<role>[^\s"\[]+)(?: (?P<name>"(?:[^"\\]|\\.)*"))?(?P<attrs>(?: \[[^\[\]]*\])*)$')
_ATTR = re.compile(r"\[([^\[\]]*)\]")
_BOX = re.compile(r"^box=(-?[\d.]+),(-?[\d.]+),([\d.]+),([\d.]+)$")
_DROPPED_ATTRS = ("cursor=", "box=", "ref=")


@dataclass(frozen=True, slots=True)
class AxLine:
    """One rendered node; ``bottom`` is its (or its nearest boxed ancestor's) lower edge in viewport pixels."""

    depth: int
    text: str
    bottom: float | None


def render_snapshot(raw: str, id_for: Callable[[str], int]) -> list[AxLine]:
    """Render an AI-mode snapshot (``aria_snapshot(mode="ai", boxes=True)``); ``id_for`` maps a ref to its number."""
    lines: list[AxLine] = []
    stack: list[tuple[int, bool, float | None]] = []  # (source indent, kept?, bottom)
    for source in raw.splitlines():
        match = _ITEM.match(source)
        if match is None:
            if source.strip():
                depth = sum(kept for _, kept, _ in stack)
                lines.append(AxLine(depth, source.strip(), stack[-1][2] if stack else None))
            continue
        indent = len(match.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        inherited = stack[-1][2] if stack else None
        key, value = _split_item(match.group(2))
        node = _render_node(key, value, id_for)
        depth = sum(kept for _, kept, _ in stack)
        bottom = node.bottom if node.bottom is not None else inherited
        if node.text is not None:
            lines.append(AxLine(depth, node.text, bottom))
        stack.append((indent, node.text is not None, bottom))
    return lines


def lines_to_text(lines: list[AxLine]) -> str:
    return "\n".join("  " * line.depth + line.text for line in lines)


def bound_text(lines: list[AxLine], max_chars: int) -> str:
    """Fit the tree into ``max_chars``: first drop what lies above the viewport, then cut the tail.

    Both cuts leave a marker line saying what was left out and how to see it.
    """
    text = lines_to_text(lines)
    if len(text) <= max_chars:
        return text
    visible = [line for line in lines if line.bottom is None or line.bottom >= 0]
    head = ""
    if len(visible) < len(lines):
        head = f"[... {len(lines) - len(visible)} lines above the viewport omitted; scroll [up] to see them ...]\n"
        text = lines_to_text(visible)
    budget = max(max_chars - len(head), 0)
    if len(text) <= budget:
        return head + text
    cut = text.rfind("\n", 0, budget)
    kept = text[: cut if cut > 0 else budget]
    tail = f"\n[... {len(text) - len(kept)} more characters truncated; scroll [down] to see more ...]"
    return head + kept + tail


@dataclass(frozen=True, slots=True)
class _Node:
    text: str | None
    bottom: float | None


def _render_node(key: str, value: str | None, id_for: Callable[[str], int]) -> _Node:
    match = _KEY.match(key)
    if match is None:
        return _Node(key if value is None else f"{key}: {value}", None)
    role, name = match.group("role"), match.group("name")
    ref, bottom, kept = None, None, []
    for attr in _ATTR.findall(match.group("attrs")):
        if attr.startswith("ref="):
            ref = attr[4:]
        elif box := _BOX.match(attr):
            bottom = float(box.group(2)) + float(box.group(4))
        if not attr.startswith(_DROPPED_ATTRS):
            kept.append(f"[{attr}]")
    if role == "generic" and name is None and value is None and not kept:
        return _Node(None, bottom)
    parts = [f"[{id_for(ref)}]"] if ref else []
    parts.append(role)
    if name is not None:
        parts.append(name)
    parts.extend(kept)
    text = " ".join(parts)
    return _Node(text if value is None else f"{text}: {value}", bottom)


def _split_item(item: str) -> tuple[str, str | None]:
    """Split one YAML sequence item into key and inline value, undoing Playwright's YAML quoting."""
    if item[:1] in ("'", '"'):
        key, rest = _read_quoted(item)
    else:
        colon = item.find(": ")
        if colon >= 0:
            key, rest = item[:colon], item[colon:]
        elif item.endswith(":"):
            key, rest = item[:-1], ":"
        else:
            key, rest = item, ""
    value = rest[1:].strip() if rest.startswith(":") else ""
    if value[:1] in ("'", '"'):
        value = _read_quoted(value)[0]
    return key, value or None


def _read_quoted(text: str) -> tuple[str, str]:
    """Read a YAML single- or double-quoted scalar at the start of ``text``; return it and what follows."""
    quote, i, out = text[0], 1, []
    while i < len(text):
        char = text[i]
        if quote == "'" and char == "'":
            if text[i + 1 : i + 2] == "'":
                out.append("'")
                i += 2
                continue
            return "".join(out), text[i + 1 :]
        if quote == '"' and char == "\\" and i + 1 < len(text):
            out.append(text[i : i + 2])
            i += 2
            continue
        if quote == '"' and char == '"':
            return _json_unescape("".join(out)), text[i + 1 :]
        out.append(char)
        i += 1
    return text, ""


def _json_unescape(body: str) -> str:
    try:
        return json.loads(f'"{body}"')
    except ValueError:
        return body

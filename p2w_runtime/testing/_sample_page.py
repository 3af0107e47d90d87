"""The sample agent's reading of one observation: the page's URL and the numbered accessibility tree as the
planner prompt shows them (``[12] link "Name"`` / ``/url: ...`` / ``text: ...``), nothing else."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

_PAGE = re.compile(r"^CURRENT PAGE \(step \d+\):\nURL: (\S*)\nTITLE: (.*)\nTABS: .*\n", re.M)
_NODE = re.compile(r'^(\s*)\[(\d+)\] (\w+)(?: "((?:[^"\\]|\\.)*)")?(.*)$')
_OPTION = re.compile(r'^\s*option "((?:[^"\\]|\\.)*)"( \[selected\])?')
_URL_LINE = re.compile(r"^\s*/url: (\S+)")
_CONTROLS = frozenset({"link", "button", "textbox", "combobox", "spinbutton", "searchbox", "radio", "checkbox"})


@dataclass
class Node:
    """One numbered element: its id, role, accessible name, what follows the name on its line (``: value``,
    ``[checked]``), its link target, its options (a drop-down list) and the unnumbered text lines after it."""

    id: str
    role: str
    name: str
    rest: str
    depth: int = 0
    url: str = ""
    options: list[tuple[str, bool]] = field(default_factory=list)
    after: list[tuple[int, str]] = field(default_factory=list)
    """Unnumbered ``text:`` lines after the element, with their indentation."""

    @property
    def value(self) -> str:
        """A field's current value: ``[19] spinbutton "Quantity": 1`` -> ``1``."""
        return self.rest.split(": ", 1)[1].strip() if ": " in self.rest else ""

    @property
    def selected(self) -> str:
        return next((label for label, chosen in self.options if chosen), self.options[0][0] if self.options else "")

    @property
    def checked(self) -> bool:
        return "[checked]" in self.rest

    @property
    def detail(self) -> str:
        return " ".join(text for _, text in self.after)


@dataclass
class Page:
    url: str
    title: str
    nodes: list[Node]

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def path(self) -> str:
        return urlsplit(self.url).path

    def links(self, path_prefix: str) -> list[Node]:
        """Links whose target starts with ``path_prefix`` (``/product/``), in page order."""
        return [n for n in self.nodes if n.role == "link" and unquote(n.url).startswith(path_prefix)]

    def find(self, role: str, name: str) -> Node | None:
        return next((n for n in self.nodes if n.role == role and n.name == name), None)

    def summary(self) -> str:
        """The text under the page's main heading up to its first link or form field: what the page is about.

        Text beside the heading (not inside a paragraph) labels the form fields that follow, so it is left out.
        """
        start = next((i for i, n in enumerate(self.nodes) if n.role == "heading" and "[level=1]" in n.rest), None)
        if start is None:
            return ""
        parts: list[str] = []
        for node in self.nodes[start + 1 :]:
            if node.role in _CONTROLS:
                break
            parts += [node.value] if node.rest.startswith(": ") else []
            parts += [text for depth, text in node.after if depth > self.nodes[start].depth]
        return " ".join(" ".join(parts).split()).replace(" ,", ",")


def current_page(user: str) -> Page | None:
    """The page the planner prompt shows, or None when the prompt has none."""
    head = _PAGE.search(user)
    if head is None:
        return None
    nodes: list[Node] = []
    for line in user[head.end() :].splitlines():
        node = _NODE.match(line)
        if node is not None:
            nodes.append(Node(node.group(2), node.group(3), node.group(4) or "", node.group(5), len(node.group(1))))
            continue
        if not nodes:
            continue
        if (url := _URL_LINE.match(line)) is not None:
            nodes[-1].url = url.group(1)
        elif (option := _OPTION.match(line)) is not None:
            nodes[-1].options.append((option.group(1), bool(option.group(2))))
        elif line.strip().startswith("text: "):
            nodes[-1].after.append((len(line) - len(line.lstrip()), line.strip().removeprefix("text: ")))
    return Page(head.group(1), head.group(2), nodes)

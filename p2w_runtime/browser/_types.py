"""What the browser layer hands back to the agent loop: plain frozen records, no Playwright objects."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

ExecStatus = Literal["executed", "invalid", "blocked"]


@dataclass(frozen=True, slots=True)
class ObservationData:
    """One step's view of the active tab; ``ax_text`` is the bounded, numbered tree the agent reads."""

    url: str
    title: str
    tabs: list[str]
    active_tab: int
    ax_text: str
    screenshot_png: bytes | None
    blocked: str | None = None
    """Why the page blocks the agent (HTTP error, CAPTCHA), or None; see ``detect_block``."""


@dataclass(frozen=True, slots=True)
class ExecResult:
    """Outcome of one browser action, in the vocabulary of the ``action`` event.

    ``invalid``: the action cannot apply here (unknown element id, no such tab, unknown key); ``blocked``: refused
    by policy (a final confirmation); ``executed`` with ``error``: the action ran but the browser failed, e.g. a
    navigation that did not finish within the timeout (then ``timed_out`` is true).
    """

    status: ExecStatus
    error: str | None = None
    timed_out: bool = False


@dataclass(frozen=True, slots=True)
class FinalStateData:
    """The end-of-episode state offline checks run against (WebArena's URL / HTML / string checks)."""

    url: str
    title: str
    dom_html: bytes
    ax_tree: bytes
    screenshot: bytes
    stylesheets: bytes = b""
    """JSON ``{href: css}`` of the page's external stylesheets (empty: none), so offline ``outerText`` matches."""
    errors: list[str] = field(default_factory=list)
    """Parts that could not be captured (left empty), e.g. a screenshot of a page that never rendered."""

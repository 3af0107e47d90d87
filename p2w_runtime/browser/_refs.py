"""Numeric element ids for the agent, stable for as long as the element's document lives."""

from __future__ import annotations

from playwright.async_api import Page


class ElementIds:
    """Hands out one number per (tab, Playwright ref), never reusing a number within an episode.

    Playwright's refs restart their element counter in every document but carry a per-document prefix, so an id
    from a page the agent has left can never silently point at an element of the new page: it resolves to nothing.
    """

    def __init__(self) -> None:
        self._ids: dict[tuple[Page, str], int] = {}
        self._refs: dict[int, tuple[Page, str]] = {}

    def id_for(self, page: Page, ref: str) -> int:
        key = (page, ref)
        element_id = self._ids.get(key)
        if element_id is None:
            element_id = len(self._ids) + 1
            self._ids[key] = element_id
            self._refs[element_id] = key
        return element_id

    def lookup(self, element_id: int) -> tuple[Page, str] | None:
        return self._refs.get(element_id)

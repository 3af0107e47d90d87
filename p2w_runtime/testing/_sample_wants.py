"""What the sample agent reads the task as asking: the final goal, the item choice, sizes, quantities, budget,
delivery, date and time. Read from the text the planner prompt shows (the task, the history's answers and the
agent's own earlier steps), as a model would; never from the task files or the sites' data."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Literal

Goal = Literal["cart", "reservation", "checkout", "answer"]
Choice = Literal["rating", "soonest", "first"]

_NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_QTY = re.compile(r"\b(?:add|choose|pick|buy)\s+(\d+|one|two|three|four|five|six)\b(?:\s+(?:boxes|cartons|tickets))?")
_TICKETS = re.compile(r"\b(\d+|two|three|four|five|six) tickets\b", re.I)
_BUDGET = re.compile(r"\b(?:under|below|less than)\s+\$(\d+(?:\.\d+)?)", re.I)
_PLACE = re.compile(r"\(([A-Z][A-Za-z .]+), [A-Z]{2} (\d{5})\)")
_LIVES = re.compile(r"live in or near ([A-Z][A-Za-z .]+?)[.,]")
_CLOCK = re.compile(r"\b(\d{1,2}):(\d{2}) ?(AM|PM)\b")
_DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
DOWNTOWN_ZIPS = {
    "Austin": "78701",
    "Chicago": "60601",
    "Seattle": "98101",
    "Denver": "80202",
    "Portland": "97201",
    "Boston": "02108",
}
"""World knowledge any model has: a city's downtown ZIP code (the shops deliver by ZIP)."""


@dataclass(frozen=True)
class Wants:
    task: str
    known: str
    """The task, the history's answers and the earlier steps: everything the agent may take a value from."""

    @property
    def goal(self) -> Goal:
        task = self.task.lower()
        if "to the cart" in task:
            return "cart"
        if "reservation details" in task:
            return "reservation"
        if "checkout" in task:
            return "checkout"
        return "answer"

    @property
    def choice(self) -> Choice:
        task = self.task.lower()
        if "best-rated" in task or "best-reviewed" in task:
            return "rating"
        if "soonest" in task:
            return "soonest"
        return "first"

    def size(self, offered: list[str]) -> str | None:
        """The offered size the known text names (``size M``, ``34x30``, ``size 10.5``), the longest first."""
        for label in sorted(offered, key=len, reverse=True):
            if not label or label.startswith(("Choose", "Any")):
                continue
            if any(ch.isdigit() for ch in label):
                if re.search(rf"(?<![\w.]){re.escape(label)}(?![\w.])", self.known):
                    return label
            elif re.search(rf"\bsize[ =]{re.escape(label)}(?![\w.])", self.known, re.I):
                return label
        return None

    @property
    def quantity(self) -> int | None:
        found = _QTY.search(self.task.lower()) or _TICKETS.search(self.known)
        if found is None:
            return None
        word = found.group(1).lower()
        return int(word) if word.isdigit() else _NUMBERS[word]

    @property
    def budget(self) -> float | None:
        found = _BUDGET.search(self.known)
        return float(found.group(1)) if found else None

    @property
    def zip(self) -> str | None:
        """The user's ZIP: stated with the task, or the downtown ZIP of the city the history says they live in."""
        if (place := _PLACE.search(self.task)) is not None:
            return place.group(2)
        lives = _LIVES.search(self.known)
        return DOWNTOWN_ZIPS.get(lives.group(1).strip()) if lives else None

    @property
    def same_day(self) -> bool:
        return "same-day" in self.known.lower()

    @property
    def time(self) -> str | None:
        """The requested time as the booking site writes it (``7:00 PM`` -> ``19:00``)."""
        found = _CLOCK.search(self.task)
        if found is None:
            return None
        hour = int(found.group(1)) % 12 + (12 if found.group(3) == "PM" else 0)
        return f"{hour:02d}:{found.group(2)}"

    def date(self, shown: str) -> str | None:
        """The requested weekday on or after the date the site shows (its default: today), as ``YYYY-MM-DD``."""
        task = self.task.lower()
        day = next((i for i, name in enumerate(_DAYS) if name in task), None)
        try:
            start = dt.date.fromisoformat(shown)
        except ValueError:
            return None
        if day is None:
            return start.isoformat()
        return (start + dt.timedelta(days=(day - start.weekday()) % 7)).isoformat()

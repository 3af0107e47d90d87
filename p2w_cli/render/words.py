"""Counts in words: "1 episode", "2 episodes" (never "1 episodes")."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str = "") -> str:
    """``n`` and ``noun`` in the number ``n`` asks for; ``plural`` when it is not ``noun + "s"``."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"

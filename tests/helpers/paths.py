"""Where the suite's files are, whatever folder a test is in."""

from __future__ import annotations

from pathlib import Path

HELPERS = Path(__file__).resolve().parent
"""This package: its support files run as scripts or in a pytest of their own."""
REPO = HELPERS.parents[1]
"""The repository's root."""
DATA = REPO / "tests" / "data"
"""The vendored benchmark data and fixture databases (``tests/data/README.md``)."""

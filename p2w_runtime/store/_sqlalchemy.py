"""SQLAlchemy as the SQL modules use it: ``sa``, imported when a first attribute is asked of it.

A command that reads through the compiled statements never asks (``docs/design/startup.md``, fourth round).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__all__ = ["sa"]


class OnFirstUse:
    """A module imported when an attribute is first asked of it (``sa.select``)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        value = getattr(import_module(self._name), attribute)
        setattr(self, attribute, value)  # found in the instance from now on: __getattr__ is not called again
        return value


if TYPE_CHECKING:
    import sqlalchemy as sa
else:
    sa = OnFirstUse("sqlalchemy")

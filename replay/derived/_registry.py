"""The one registry of producers: each family (judges, classifiers...) registers its producers here, and the
CLI builds its choices, defaults and help from it, so a new producer is one class and one line."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from p2w_runtime.errors import UserError
from replay.derived._producer import Producer

S = TypeVar("S")
P = TypeVar("P", bound=Producer[Any, Any, Any])

FAMILY_MODULES = {"judge": "replay.judges", "classifier": "replay.classify", "retrieval": "replay.retrieval_cf"}
"""The module that registers each family, imported on first lookup (the CLI reads the registry lazily)."""


@dataclass(frozen=True)
class Family(Generic[S, P]):
    """The producers of one kind, in the order ``--help`` lists them; the first is the default."""

    kind: str
    option: str
    producers: Sequence[type[P]]
    unknown: type[UserError]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(cls.id for cls in self.producers)

    @property
    def default(self) -> str:
        return self.producers[0].id

    def get(self, producer_id: str) -> type[P]:
        for cls in self.producers:
            if cls.id == producer_id:
                return cls
        raise self.unknown(f"unknown {self.kind} {producer_id!r} ({self.option}); known: {', '.join(self.ids)}")

    def make(self, producer_id: str, settings: S) -> P:
        """The producer registered as ``producer_id``, configured from the user's ``settings``."""
        return self.get(producer_id)(settings)

    def help(self) -> str:
        """One ``id: description`` entry per producer, for the option's ``--help``."""
        return "; ".join(f"{cls.id}: {cls.description}" for cls in self.producers)


_FAMILIES: dict[str, Family[Any, Any]] = {}


def register(family: Family[S, P]) -> Family[S, P]:
    if len({*family.ids}) != len(family.ids):
        raise ValueError(f"duplicate {family.kind} ids: {family.ids}")
    _FAMILIES[family.kind] = family
    return family


def family(kind: str) -> Family[Any, Any]:
    """The registered family ``kind`` ("judge", "classifier")."""
    if kind not in _FAMILIES and kind in FAMILY_MODULES:
        importlib.import_module(FAMILY_MODULES[kind])
    return _FAMILIES[kind]


def families() -> list[Family[Any, Any]]:
    for module in FAMILY_MODULES.values():
        importlib.import_module(module)
    return list(_FAMILIES.values())

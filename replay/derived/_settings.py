"""The settings a user gives a pass: the common ones (``--model``, ``--temperature``) and one settings model per
plugin (a benchmark's task configs, a rubric's site lists), which only that plugin reads.

Each producer keeps only the part it uses, as its typed config (``Producer.configure``); that config, not
these settings, is what its cache key hashes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import JsonValue

DEFAULT_MODEL = "gpt-5-mini"

T = TypeVar("T")


@dataclass(frozen=True)
class PassSettings:
    """Everything a user can set for a pass; each producer keeps the part it uses."""

    model: str = DEFAULT_MODEL
    temperature: float | None = None
    params: Mapping[str, JsonValue] = field(default_factory=dict)
    sample: int = 0
    """Which of ``replay --samples N`` judgments this is: LLM producers hash it, so each sample is its own call."""
    plugins: tuple[object, ...] = ()
    """One settings object per plugin (``Plugin.settings``), told apart by type; read with ``of``."""

    def of(self, kind: type[T]) -> T:
        """The plugin settings of type ``kind``, or its defaults (``kind()``) when none were given."""
        for given in self.plugins:
            if isinstance(given, kind):
                return given
        return kind()

    def llm_params(self) -> dict[str, JsonValue]:
        params = dict(self.params)
        if self.temperature is not None:
            params["temperature"] = self.temperature
        return params

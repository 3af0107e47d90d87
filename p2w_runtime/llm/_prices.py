"""Price per 1k tokens per model, so a run reports what it cost.

The built-in table is data (``prices.json``), not code: prices change, and a
user extends or overrides it with a file of the same shape. Unknown models cost
``None``, never a guess.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Protocol

from p2w_runtime.llm._errors import LlmConfigError
from p2w_runtime.llm._totals import TokenCounts

PRICES_ENV = "P2W_PRICES"
_SNAPSHOT_SUFFIX = re.compile(r"-(\d{4}-\d{2}-\d{2}|\d{4}|latest)$")
"""Dated snapshots (``gpt-4o-2024-08-06``) cost what their family costs; other variants are not guessed."""


class PricedCall(Protocol):
    """What pricing reads of an ``llm.call`` (the payload model, or the fields a reader decoded alone)."""

    @property
    def model(self) -> str: ...

    @property
    def usage(self) -> TokenCounts | None: ...

    @property
    def response(self) -> str | None: ...

    @property
    def cost_usd(self) -> float | None: ...


@dataclass(frozen=True, slots=True)
class ModelPrice:
    input_per_1k: float
    output_per_1k: float

    def cost(self, usage: TokenCounts) -> float:
        return usage.prompt_tokens / 1000 * self.input_per_1k + usage.completion_tokens / 1000 * self.output_per_1k


class PriceTable:
    def __init__(self, prices: Mapping[str, ModelPrice]) -> None:
        self._prices = dict(prices)

    @classmethod
    def builtin(cls) -> PriceTable:
        text = resources.files("p2w_runtime.llm").joinpath("prices.json").read_text(encoding="utf-8")
        return cls(_parse(json.loads(text), "built-in prices.json"))

    @classmethod
    def load(cls, path: str | Path) -> PriceTable:
        """Read a user price file: ``{"model": {"input_per_1k": x, "output_per_1k": y}, ...}``."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise LlmConfigError(f"cannot read price file {path}: {exc.strerror or exc}") from None
        except json.JSONDecodeError as exc:
            raise LlmConfigError(f"price file {path} is not valid JSON: {exc}") from None
        return cls(_parse(data, str(path)))

    @classmethod
    def default(cls, path: str | Path | None = None) -> PriceTable:
        """The built-in table extended by ``path``, else by the file named in ``$P2W_PRICES`` if set."""
        table = cls.builtin()
        extra = path or os.environ.get(PRICES_ENV)
        return table.extended(cls.load(extra)) if extra else table

    def extended(self, other: PriceTable) -> PriceTable:
        """A new table where ``other``'s entries add to or replace ours."""
        return PriceTable({**self._prices, **other._prices})

    @property
    def models(self) -> list[str]:
        return sorted(self._prices)

    def price(self, model: str) -> ModelPrice | None:
        for name in dict.fromkeys((model, model.rsplit("/", 1)[-1])):
            if name in self._prices:
                return self._prices[name]
            family = _SNAPSHOT_SUFFIX.sub("", name)
            if family != name and family in self._prices:
                return self._prices[family]
        return None

    def cost(self, model: str, usage: TokenCounts | None) -> float | None:
        price = self.price(model)
        return price.cost(usage) if price is not None and usage is not None else None

    def call_cost(self, call: PricedCall) -> float | None:
        """What a recorded call cost: its recorded cost, else this table's price of its tokens; None for an attempt
        that got no answer (nothing was spent, as ``UsageTotals`` counts) or a model without a price. The one rule
        the viewer's step, episode and run figures price by."""
        if call.response is None:
            return None
        return call.cost_usd if call.cost_usd is not None else self.cost(call.model, call.usage)


def _parse(data: object, source: str) -> dict[str, ModelPrice]:
    if not isinstance(data, dict):
        raise LlmConfigError(f"price file {source}: expected an object of model -> prices")
    prices: dict[str, ModelPrice] = {}
    for model, entry in data.items():
        if model.startswith("_"):
            continue
        values = []
        for field in ("input_per_1k", "output_per_1k"):
            value = entry.get(field) if isinstance(entry, dict) else None
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise LlmConfigError(f"price file {source}: {model}.{field} must be a number >= 0, got {value!r}")
            values.append(float(value))
        prices[model] = ModelPrice(*values)
    return prices

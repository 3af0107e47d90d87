"""Agreement statistics between raters over the same units, each with a bootstrap confidence interval.

Cohen's κ and accuracy are computed here (a few lines, no scikit-learn dependency); Krippendorff's α
comes from the ``krippendorff`` package, Spearman's ρ and Pearson's r
written out with numpy (checked against scipy in the tests). The interval resamples
units (episodes) with replacement, with a fixed seed so the same data always gives the same report.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import krippendorff
import numpy as np

BOOTSTRAP_SAMPLES = 1000
SEED = 20260101

Level = Literal["nominal", "interval"]


def accuracy(a: Sequence[float], b: Sequence[float]) -> float:
    """Share of units where both raters gave the same value."""
    if not a:
        return math.nan
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a)


def cohen_kappa(a: Sequence[float], b: Sequence[float]) -> float:
    """Cohen's κ over the values as nominal categories: (p_o - p_e) / (1 - p_e).

    When both raters use one and the same category everywhere, p_e = 1 and κ is undefined: NaN,
    as in scikit-learn; the report shows it as "—" rather than pretending perfect agreement.
    """
    n = len(a)
    if n == 0:
        return math.nan
    p_o = accuracy(a, b)
    categories = set(a) | set(b)
    p_e = sum((list(a).count(c) / n) * (list(b).count(c) / n) for c in categories)
    if p_e == 1.0:
        return math.nan
    return (p_o - p_e) / (1 - p_e)


def alpha(ratings: Sequence[Sequence[float | None]], level: Level) -> float:
    """Krippendorff's α over raters × units (None where a rater gave no value); ``level`` nominal or interval."""
    data = np.array([[math.nan if v is None else v for v in row] for row in ratings], dtype=float)
    pairable = (~np.isnan(data)).sum(axis=0) >= 2
    values = data[:, pairable]
    if values.size == 0 or len(np.unique(values[~np.isnan(values)])) < 2:
        return math.nan  # one value everywhere: no variation to agree on
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))


def pearson(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray) -> float:
    """Pearson's r; NaN when a rater is constant (no linear relation to measure)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if x.size < 2:
        return math.nan
    dx, dy = x - x.mean(), y - y.mean()
    denominator = math.sqrt(float(dx @ dx) * float(dy @ dy))
    return float(dx @ dy) / denominator if denominator else math.nan


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    """Spearman's ρ as Pearson's r of the average ranks (scipy's definition, ties included).

    Written out rather than calling ``scipy.stats.spearmanr`` per resample: the bootstrap calls it a thousand
    times per item, and scipy's checks make that 5-7x slower (benchmarks/bench_agree.py); a test checks both agree.
    """
    return pearson(_ranks(a), _ranks(b))


def _ranks(values: Sequence[float]) -> np.ndarray:
    """1-based ranks, tied values sharing their average rank (``scipy.stats.rankdata``'s default)."""
    _, inverse, counts = np.unique(np.asarray(values, dtype=float), return_inverse=True, return_counts=True)
    return (np.cumsum(counts) - (counts - 1) / 2)[inverse]


@dataclass(frozen=True, slots=True)
class Estimate:
    """A statistic and its 95 % percentile bootstrap interval (NaN where undefined)."""

    value: float
    low: float
    high: float

    def as_dict(self) -> dict[str, float | None]:
        def clean(x: float) -> float | None:
            return None if math.isnan(x) else round(x, 6)

        return {"value": clean(self.value), "low": clean(self.low), "high": clean(self.high)}


def bootstrap(
    statistic: Callable[[list[int]], float], units: int, samples: int = BOOTSTRAP_SAMPLES, seed: int = SEED
) -> Estimate:
    """``statistic`` over all units, and the 2.5th / 97.5th percentile of it over resampled unit indexes."""
    value = statistic(list(range(units)))
    if units < 2 or samples < 1:
        return Estimate(value, math.nan, math.nan)
    rng = np.random.default_rng(seed)
    draws = [statistic(rng.integers(0, units, units).tolist()) for _ in range(samples)]
    finite = np.array([d for d in draws if not math.isnan(d)])
    if finite.size < samples / 2:  # mostly undefined resamples (e.g. nearly constant raters): no honest interval
        return Estimate(value, math.nan, math.nan)
    low, high = np.percentile(finite, [2.5, 97.5])
    return Estimate(value, float(low), float(high))


@dataclass(frozen=True, slots=True)
class PairAgreement:
    """How two raters agree on one item (a metric, a rubric point, a checklist dimension) over shared units."""

    units: int
    accuracy: Estimate
    kappa: Estimate
    alpha: Estimate
    spearman: Estimate
    pearson: Estimate
    mean_a: float
    mean_b: float
    mean_delta: Estimate
    """Mean of b - a: how far the second rater's figure moved (judge drift)."""


def pair_agreement(a: Sequence[float], b: Sequence[float], *, samples: int = BOOTSTRAP_SAMPLES) -> PairAgreement:
    """Every statistic for two raters' values on the same units (index i of ``a`` and ``b`` is one unit)."""
    a, b = list(a), list(b)
    binary = set(a) | set(b) <= {0.0, 1.0}
    level: Level = "nominal" if binary else "interval"

    def on(fn: Callable[[list[float], list[float]], float]) -> Callable[[list[int]], float]:
        return lambda idx: fn([a[i] for i in idx], [b[i] for i in idx])

    def alpha_of(x: list[float], y: list[float]) -> float:
        return alpha([x, y], level)

    def delta(x: list[float], y: list[float]) -> float:
        return float(np.mean(np.array(y) - np.array(x))) if x else math.nan

    n = len(a)
    return PairAgreement(
        units=n,
        accuracy=bootstrap(on(accuracy), n, samples),
        kappa=bootstrap(on(cohen_kappa), n, samples),
        alpha=bootstrap(on(alpha_of), n, samples),
        spearman=bootstrap(on(spearman), n, samples),
        pearson=bootstrap(on(pearson), n, samples),
        mean_a=float(np.mean(a)) if a else math.nan,
        mean_b=float(np.mean(b)) if b else math.nan,
        mean_delta=bootstrap(on(delta), n, samples),
    )


def group_alpha(ratings: Sequence[Sequence[float | None]], *, samples: int = BOOTSTRAP_SAMPLES) -> Estimate:
    """Krippendorff's α of several raters (rows) over units (columns), missing values allowed, with its CI."""
    rows = [list(r) for r in ratings]
    present = {v for r in rows for v in r if v is not None}
    level: Level = "nominal" if present <= {0.0, 1.0} else "interval"
    units = len(rows[0]) if rows else 0
    return bootstrap(lambda idx: alpha([[r[i] for i in idx] for r in rows], level), units, samples)

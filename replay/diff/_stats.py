"""Paired statistics for two runs of the same tasks: bootstrap intervals and McNemar's exact test.

Both are paired on purpose: the same task in two runs is one observation, so task difficulty
cancels out and a small real change is not drowned by the spread between tasks.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb

BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 20250101
"""Fixed, so the same two runs always give the same interval."""


def paired_bootstrap(
    a: Sequence[Sequence[float]],
    b: Sequence[Sequence[float]],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    confidence: float = 0.95,
) -> list[tuple[float, float] | None]:
    """Percentile interval of mean(b) - mean(a) per column, resampling tasks (rows) with replacement.

    ``a`` and ``b`` are tasks x metrics, row i of both the same task. All metrics are resampled with
    the same task draws, so the intervals describe one set of bootstrap worlds. None for no tasks. numpy is
    imported here, when a diff has paired scores to resample, not by every importer of ``replay.diff`` (the viewer).
    """
    import numpy as np

    diffs = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    if diffs.ndim != 2 or diffs.shape[0] == 0:
        columns = diffs.shape[1] if diffs.ndim == 2 else 0
        return [None] * columns
    n = diffs.shape[0]
    rng = np.random.default_rng(seed)
    tail = (1 - confidence) / 2 * 100
    means = np.empty((resamples, diffs.shape[1]))
    chunk = max(1, 2_000_000 // n)
    for start in range(0, resamples, chunk):
        stop = min(resamples, start + chunk)
        draws = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = diffs[draws].mean(axis=1)
    low, high = np.percentile(means, [tail, 100 - tail], axis=0)
    return [(float(lo), float(hi)) for lo, hi in zip(low, high, strict=True)]


def mcnemar_exact(gained: int, lost: int) -> float:
    """Two-sided exact McNemar p-value: a binomial test of the discordant pairs at p = 0.5; 1.0 when none.

    At p = 0.5 the binomial is symmetric, so the two-sided p-value (every outcome no more likely than the one seen,
    as ``scipy.stats.binomtest`` sums them) is twice the lower tail of the smaller count, at most 1. Summed here in
    integers: importing ``scipy.stats`` for it cost ``diff`` most of its start-up (docs/design/startup.md)."""
    discordant = gained + lost
    if discordant == 0 or gained == lost:
        return 1.0
    tail = sum(comb(discordant, k) for k in range(min(gained, lost) + 1))
    return min(1.0, 2 * tail / 2**discordant)

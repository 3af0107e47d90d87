"""The diff's hand-written paired bootstrap agrees with ``scipy.stats.bootstrap(paired=True)``.

Ours resamples the tasks once for all five metrics (one set of bootstrap worlds, and 5x fewer draws); scipy
resamples per statistic. Both are percentile intervals of mean(B) - mean(A) over tasks drawn with replacement,
so they must agree up to Monte Carlo noise.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import bootstrap

from p2w_rt.replay.diff._stats import paired_bootstrap


def scipy_interval(a: np.ndarray, b: np.ndarray, seed: int) -> tuple[float, float]:
    def delta(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
        return np.mean(y, axis=axis) - np.mean(x, axis=axis)

    result = bootstrap(
        (a, b),
        delta,
        paired=True,
        vectorized=True,
        n_resamples=20_000,
        confidence_level=0.95,
        method="percentile",
        random_state=np.random.default_rng(seed),
    )
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_paired_bootstrap_matches_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    tasks = 60
    a_success = rng.random(tasks) < 0.55
    b_success = np.where(rng.random(tasks) < 0.8, a_success, rng.random(tasks) < 0.7)  # paired: mostly the same
    a_pref = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], tasks)
    b_pref = np.clip(a_pref + rng.choice([-0.25, 0.0, 0.0, 0.25], tasks), 0, 1)
    a = np.column_stack([a_pref, a_success.astype(float)])
    b = np.column_stack([b_pref, b_success.astype(float)])
    ours = paired_bootstrap(a.tolist(), b.tolist())
    for column, interval in enumerate(ours):
        assert interval is not None
        low, high = scipy_interval(a[:, column], b[:, column], seed)
        assert interval[0] == pytest.approx(low, abs=0.01) and interval[1] == pytest.approx(high, abs=0.01), column
        assert interval[0] < interval[1]


def test_a_wrong_interval_would_not_match() -> None:
    """The tolerance is tight enough to see a real error: the interval of mean(A) - mean(B) is far off."""
    rng = np.random.default_rng(4)
    a = rng.random(60)
    b = np.clip(a + 0.15 + rng.normal(0, 0.1, 60), 0, 1)
    (ours,) = paired_bootstrap(a[:, None].tolist(), b[:, None].tolist())
    low, high = scipy_interval(b, a, 4)  # swapped
    assert ours is not None and abs(ours[0] - low) > 0.2

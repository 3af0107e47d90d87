"""Cost of ``agree``'s bootstrap: one item's six statistics over 1000 resamples, ours vs scipy's correlations.

Spearman's ρ and Pearson's r run once per resample, so they are written out with numpy
(``replay/agreement/_stats.py``); the baseline is the same bootstrap calling ``scipy.stats.spearmanr`` and
``pearsonr``. Prints the time per item for both and their ratio.

    python benchmarks/bench_agree.py [--units 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from scipy import stats

from p2w_rt.replay.agreement._stats import bootstrap, pair_agreement, pearson, spearman


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--units", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    a = rng.integers(0, 5, args.units).astype(float).tolist()
    b = [min(4.0, max(0.0, x + rng.integers(-1, 2))) for x in a]

    def ours() -> None:
        pair_agreement(a, b)

    def scipy_correlations() -> None:
        for fn in (stats.spearmanr, stats.pearsonr):
            bootstrap(lambda idx, fn=fn: float(fn([a[i] for i in idx], [b[i] for i in idx]).statistic), len(a))

    def our_correlations() -> None:
        for fn in (spearman, pearson):
            bootstrap(lambda idx, fn=fn: fn([a[i] for i in idx], [b[i] for i in idx]), len(a))

    def best(work: Callable[[], None]) -> float:
        times = []
        for _ in range(args.repeat):
            t = time.perf_counter()
            work()
            times.append(time.perf_counter() - t)
        return min(times)

    full = best(ours)
    mine, theirs = best(our_correlations), best(scipy_correlations)
    print(f"units {args.units}: one item, all statistics with 1000-resample CIs: {full * 1000:.0f} ms")
    print(f"rho + r bootstraps: numpy {mine * 1000:.0f} ms, scipy {theirs * 1000:.0f} ms, ratio {theirs / mine:.1f}x")


if __name__ == "__main__":
    main()

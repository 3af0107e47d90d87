"""Agreement statistics against values computed by hand and Krippendorff's own reliability example."""

from __future__ import annotations

import math
from collections import Counter
from itertools import permutations

import numpy as np
import pytest
from scipy import stats

from p2w_rt.replay.agreement import accuracy, alpha, bootstrap, cohen_kappa, pair_agreement, pearson, spearman

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", section C: 4 observers, 12 units, missing data.
KRIPPENDORFF_2011 = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, None, None, None],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, None, 3],
    [None, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, None],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, None],
]


def nominal_alpha_by_hand(ratings: list[list[float | None]]) -> float:
    """The coincidence-matrix definition: alpha = 1 - (n - 1) * sum_off-diagonal o_ck / sum_c!=k n_c n_k."""
    coincidences: Counter[tuple[float, float]] = Counter()
    for unit in zip(*ratings, strict=True):
        values = [v for v in unit if v is not None]
        m = len(values)
        if m < 2:
            continue
        for i, j in permutations(range(m), 2):
            coincidences[(values[i], values[j])] += 1 / (m - 1)
    totals: Counter[float] = Counter()
    for (c, _), o in coincidences.items():
        totals[c] += o
    n = sum(totals.values())
    observed = sum(o for (c, k), o in coincidences.items() if c != k)
    expected = sum(totals[c] * totals[k] for c in totals for k in totals if c != k)
    return 1 - (n - 1) * observed / expected


def test_perfect_agreement_is_one_everywhere() -> None:
    a = [1.0, 0.0, 1.0, 0.0, 1.0]
    pa = pair_agreement(a, a, samples=200)
    assert pa.accuracy.value == pa.kappa.value == pa.alpha.value == 1.0
    assert pa.spearman.value == pytest.approx(1.0) and pa.pearson.value == pytest.approx(1.0)
    assert (pa.kappa.low, pa.kappa.high) == (1.0, 1.0)  # every resample with both categories agrees fully
    assert pa.mean_delta.value == 0.0


def test_chance_agreement_is_zero() -> None:
    # both raters say yes half the time, independently: p_o = p_e = 0.5
    a = [1.0, 1.0, 0.0, 0.0]
    b = [1.0, 0.0, 1.0, 0.0]
    assert accuracy(a, b) == 0.5
    assert cohen_kappa(a, b) == 0.0
    assert spearman(a, b) == pytest.approx(0.0)
    # alpha corrects for sample size: slightly below zero, as the coincidence formula says
    assert alpha([a, b], "nominal") == pytest.approx(nominal_alpha_by_hand([a, b]))
    assert alpha([a, b], "nominal") == pytest.approx(1 - 7 * 4 / (2 * 4 * 4))


def test_kappa_of_the_textbook_table() -> None:
    # 50 items: yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> p_o = .7, p_e = .5*.6 + .5*.4 = .5, kappa = .4
    pairs = [(1, 1)] * 20 + [(1, 0)] * 5 + [(0, 1)] * 10 + [(0, 0)] * 15
    a = [float(x) for x, _ in pairs]
    b = [float(y) for _, y in pairs]
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert accuracy(a, b) == pytest.approx(0.7)


def test_kappa_is_undefined_when_both_raters_use_one_category() -> None:
    assert math.isnan(cohen_kappa([1.0, 1.0], [1.0, 1.0]))
    assert math.isnan(spearman([1.0, 1.0, 1.0], [0.0, 1.0, 0.0]))


def test_alpha_on_krippendorffs_reliability_data() -> None:
    assert alpha(KRIPPENDORFF_2011, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert alpha(KRIPPENDORFF_2011, "interval") == pytest.approx(0.849, abs=5e-4)
    assert alpha(KRIPPENDORFF_2011, "nominal") == pytest.approx(nominal_alpha_by_hand(KRIPPENDORFF_2011))


def test_rank_and_linear_correlation_by_hand() -> None:
    # d = -1, 1, -1, 1, 0: rho = 1 - 6 * 4 / (5 * (25 - 1)) = 0.8
    assert spearman([1, 2, 3, 4, 5], [2, 1, 4, 3, 5]) == pytest.approx(0.8)
    # dx = -1, 0, 1; dy = -4/3, -1/3, 5/3: r = 3 / sqrt(2 * 42/9)
    assert pearson([1, 2, 3], [1, 2, 4]) == pytest.approx(3 / math.sqrt(2 * 42 / 9))


def test_bootstrap_is_reproducible_and_brackets_the_estimate() -> None:
    a = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0] * 4
    b = [1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0] * 4
    first = pair_agreement(a, b, samples=300)
    again = pair_agreement(a, b, samples=300)
    assert first == again
    assert first.kappa.value == pytest.approx(0.5)
    assert first.kappa.low < first.kappa.value < first.kappa.high
    assert first.kappa.high - first.kappa.low < 0.8


def test_no_interval_from_one_unit_or_zero_resamples() -> None:
    one = bootstrap(lambda idx: float(len(idx)), 1)
    assert one.value == 1.0 and math.isnan(one.low) and math.isnan(one.high)
    none = bootstrap(lambda idx: float(len(idx)), 10, samples=0)
    assert none.value == 10.0 and math.isnan(none.low)


def test_fast_correlations_match_scipy_with_ties() -> None:
    rng = np.random.default_rng(7)
    for _ in range(20):
        a = rng.integers(0, 4, 30).astype(float).tolist()
        b = rng.integers(0, 4, 30).astype(float).tolist()
        assert spearman(a, b) == pytest.approx(stats.spearmanr(a, b).statistic)
        assert pearson(a, b) == pytest.approx(stats.pearsonr(a, b).statistic)

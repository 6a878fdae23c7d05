"""Chance levels, bootstrap intervals and tests against chance, on cases small enough to enumerate."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from bench.metrics import chance, intervals


def test_ranking_chance_counts_foils_and_true_texts():
    assert chance.ranking_chance(2) == 0.5
    assert chance.ranking_chance(3) == pytest.approx(1 / 3)
    assert chance.ranking_chance(4, 2) == pytest.approx(1 / 6)
    with pytest.raises(ValueError, match="n_true"):
        chance.ranking_chance(2, 3)


def test_hit_at_k_chance_matches_enumeration():
    n, r, k = 6, 2, 3
    hits = [any(p < k for p in positions) for positions in itertools.combinations(range(n), r)]
    assert chance.hit_at_k_chance(k, n, r) == pytest.approx(np.mean(hits))
    assert chance.hit_at_k_chance(10, 20) == pytest.approx(0.5)
    assert chance.hit_at_k_chance(10, 4) == 1.0


@pytest.mark.parametrize("n, r", [(5, 1), (5, 2), (6, 3), (7, 7), (1, 1)])
def test_expected_average_precision_matches_enumeration(n, r):
    aps = []
    for positions in itertools.combinations(range(1, n + 1), r):
        aps.append(np.mean([(i + 1) / rank for i, rank in enumerate(positions)]))
    assert chance.expected_average_precision(r, n) == pytest.approx(np.mean(aps))


def test_expected_average_precision_for_ssv2_temporal():
    # 12 true videos among 216 per caption (realdata eval_ssv2_temporal.csv): 7.73%, the paper prints 7.3.
    assert chance.expected_average_precision(12, 216) == pytest.approx(0.0773, abs=5e-4)


def test_poisson_binomial_pmf_matches_enumeration():
    probs = [0.5, 1 / 3, 1 / 3, 0.25]
    expected = np.zeros(len(probs) + 1)
    for outcome in itertools.product([0, 1], repeat=len(probs)):
        expected[sum(outcome)] += math.prod(p if o else 1 - p for p, o in zip(probs, outcome))
    assert intervals.poisson_binomial_pmf(probs) == pytest.approx(expected)
    assert intervals.poisson_binomial_test(3, probs) == pytest.approx(expected[3:].sum())
    assert intervals.poisson_binomial_test(0, probs) == 1.0
    assert intervals.poisson_binomial_test(5, probs) == 0.0


def test_poisson_binomial_equals_binomial_for_equal_chances():
    assert intervals.poisson_binomial_test(7, [0.5] * 10) == pytest.approx(intervals.binomial_test(7, 10, 0.5))
    assert intervals.binomial_test(7, 10, 0.5) == pytest.approx(sum(math.comb(10, k) for k in range(7, 11)) / 1024)
    with pytest.raises(ValueError, match="probabilities"):
        intervals.poisson_binomial_pmf([0.5, 1.5])


def test_binary_bootstrap_matches_index_resampling():
    values = np.array([1] * 30 + [0] * 70, dtype=float)
    fast = intervals.bootstrap_means(values, n_boot=4000, seed=1)
    rng = np.random.default_rng(2)
    slow = values[rng.integers(0, 100, size=(4000, 100))].mean(axis=1)
    assert fast.mean() == pytest.approx(slow.mean(), abs=0.005)
    assert fast.std() == pytest.approx(slow.std(), rel=0.08)
    low, high = intervals.bootstrap_ci(values, 4000)
    assert low < 0.3 < high and high - low == pytest.approx(2 * 1.96 * math.sqrt(0.3 * 0.7 / 100), abs=0.03)


def test_bootstrap_edge_cases():
    assert all(math.isnan(v) for v in intervals.bootstrap_ci([]))
    assert intervals.bootstrap_ci([1.0, 1.0, 1.0]) == (1.0, 1.0)
    low, high = intervals.bootstrap_ci([0.2, 0.4, 0.9, 0.1], 500)
    assert 0.1 <= low < high <= 0.9


def test_stratified_bootstrap_keeps_every_stratum():
    values = np.array([1.0, 1.0, 0.0, 0.0, 0.0])
    strata = ["a", "a", "b", "b", "b"]
    seen = []

    def stat(idx):
        seen.append(sorted({strata[i] for i in idx}))
        return values[idx].mean()

    intervals.bootstrap_statistic(stat, 5, n_boot=50, strata=strata)
    assert all(s == ["a", "b"] for s in seen)


def test_mcnemar_and_mann_whitney():
    a = [True] * 10 + [False] * 10
    b = [True] * 10 + [True] * 10
    assert intervals.mcnemar_test(a, a) == 1.0
    assert intervals.mcnemar_test(b, a) == pytest.approx(2 * 0.5 ** 10)
    assert intervals.mann_whitney_test([5, 6, 7, 8], [1, 2, 3, 4]) < 0.05
    assert intervals.mann_whitney_test([1, 2], [3, 4]) > 0.5
    assert math.isnan(intervals.mann_whitney_test([], [1.0]))


def test_null_test_of_mean_of_means():
    groups = [[0.5] * 40, [0.25] * 40]
    at_chance = intervals.null_test_of_mean_of_means(0.375, groups, n_sim=4000)
    far_above = intervals.null_test_of_mean_of_means(0.7, groups, n_sim=4000)
    assert 0.3 < at_chance < 0.7
    assert far_above < 0.001


def test_weighted_auroc_bootstrap_agrees_with_resampling_items():
    from bench.metrics.ranking import auroc

    rng = np.random.default_rng(3)
    n = 300
    pos = np.round(rng.random(n) * 0.7 + 0.3, 2)  # rounded: plenty of ties
    neg = np.round(rng.random(n) * 0.7, 2)
    pos[:5] = np.nan
    scores, labels = np.r_[pos, neg], np.r_[np.ones(n, int), np.zeros(n, int)]
    units = np.r_[np.arange(n), np.arange(n)]
    fast = intervals.bootstrap_auroc(scores, labels, units, n_boot=2000, seed=1)

    def statistic(idx):
        return auroc(np.r_[pos[idx], neg[idx]], np.r_[np.ones(len(idx), int), np.zeros(len(idx), int)])

    slow = intervals.bootstrap_statistic(statistic, n, n_boot=2000, seed=2)
    assert fast == pytest.approx(tuple(slow), abs=0.01)
    assert fast[0] < auroc(scores, labels) < fast[1]
    assert all(math.isnan(v) for v in intervals.bootstrap_auroc([0.1, 0.2], [1, 1], [0, 1]))

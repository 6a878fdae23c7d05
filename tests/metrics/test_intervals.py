"""Chance levels, intervals and the tests beside them (each dual to its interval), on cases small enough to
enumerate."""

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


def test_clopper_pearson_by_hand():
    # 0 of 4: the upper limit solves (1 - p)^4 = 0.025; 4 of 4 mirrors it; nothing collapses to [0, 0]
    low, high = intervals.clopper_pearson(0, 4)
    assert low == 0.0 and high == pytest.approx(1 - 0.025 ** 0.25)
    assert intervals.clopper_pearson(4, 4) == pytest.approx((0.025 ** 0.25, 1.0))
    low, high = intervals.clopper_pearson(7, 10)
    assert stats_sf(7, 10, low) == pytest.approx(0.025) and 1 - stats_sf(8, 10, high) == pytest.approx(0.025)
    assert all(math.isnan(v) for v in intervals.clopper_pearson(0, 0))


def stats_sf(k, n, p):
    return sum(math.comb(n, j) * p ** j * (1 - p) ** (n - j) for j in range(k, n + 1))


def test_binomial_p_value_is_the_exact_tail_and_extends_to_fractional_counts():
    assert intervals.binomial_p_value(7, 10, 0.5) == pytest.approx(sum(math.comb(10, k) for k in range(7, 11)) / 1024)
    assert intervals.binomial_p_value(0, 10, 0.5) == 1.0
    assert intervals.binomial_p_value(3, 7, 1 / 3) == pytest.approx(stats_sf(3, 7, 1 / 3))
    between = intervals.binomial_p_value(6.5, 10, 0.5)
    assert intervals.binomial_p_value(7, 10, 0.5) < between < intervals.binomial_p_value(6, 10, 0.5)
    assert math.isnan(intervals.binomial_p_value(1, 0, 0.5))


@pytest.mark.parametrize("level", [0.95, 0.9])
def test_star_exactly_when_chance_lies_below_the_interval(level):
    alpha = intervals.one_sided_alpha(level)
    for n in (1, 4, 9, 30):
        for k in np.arange(0, n + 0.5, 0.5):
            low, high = intervals.clopper_pearson(k, n, level)
            for level_of_chance in (0.05, 0.2, 1 / 3, 0.5, 0.75):
                starred = intervals.binomial_p_value(k, n, level_of_chance) < alpha
                assert starred == (level_of_chance < low), (k, n, level_of_chance)
                assert low <= k / n <= high


def test_bootstrap_p_value_and_limits_agree():
    rng = np.random.default_rng(0)
    alpha = intervals.one_sided_alpha(0.95)
    for n_boot in (40, 200, 1000):
        samples = rng.normal(0.55, 0.03, size=n_boot)
        low, _ = intervals.bootstrap_interval(samples, 0.95)
        for threshold in np.quantile(samples, np.linspace(0, 0.1, 41)):
            assert (intervals.bootstrap_p_value(samples, threshold) < alpha) == (threshold < low)


def test_mover_interval_and_its_p_value():
    # one group: MOVER is Clopper-Pearson
    assert intervals.mover_interval([(3, 10)]) == pytest.approx(intervals.clopper_pearson(3, 10))
    low, high = intervals.mover_interval([(0, 4), (0, 4)])
    assert low == 0.0 and high > 0.3  # all wrong on tiny groups: no [0, 0]
    groups = [(30, 40), (12, 40), (25, 50)]
    estimate = np.mean([k / n for k, n in groups])
    low, high = intervals.mover_interval(groups)
    assert low < estimate < high
    for threshold in (0.3, 0.4, 0.45, low - 1e-3, low + 1e-3):
        p = intervals.mover_p_value(groups, threshold)
        assert (p < intervals.one_sided_alpha(0.95)) == (threshold < low)
    assert math.isnan(intervals.mover_p_value(groups, estimate + 0.01))


def test_mcnemar_test_and_the_interval_it_inverts():
    a = [True] * 10 + [False] * 10
    b = [True] * 10 + [True] * 10
    assert intervals.mcnemar_test(a, a) == 1.0
    assert intervals.mcnemar_test(b, a) == pytest.approx(2 * 0.5 ** 10)
    rng = np.random.default_rng(1)
    for _ in range(200):
        n = int(rng.integers(1, 40))
        first, second = rng.random(n) < rng.random(), rng.random(n) < rng.random()
        low, high = intervals.mcnemar_interval(first, second)
        diff = first.mean() - second.mean()
        assert low - 1e-12 <= diff <= high + 1e-12
        assert (intervals.mcnemar_test(first, second) < 1 - 0.95) == (not low <= 0 <= high)
    low, high = intervals.mcnemar_interval([True] * 4, [True] * 4)  # no discordant pair: not collapsed
    assert low < 0 < high


def test_holm_by_hand():
    adjusted = intervals.holm([0.01, 0.04, 0.03, np.nan, 0.005])
    # sorted 0.005, 0.01, 0.03, 0.04 (m = 4): 0.02, 0.03, 0.06, max(0.06, 0.04) = 0.06
    assert adjusted[[4, 0, 2, 1]] == pytest.approx([0.02, 0.03, 0.06, 0.06])
    assert math.isnan(adjusted[3])


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


def test_weighted_auroc_bootstrap_agrees_with_resampling_items():
    from bench.metrics.ranking import auroc

    rng = np.random.default_rng(3)
    n = 300
    pos = np.round(rng.random(n) * 0.7 + 0.3, 2)  # rounded: plenty of ties
    neg = np.round(rng.random(n) * 0.7, 2)
    pos[:5] = np.nan
    scores, labels = np.r_[pos, neg], np.r_[np.ones(n, int), np.zeros(n, int)]
    units = np.r_[np.arange(n), np.arange(n)]
    fast = intervals.bootstrap_interval(intervals.bootstrap_auroc(scores, labels, units, n_boot=2000, seed=1))

    def statistic(idx):
        return auroc(np.r_[pos[idx], neg[idx]], np.r_[np.ones(len(idx), int), np.zeros(len(idx), int)])

    slow = intervals.bootstrap_statistic(statistic, n, n_boot=2000, seed=2)
    assert fast == pytest.approx(tuple(slow), abs=0.01)
    assert fast[0] < auroc(scores, labels) < fast[1]
    assert not len(intervals.bootstrap_auroc([0.1, 0.2], [1, 1], [0, 1]))

"""Bootstrap confidence intervals and tests of "better than chance".

Intervals are percentile bootstraps over items (the unit the benchmarks sample). Tests are one-sided and exact where
possible: a Poisson-binomial test for per-item successes with per-item chance levels (a binomial test when all chances
are equal), Mann-Whitney for AUROC, an exact McNemar test for the choice bias, and exact sampling from the null for
averages of per-test means.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from scipy import stats

from bench.metrics.ranking import worst_case

DEFAULT_BOOT = 1000
DEFAULT_LEVEL = 0.95
DEFAULT_SEED = 0
_BOOT_CHUNK = 200


def _is_binary(values: np.ndarray) -> bool:
    return bool(np.all((values == 0) | (values == 1)))


def _percentiles(samples: np.ndarray, level: float) -> tuple[float, float]:
    samples = samples[~np.isnan(samples)]
    if not len(samples):
        return float("nan"), float("nan")
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(samples, [tail, 100.0 - tail])
    return float(low), float(high)


def bootstrap_means(values: Sequence[float], n_boot: int = DEFAULT_BOOT, seed: int = DEFAULT_SEED) -> np.ndarray:
    """``n_boot`` bootstrap replicates of the mean of ``values``.

    For 0/1 values the replicate sum is drawn as Binomial(n, mean), which is exactly the distribution of the
    resampled sum and far cheaper than resampling indices.
    """
    x = np.asarray(values, dtype=float)
    if not len(x):
        return np.full(n_boot, np.nan)
    rng = np.random.default_rng(seed)
    if _is_binary(x):
        return rng.binomial(len(x), x.mean(), size=n_boot) / len(x)
    out = np.empty(n_boot)
    for start in range(0, n_boot, _BOOT_CHUNK):
        stop = min(start + _BOOT_CHUNK, n_boot)
        idx = rng.integers(0, len(x), size=(stop - start, len(x)))
        out[start:stop] = x[idx].mean(axis=1)
    return out


def bootstrap_ci(values: Sequence[float], n_boot: int = DEFAULT_BOOT, level: float = DEFAULT_LEVEL,
                 seed: int = DEFAULT_SEED) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (NaN, NaN when empty)."""
    return _percentiles(bootstrap_means(values, n_boot, seed), level)


def bootstrap_statistic(statistic: Callable[[np.ndarray], float | np.ndarray], n_units: int,
                        n_boot: int = DEFAULT_BOOT, level: float = DEFAULT_LEVEL, seed: int = DEFAULT_SEED,
                        strata: Sequence | None = None) -> np.ndarray:
    """Percentile intervals of ``statistic(indices)`` over resampled unit indices (a cluster bootstrap).

    ``statistic`` returns one number or a vector of numbers; the result is ``[low, high]`` or one such row per
    entry of the vector. With ``strata`` (one label per unit) units are resampled within each stratum, so that a
    statistic averaging over strata always sees every stratum.
    """
    width = np.size(statistic(np.arange(n_units))) if n_units else 1
    if n_units == 0:
        return np.full((width, 2), np.nan).squeeze()
    rng = np.random.default_rng(seed)
    groups = [np.arange(n_units)]
    if strata is not None:
        labels = np.asarray(strata, dtype=object)
        groups = [np.flatnonzero(labels == s) for s in dict.fromkeys(labels)]
    samples = np.empty((n_boot, width))
    for b in range(n_boot):
        idx = np.concatenate([g[rng.integers(0, len(g), size=len(g))] for g in groups])
        samples[b] = statistic(idx)
    out = np.array([_percentiles(samples[:, j], level) for j in range(width)])
    return out.squeeze(0) if width == 1 else out


def unit_weights(rng: np.random.Generator, units: np.ndarray, n_units: int) -> np.ndarray:
    """One bootstrap replicate as row weights: each row weighs its unit's resampling count."""
    return np.bincount(rng.integers(0, n_units, size=n_units), minlength=n_units)[units].astype(float)


def weighted_auroc(codes: np.ndarray, n_values: int, labels: np.ndarray, weights: np.ndarray) -> float:
    """AUROC with row weights, from scores given as ranks ``codes`` into ``n_values`` sorted distinct values.

    For every positive, the weighted negatives below it count fully and those tied with it by half.
    """
    pos, neg = labels == 1, labels == 0
    w_neg = np.bincount(codes[neg], weights=weights[neg], minlength=n_values)
    total_pos, total_neg = weights[pos].sum(), w_neg.sum()
    if total_pos == 0 or total_neg == 0:
        return float("nan")
    below = np.cumsum(w_neg) - w_neg
    wins = below[codes[pos]] + 0.5 * w_neg[codes[pos]]
    return float(np.sum(weights[pos] * wins) / (total_pos * total_neg))


def bootstrap_auroc(scores: Sequence[float], labels: Sequence[int], units: Sequence[int], n_boot: int = DEFAULT_BOOT,
                    level: float = DEFAULT_LEVEL, seed: int = DEFAULT_SEED) -> tuple[float, float]:
    """Percentile interval of AUROC resampling whole units (an item with its caption and foil scores).

    ``units[i]`` is the unit index (0..n_units-1) of score ``i``; each replicate is :func:`weighted_auroc` with
    :func:`unit_weights`, O(n) on presorted values. NaN scores are worst-case as in
    :func:`bench.metrics.ranking.auroc`.
    """
    y = np.asarray(labels, dtype=int)
    unit = np.asarray(units, dtype=int)
    n_units = int(unit.max()) + 1 if len(unit) else 0
    if n_units == 0 or not (y == 1).any() or not (y == 0).any():
        return float("nan"), float("nan")
    values, codes = np.unique(worst_case(scores, y), return_inverse=True)
    rng = np.random.default_rng(seed)
    samples = np.array([weighted_auroc(codes, len(values), y, unit_weights(rng, unit, n_units))
                        for _ in range(n_boot)])
    return _percentiles(samples, level)


def poisson_binomial_pmf(chances: Sequence[float]) -> np.ndarray:
    """The distribution of the number of successes of independent trials with success probabilities ``chances``.

    Trials sharing a probability are grouped into one binomial, and the few binomials are convolved.
    """
    p = np.asarray(chances, dtype=float)
    if np.any((p < 0) | (p > 1)) or np.any(np.isnan(p)):
        raise ValueError("chance levels must be probabilities in [0, 1]")
    pmf = np.ones(1)
    values, counts = np.unique(np.round(p, 12), return_counts=True)
    for prob, count in zip(values, counts):
        pmf = np.convolve(pmf, stats.binom.pmf(np.arange(count + 1), count, prob))
    return pmf


def poisson_binomial_test(successes: int, chances: Sequence[float]) -> float:
    """One-sided p-value P(X >= successes) for X the number of successes at the per-item ``chances``."""
    pmf = poisson_binomial_pmf(chances)
    if successes <= 0:
        return 1.0
    if successes >= len(pmf):
        return 0.0
    return float(min(1.0, pmf[successes:].sum()))


def binomial_test(successes: int, n: int, chance: float) -> float:
    """One-sided exact binomial p-value P(X >= successes), X ~ Binomial(n, chance)."""
    if n == 0:
        return float("nan")
    return float(stats.binom.sf(successes - 1, n, chance))


def mann_whitney_test(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """One-sided p-value that positives score above negatives (the test behind AUROC > 0.5)."""
    pos, neg = np.asarray(positives, float), np.asarray(negatives, float)
    if not len(pos) or not len(neg):
        return float("nan")
    return float(stats.mannwhitneyu(pos, neg, alternative="greater").pvalue)


def mcnemar_test(first: Sequence[bool], second: Sequence[bool]) -> float:
    """Two-sided exact McNemar p-value for paired successes (``first`` vs ``second`` on the same items)."""
    a, b = np.asarray(first, bool), np.asarray(second, bool)
    only_first, only_second = int(np.sum(a & ~b)), int(np.sum(~a & b))
    discordant = only_first + only_second
    if discordant == 0:
        return 1.0
    return float(stats.binomtest(only_first, discordant, 0.5).pvalue)


def null_test_of_mean_of_means(observed: float, groups: Sequence[Sequence[float]], n_sim: int = 20000,
                               seed: int = DEFAULT_SEED) -> float:
    """One-sided p-value of an average of per-group success rates against per-item chance levels.

    Each group's success count is drawn exactly from its Poisson-binomial null distribution; the p-value is the
    share of simulated averages at or above ``observed`` (with the usual +1 correction).
    """
    groups = [np.asarray(g, float) for g in groups if len(g)]
    if not groups:
        return float("nan")
    rng = np.random.default_rng(seed)
    total = np.zeros(n_sim)
    for chances in groups:
        pmf = poisson_binomial_pmf(chances)
        draws = rng.choice(len(pmf), size=n_sim, p=pmf / pmf.sum())
        total += draws / len(chances)
    simulated = total / len(groups)
    return float((1 + np.sum(simulated >= observed - 1e-12)) / (n_sim + 1))

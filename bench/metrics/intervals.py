"""Confidence intervals and the tests beside them: one method per kind of number, each interval dual to its test.

- Proportions (a share of items right, fractional under the ``expected`` tie policy): the exact Clopper-Pearson
  interval, and the exact one-sided binomial test at the row's chance level. Both are the regularised incomplete beta
  function, ``P(X >= k) = I_p(k, n - k + 1)``, so a result is significant exactly when chance lies below the
  interval's lower bound (for a fractional count ``k`` the same formulas give the continuous extension). Items with
  different chance levels (ViLMA's 1/2 and 1/3) are tested at the mean chance, which is conservative (Hoeffding 1956:
  a Poisson-binomial count is less dispersed than the binomial of the same mean).
- Averages of per-group proportions (ViLMA "Avg.", VELOCITI "Avg"): the MOVER interval (Zou & Donner 2008) built
  from each group's Clopper-Pearson limits; the p-value is the one-sided level at which its lower limit meets chance.
- AUROC, mAP, and other statistics with no closed form: the percentile bootstrap over items; the p-value is the share
  of replicates at or below chance, and the limits are empirical quantiles (``inverted_cdf``), so again a result is
  significant exactly when chance lies below the lower limit.
- A paired difference of proportions (VELOCITI's choice bias): the exact McNemar test, two-sided, with the interval
  it inverts (Clopper-Pearson on the discordant pairs, scaled to the difference).

Significance is one-sided at ``(1 - level) / 2`` for "better than chance" (the interval's one-sided counterpart) and
two-sided at ``1 - level`` for the bias; :func:`holm` corrects a family of tests (many subsets at once). The metric
tables test a tie at no more than a fair coin's share while their interval is the value's
(:func:`bench.metrics.aggregate.tested`): where a tie rule gives a tie more, the star can be absent with chance below
the interval, never the other way.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
from scipy import optimize, stats

from bench.metrics.ranking import worst_case

DEFAULT_BOOT = 1000
DEFAULT_LEVEL = 0.95
DEFAULT_SEED = 0
_BOOT_CHUNK = 200


def one_sided_alpha(level: float) -> float:
    """The one-sided significance level matching a two-sided interval at ``level``."""
    return (1.0 - level) / 2.0


def clopper_pearson(successes: float, n: int, level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """The exact interval of a proportion ``successes / n`` (NaN, NaN when ``n`` is 0); fractional counts allowed."""
    if n <= 0:
        return float("nan"), float("nan")
    k = float(min(max(successes, 0.0), n))
    tail = one_sided_alpha(level)
    low = 0.0 if k <= 0 else float(stats.beta.ppf(tail, k, n - k + 1))
    high = 1.0 if k >= n else float(stats.beta.ppf(1.0 - tail, k + 1, n - k))
    return low, high


def binomial_p_value(successes: float, n: int, chance: float) -> float:
    """One-sided exact ``P(X >= successes)`` for ``X ~ Binomial(n, chance)`` (the beta form, for fractional counts
    too); NaN when ``n`` is 0 or chance is undefined."""
    if n <= 0 or not 0.0 <= chance <= 1.0:
        return float("nan")
    k = float(min(max(successes, 0.0), n))
    if k <= 0:
        return 1.0
    return float(stats.beta.cdf(chance, k, n - k + 1))


def bootstrap_means(values: Sequence[float], n_boot: int = DEFAULT_BOOT, seed: int = DEFAULT_SEED) -> np.ndarray:
    """``n_boot`` bootstrap replicates of the mean of ``values``.

    For 0/1 values the replicate sum is drawn as Binomial(n, mean), which is exactly the distribution of the
    resampled sum and far cheaper than resampling indices.
    """
    x = np.asarray(values, dtype=float)
    if not len(x):
        return np.full(n_boot, np.nan)
    rng = np.random.default_rng(seed)
    if np.all((x == 0) | (x == 1)):
        return rng.binomial(len(x), x.mean(), size=n_boot) / len(x)
    out = np.empty(n_boot)
    for start in range(0, n_boot, _BOOT_CHUNK):
        stop = min(start + _BOOT_CHUNK, n_boot)
        idx = rng.integers(0, len(x), size=(stop - start, len(x)))
        out[start:stop] = x[idx].mean(axis=1)
    return out


def bootstrap_interval(samples: np.ndarray, level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """Percentile limits of bootstrap replicates: the smallest replicate whose empirical share reaches the tail
    (``inverted_cdf`` quantiles, computed with the same division as :func:`bootstrap_p_value`; NaN ignored)."""
    samples = np.asarray(samples, dtype=float)
    samples = samples[~np.isnan(samples)]
    if not len(samples):
        return float("nan"), float("nan")
    tail = one_sided_alpha(level)
    ordered = np.sort(samples)
    shares = np.arange(1, len(ordered) + 1) / len(ordered)
    low = ordered[int(np.searchsorted(shares, tail, side="left"))]
    high = ordered[min(len(ordered) - 1, int(np.searchsorted(shares, 1.0 - tail, side="left")))]
    return float(low), float(high)


def bootstrap_p_value(samples: np.ndarray, chance: float) -> float:
    """The share of bootstrap replicates at or below ``chance``: below ``(1 - level) / 2`` exactly when chance lies
    below :func:`bootstrap_interval`'s lower limit."""
    samples = np.asarray(samples, dtype=float)
    samples = samples[~np.isnan(samples)]
    if not len(samples) or np.isnan(chance):
        return float("nan")
    return float(np.mean(samples <= chance))


def bootstrap_ci(values: Sequence[float], n_boot: int = DEFAULT_BOOT, level: float = DEFAULT_LEVEL,
                 seed: int = DEFAULT_SEED) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (NaN, NaN when empty)."""
    return bootstrap_interval(bootstrap_means(values, n_boot, seed), level)


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
    out = np.array([bootstrap_interval(samples[:, j], level) for j in range(width)])
    return out.squeeze(0) if width == 1 else out


def unit_weights(rng: np.random.Generator, units: np.ndarray, n_units: int) -> np.ndarray:
    """One bootstrap replicate as row weights: each row weighs its unit's resampling count."""
    return np.bincount(rng.integers(0, n_units, size=n_units), minlength=n_units)[units].astype(float)


def weighted_auroc(codes: np.ndarray, n_values: int, labels: np.ndarray, weights: np.ndarray,
                   tie_credit: float = 0.5) -> float:
    """AUROC with row weights, from scores given as ranks ``codes`` into ``n_values`` sorted distinct values.

    For every positive, the weighted negatives below it count fully and those tied with it by ``tie_credit``.
    """
    pos, neg = labels == 1, labels == 0
    w_neg = np.bincount(codes[neg], weights=weights[neg], minlength=n_values)
    total_pos, total_neg = weights[pos].sum(), w_neg.sum()
    if total_pos == 0 or total_neg == 0:
        return float("nan")
    below = np.cumsum(w_neg) - w_neg
    wins = below[codes[pos]] + tie_credit * w_neg[codes[pos]]
    return float(np.sum(weights[pos] * wins) / (total_pos * total_neg))


def bootstrap_auroc(scores: Sequence[float], labels: Sequence[int], units: Sequence[int], n_boot: int = DEFAULT_BOOT,
                    seed: int = DEFAULT_SEED, tie_credit: float = 0.5) -> np.ndarray:
    """Bootstrap replicates of AUROC resampling whole units (an item with its caption and foil scores).

    ``units[i]`` is the unit index (0..n_units-1) of score ``i``; each replicate is :func:`weighted_auroc` with
    :func:`unit_weights`, O(n) on presorted values. NaN scores are worst-case as in
    :func:`bench.metrics.ranking.auroc`; an empty array when a class is absent.
    """
    y = np.asarray(labels, dtype=int)
    unit = np.asarray(units, dtype=int)
    n_units = int(unit.max()) + 1 if len(unit) else 0
    if n_units == 0 or not (y == 1).any() or not (y == 0).any():
        return np.empty(0)
    values, codes = np.unique(worst_case(scores, y), return_inverse=True)
    rng = np.random.default_rng(seed)
    return np.array([weighted_auroc(codes, len(values), y, unit_weights(rng, unit, n_units), tie_credit)
                     for _ in range(n_boot)])


def mover_interval(groups: Sequence[tuple[float, int]], level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """The MOVER interval of the mean of group proportions ``successes / n`` from their Clopper-Pearson limits."""
    groups = [(k, n) for k, n in groups if n > 0]
    if not groups:
        return float("nan"), float("nan")
    rates = np.array([k / n for k, n in groups])
    limits = np.array([clopper_pearson(k, n, level) for k, n in groups])
    g = len(groups)
    low = rates.mean() - np.sqrt(np.sum((rates - limits[:, 0]) ** 2)) / g
    high = rates.mean() + np.sqrt(np.sum((limits[:, 1] - rates) ** 2)) / g
    return float(max(0.0, low)), float(min(1.0, high))


def mover_p_value(groups: Sequence[tuple[float, int]], chance: float) -> float:
    """The one-sided level at which :func:`mover_interval`'s lower limit equals ``chance`` (NaN when that level
    would exceed 1/2, i.e. the estimate is at or below chance)."""
    groups = [(k, n) for k, n in groups if n > 0]
    if not groups or np.isnan(chance):
        return float("nan")

    def gap(tail: float) -> float:
        return mover_interval(groups, 1.0 - 2.0 * tail)[0] - chance

    low, high = 1e-15, 0.5
    if gap(high) <= 0:
        return float("nan")
    if gap(low) > 0:
        return 0.0
    return float(optimize.brentq(gap, low, high, xtol=1e-12))


def mcnemar_test(first: Sequence[bool], second: Sequence[bool]) -> float:
    """Two-sided exact McNemar p-value for paired successes (``first`` vs ``second`` on the same items): twice the
    smaller one-sided binomial tail on the discordant pairs, capped at 1 (the test :func:`mcnemar_interval`
    inverts)."""
    a, b = np.asarray(first, bool), np.asarray(second, bool)
    only_first, discordant = int(np.sum(a & ~b)), int(np.sum(a != b))
    if discordant == 0:
        return 1.0
    tails = stats.binom.sf(only_first - 1, discordant, 0.5), stats.binom.cdf(only_first, discordant, 0.5)
    return float(min(1.0, 2.0 * min(tails)))


def mcnemar_interval(first: Sequence[bool], second: Sequence[bool],
                     level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """Interval of mean(first) - mean(second) conditional on the discordant pairs (Clopper-Pearson on the share of
    them won by ``first``, scaled by their share of items); with no discordant pair, +/- the Clopper-Pearson upper
    limit of that share (0 of n)."""
    a, b = np.asarray(first, bool), np.asarray(second, bool)
    n = len(a)
    if n == 0:
        return float("nan"), float("nan")
    only_first, discordant = int(np.sum(a & ~b)), int(np.sum(a != b))
    if discordant == 0:
        bound = clopper_pearson(0, n, level)[1]
        return -bound, bound
    low, high = clopper_pearson(only_first, discordant, level)
    scale = discordant / n
    return scale * (2 * low - 1), scale * (2 * high - 1)


def holm(p_values: Sequence[float]) -> np.ndarray:
    """Holm's step-down adjusted p-values (NaN entries stay NaN and do not count in the family)."""
    p = np.asarray(p_values, dtype=float)
    out = np.full(len(p), np.nan)
    finite = np.flatnonzero(~np.isnan(p))
    if not len(finite):
        return out
    order = finite[np.argsort(p[finite], kind="stable")]
    m = len(order)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out

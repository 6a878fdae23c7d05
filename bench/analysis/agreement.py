"""Two runs judged on the same items: how often they agree, how far beyond chance (Cohen's kappa), and whether their
accuracies differ under the paired test (McNemar's exact test).

Kappa's interval is the Wald interval ``kappa +/- z * SE`` with the large-sample standard error of Fleiss, Cohen and
Everitt (1969, "Large sample standard errors of kappa and weighted kappa", Psychological Bulletin 72(5), eq. 13),
clipped to [-1, 1]. McNemar's test is the exact two-sided binomial test on the discordant items
(:func:`bench.metrics.intervals.mcnemar_test`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats

from bench.metrics.intervals import DEFAULT_LEVEL, mcnemar_test

KAPPA_INTERVAL = "Wald, large-sample SE of Fleiss, Cohen & Everitt (1969)"


@dataclass(frozen=True)
class Paired:
    """Two runs' successes on the same ``n`` items: ``both`` right, ``only_a``, ``only_b``, ``neither``."""

    both: int
    only_a: int
    only_b: int
    neither: int

    @classmethod
    def of(cls, a: Sequence[bool], b: Sequence[bool]) -> Paired:
        """The 2 x 2 table of two aligned success vectors."""
        x, y = np.asarray(a, bool), np.asarray(b, bool)
        if x.shape != y.shape:
            raise ValueError(f"paired successes must align, got {x.shape} and {y.shape}")
        return cls(int(np.sum(x & y)), int(np.sum(x & ~y)), int(np.sum(~x & y)), int(np.sum(~x & ~y)))

    @property
    def n(self) -> int:
        """The items."""
        return self.both + self.only_a + self.only_b + self.neither

    @property
    def agreement(self) -> float:
        """The share of items on which both are right or both wrong (NaN with no item)."""
        return (self.both + self.neither) / self.n if self.n else math.nan


def cohen_kappa(table: Paired) -> tuple[float, float]:
    """``(kappa, standard error)`` of two runs' right/wrong judgements; NaN, NaN when undefined (no item, or both runs
    constant and alike so that chance agreement is 1).

    ``kappa = (p_o - p_e) / (1 - p_e)`` with ``p_e = p_a p_b + (1 - p_a)(1 - p_b)``; the variance is Fleiss, Cohen and
    Everitt's: ``[sum_i p_ii (1 - (p_i. + p_.i)(1 - k))^2 + (1 - k)^2 sum_{i != j} p_ij (p_.i + p_j.)^2
    - (k - p_e (1 - k))^2] / (n (1 - p_e)^2)``.
    """
    n = table.n
    if n == 0:
        return math.nan, math.nan
    p = np.array([[table.both, table.only_a], [table.only_b, table.neither]], float) / n  # rows: a, columns: b
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    p_o = float(np.trace(p))
    p_e = float(rows @ cols)
    if p_e >= 1.0:
        return math.nan, math.nan
    k = (p_o - p_e) / (1.0 - p_e)
    diagonal = sum(p[i, i] * (1.0 - (rows[i] + cols[i]) * (1.0 - k)) ** 2 for i in range(2))
    off = sum(p[i, j] * (cols[i] + rows[j]) ** 2 for i in range(2) for j in range(2) if i != j)
    variance = (diagonal + (1.0 - k) ** 2 * off - (k - p_e * (1.0 - k)) ** 2) / (n * (1.0 - p_e) ** 2)
    return float(k), float(math.sqrt(max(variance, 0.0)))


def kappa_interval(kappa: float, se: float, level: float = DEFAULT_LEVEL) -> tuple[float, float]:
    """The Wald interval of kappa at ``level``, clipped to [-1, 1] (NaN when kappa is)."""
    if math.isnan(kappa) or math.isnan(se):
        return math.nan, math.nan
    z = float(stats.norm.ppf(0.5 + level / 2.0))
    return max(-1.0, kappa - z * se), min(1.0, kappa + z * se)


def compare_pair(a: Sequence[bool], b: Sequence[bool], level: float = DEFAULT_LEVEL) -> dict:
    """Agreement, kappa with its interval, both accuracies and the exact McNemar p-value of two aligned success
    vectors: keys ``n``, ``both``, ``only_a``, ``only_b``, ``neither``, ``accuracy_a``, ``accuracy_b``, ``agreement``,
    ``kappa``, ``kappa_se``, ``kappa_ci`` (a pair), ``mcnemar_p``."""
    table = Paired.of(a, b)
    kappa, se = cohen_kappa(table)
    n = table.n
    return {"n": n, "both": table.both, "only_a": table.only_a, "only_b": table.only_b, "neither": table.neither,
            "accuracy_a": (table.both + table.only_a) / n if n else math.nan,
            "accuracy_b": (table.both + table.only_b) / n if n else math.nan,
            "agreement": table.agreement, "kappa": kappa, "kappa_se": se, "kappa_ci": kappa_interval(kappa, se, level),
            "mcnemar_p": mcnemar_test(a, b) if n else math.nan}

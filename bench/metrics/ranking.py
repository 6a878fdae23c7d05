"""Rank-based building blocks: AUROC, average precision, hit@k and a target's rank, each with a tie rule.

A NaN score is a failure: it is replaced by the worst value for its role (a positive by -inf, a negative by +inf)
before ranking. Ties follow a rule of :mod:`bench.metrics.ties`: ``strict`` ranks a positive after the negatives it
ties with, ``optimistic`` before them, ``first`` by position (a lower index ranks higher, a stable sort), and
``expected`` averages over every order of the tied candidates, exactly (no sampling). A metric may also be given an
explicit ranking ``order`` (best first), which is how a benchmark reproduces its released code's own order.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np


def worst_case(scores: Sequence[float], labels: Sequence[int]) -> np.ndarray:
    """``scores`` with NaN replaced by -inf where the label is 1 and +inf where it is 0."""
    s = np.asarray(scores, dtype=float).copy()
    y = np.asarray(labels, dtype=int)
    bad = np.isnan(s)
    s[bad & (y == 1)] = -np.inf
    s[bad & (y == 0)] = np.inf
    return s


def auroc(scores: Sequence[float], labels: Sequence[int], rule: str = "expected") -> float:
    """Area under the ROC curve (NaN when one class is absent); NaN scores are made worst-case first.

    A tied (positive, negative) pair counts 1/2 under ``expected`` (the trapezoidal AUC of
    ``sklearn.metrics.roc_auc_score`` and torchmetrics, which is also the average over random tie orders) and 0 under
    ``strict``.
    """
    s = worst_case(scores, labels)
    y = np.asarray(labels, dtype=int)
    n_pos, n_neg = int((y == 1).sum()), int((y == 0).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    values, codes = np.unique(s, return_inverse=True)
    neg = np.bincount(codes[y == 0], minlength=len(values)).astype(float)
    below = np.cumsum(neg) - neg
    credit = tie_credit(rule)
    return float(np.sum(below[codes[y == 1]] + credit * neg[codes[y == 1]]) / (n_pos * n_neg))


def tie_credit(rule: str) -> float:
    """The credit of one tied (positive, negative) pair under ``rule``."""
    return {"strict": 0.0, "expected": 0.5, "optimistic": 1.0}[rule]


def ranking(scores: Sequence[float], labels: Sequence[int], rule: str) -> np.ndarray:
    """Candidate indices best first, ties ordered by ``rule`` (``strict``, ``optimistic`` or ``first``)."""
    s = worst_case(scores, labels)
    y = np.asarray(labels, dtype=int)
    if rule == "strict":
        return np.lexsort((y, -s))
    if rule == "optimistic":
        return np.lexsort((-y, -s))
    if rule == "first":
        return np.argsort(-s, kind="stable")
    raise ValueError(f"no single ranking for tie rule {rule!r}")


def _groups(scores: Sequence[float], labels: Sequence[int]) -> list[tuple[int, int]]:
    """(candidates, positives) per distinct score, best first."""
    s = worst_case(scores, labels)
    y = np.asarray(labels, dtype=int)
    values, codes = np.unique(-s, return_inverse=True)
    sizes = np.bincount(codes, minlength=len(values))
    positives = np.bincount(codes, weights=y, minlength=len(values)).astype(int)
    return list(zip(sizes.tolist(), positives.tolist()))


def _ap_of_order(labels: np.ndarray, order: np.ndarray) -> float:
    hits = labels[order] == 1
    ranks = np.flatnonzero(hits) + 1
    return float(np.mean(np.arange(1, len(ranks) + 1) / ranks))


def expected_ap(scores: Sequence[float], labels: Sequence[int]) -> float:
    """Average precision averaged over every order of tied candidates, exactly.

    In a group of ``n`` tied candidates holding ``r`` positives, after ``before`` candidates of which ``hits`` are
    positive, the ``j``-th positive of the group sits at group position ``p`` with probability
    ``C(p-1, j-1) C(n-p, r-j) / C(n, r)`` and contributes precision ``(hits + j) / (before + p)``.
    """
    y = np.asarray(labels, dtype=int)
    total_pos = int(y.sum())
    if not total_pos:
        return float("nan")
    before = hits = 0
    total = 0.0
    for n, r in _groups(scores, labels):
        if r:
            ways = math.comb(n, r)
            for j in range(1, r + 1):
                for p in range(j, n - r + j + 1):
                    weight = math.comb(p - 1, j - 1) * math.comb(n - p, r - j) / ways
                    total += weight * (hits + j) / (before + p)
        before += n
        hits += r
    return total / total_pos


def average_precision(scores: Sequence[float], labels: Sequence[int], rule: str = "strict",
                      order: Sequence[int] | None = None) -> float:
    """Mean of the precision at each positive's rank (VideoCon ``src/calc_ssv2.py``); NaN without positives.

    ``order`` (indices, best first) fixes the ranking; otherwise ties follow ``rule``.
    """
    y = np.asarray(labels, dtype=int)
    if not y.any():
        return float("nan")
    if order is not None:
        return _ap_of_order(y, np.asarray(order, dtype=int))
    if rule == "expected":
        return expected_ap(scores, y)
    return _ap_of_order(y, ranking(scores, y, rule))


def expected_hit_at_k(scores: Sequence[float], labels: Sequence[int], k: int) -> float:
    """P(some positive ranks within the top ``k``) over random orders of tied candidates, exactly."""
    before = 0
    for n, r in _groups(scores, labels):
        if before >= k:
            return 0.0
        slots = k - before
        if n <= slots:
            if r:
                return 1.0
            before += n
            continue
        return 1.0 - math.comb(n - r, slots) / math.comb(n, slots) if r else 0.0
    return 0.0


def hit_at_k(scores: Sequence[float], labels: Sequence[int], k: int, rule: str = "strict",
             order: Sequence[int] | None = None) -> float:
    """Whether a positive ranks within the top ``k`` (VideoCon R@k): 1.0 or 0.0, or a probability under
    ``expected``. ``order`` (indices, best first) fixes the ranking; otherwise ties follow ``rule``."""
    y = np.asarray(labels, dtype=int)
    if order is not None:
        return float((y[np.asarray(order, dtype=int)][:k] == 1).any())
    if rule == "expected":
        return expected_hit_at_k(scores, y, k)
    return float((y[ranking(scores, y, rule)][:k] == 1).any())


def rank_within(scores: Sequence[float], target: int, k: int, rule: str = "strict") -> float:
    """Whether ``scores[target]`` ranks within the top ``k`` of all candidates: 1.0 / 0.0, or a probability.

    NaN competitors rank above the target and a NaN target ranks last (both failures). Among candidates tied with
    the target, ``strict`` ranks it last, ``optimistic`` first, ``first`` by position, ``expected`` uniformly.
    """
    s = np.asarray(scores, dtype=float)
    if np.isnan(s[target]):
        return 0.0
    others = np.delete(np.arange(len(s)), target)
    above = int(np.sum((s[others] > s[target]) | np.isnan(s[others])))
    tied = others[s[others] == s[target]]
    if rule == "strict":
        return float(above + len(tied) + 1 <= k)
    if rule == "optimistic":
        return float(above + 1 <= k)
    if rule == "first":
        return float(above + int(np.sum(tied < target)) + 1 <= k)
    if rule == "expected":
        return float(min(1.0, max(0.0, (k - above) / (len(tied) + 1))))
    raise ValueError(f"unknown tie rule {rule!r}")

"""Rank-based building blocks: AUROC, average precision, hit@k and a target's rank, all pessimistic about NaN.

A NaN score is a failure: it is replaced by the worst value for its role (a positive by -inf, a negative by +inf)
before ranking. Ties are failures for ranks (a target shares its place with the worst of its ties); AUROC keeps the
usual half credit for ties, as ``sklearn.metrics.roc_auc_score`` does in the official VideoCon and ViLMA evaluations.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy import stats


def worst_case(scores: Sequence[float], labels: Sequence[int]) -> np.ndarray:
    """``scores`` with NaN replaced by -inf where the label is 1 and +inf where it is 0."""
    s = np.asarray(scores, dtype=float).copy()
    y = np.asarray(labels, dtype=int)
    bad = np.isnan(s)
    s[bad & (y == 1)] = -np.inf
    s[bad & (y == 0)] = np.inf
    return s


def auroc(scores: Sequence[float], labels: Sequence[int]) -> float:
    """Area under the ROC curve of ``scores`` for binary ``labels`` (Mann-Whitney form; NaN when one class is absent).

    NaN scores are made worst-case first (:func:`worst_case`).
    """
    s = worst_case(scores, labels)
    y = np.asarray(labels, dtype=int)
    n_pos, n_neg = int((y == 1).sum()), int((y == 0).sum())
    if n_pos == 0 or n_neg == 0:
        return float("nan")
    ranks = stats.rankdata(s)
    return float((ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def pessimistic_order(scores: Sequence[float], labels: Sequence[int]) -> np.ndarray:
    """Candidate indices best first; among equal scores the negatives come first (ties are failures)."""
    s = worst_case(scores, labels)
    y = np.asarray(labels, dtype=int)
    return np.lexsort((y, -s))


def average_precision(scores: Sequence[float], labels: Sequence[int]) -> float:
    """Mean of the precision at each positive's rank (VideoCon ``src/calc_ssv2.py``), ties ranked pessimistically."""
    y = np.asarray(labels, dtype=int)
    if not y.any():
        return float("nan")
    hits = y[pessimistic_order(scores, y)] == 1
    ranks = np.flatnonzero(hits) + 1
    return float(np.mean(np.arange(1, len(ranks) + 1) / ranks))


def hit_at_k(scores: Sequence[float], labels: Sequence[int], k: int) -> bool:
    """Whether any positive ranks within the top ``k`` (VideoCon R@k), ties ranked pessimistically."""
    y = np.asarray(labels, dtype=int)
    return bool((y[pessimistic_order(scores, y)][:k] == 1).any())


def target_rank(scores: Sequence[float], target: int) -> int:
    """The 1-based rank of ``scores[target]``: 1 + the number of other candidates scoring at least as high.

    A NaN target ranks last; NaN competitors rank above it (both are failures).
    """
    s = np.asarray(scores, dtype=float)
    if np.isnan(s[target]):
        return len(s)
    others = np.delete(s, target)
    return 1 + int(np.sum((others >= s[target]) | np.isnan(others)))

"""AUROC, average precision, hit@k and ranks: hand-computed cases of every tie rule, and ``expected`` checked against
an enumeration of every order of the tied candidates."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from bench.metrics.ranking import auroc, average_precision, hit_at_k, rank_within, ranking, worst_case

TOP_TIE = ([0.5, 0.5, 0.1], [1, 0, 0])             # the positive ties a negative at the top
ACROSS = ([0.4, 0.4, 0.4, 0.4, 0.9], [1, 1, 0, 0, 0])  # two positives tie two negatives below a negative


def test_auroc_matches_sklearn_with_ties_and_strict_gives_ties_nothing():
    scores = [0.9, 0.4, 0.4, 0.2, 0.4, 0.8]
    labels = [1, 1, 0, 0, 1, 0]
    assert auroc(scores, labels) == pytest.approx(roc_auc_score(labels, scores))
    # 3 positives x 3 negatives: 0.9 beats all (3), each 0.4 ties one and beats one (1.5 twice) -> 6 / 9
    assert auroc(scores, labels, "expected") == pytest.approx(6 / 9)
    assert auroc(scores, labels, "strict") == pytest.approx(5 / 9)
    assert auroc(*TOP_TIE, "strict") == pytest.approx(1 / 2)
    assert auroc(*TOP_TIE, "expected") == pytest.approx(3 / 4)
    assert auroc(*ACROSS, "strict") == 0.0
    assert auroc(*ACROSS, "expected") == pytest.approx(1 / 3)


def test_auroc_nan_is_worst_case_and_single_class_is_nan():
    assert auroc([np.nan, 0.1], [1, 0]) == 0.0
    assert auroc([0.9, np.nan], [1, 0]) == 0.0
    assert worst_case([np.nan, np.nan], [1, 0]).tolist() == [-np.inf, np.inf]
    assert math.isnan(auroc([0.3, 0.4], [1, 1]))
    assert math.isnan(auroc([0.3, 0.4], [0, 0]))


def test_average_precision_every_rule_by_hand():
    assert average_precision([0.9, 0.5, 0.4], [1, 0, 1]) == pytest.approx((1 + 2 / 3) / 2)
    # ties at the top: strict puts the negative first (precision 1/2), first/optimistic the positive (index 0)
    assert average_precision(*TOP_TIE, "strict") == pytest.approx(0.5)
    assert average_precision(*TOP_TIE, "optimistic") == 1.0
    assert average_precision(*TOP_TIE, "first") == 1.0
    assert average_precision(*TOP_TIE, "expected") == pytest.approx(0.75)
    # ties across positives and negatives: positives at ranks {4, 5} (strict), {2, 3} (optimistic, first), and the
    # six placements of two positives among ranks 2..5 on average: (7/12 + 1/2 + 9/20 + 5/12 + 11/30 + 13/40) / 6
    assert average_precision(*ACROSS, "strict") == pytest.approx((1 / 4 + 2 / 5) / 2)
    assert average_precision(*ACROSS, "optimistic") == pytest.approx(7 / 12)
    assert average_precision(*ACROSS, "first") == pytest.approx(7 / 12)
    assert average_precision(*ACROSS, "expected") == pytest.approx(317 / 720)
    assert average_precision(*ACROSS, order=[4, 2, 0, 3, 1]) == pytest.approx((1 / 3 + 2 / 5) / 2)
    assert ranking([0.5, 0.5, 0.7], [1, 0, 0], "strict").tolist() == [2, 1, 0]
    assert math.isnan(average_precision([0.1, 0.2], [0, 0]))
    assert average_precision([np.nan, 0.1, 0.2], [1, 0, 0]) == pytest.approx(1 / 3)


def test_hit_at_k_every_rule_by_hand():
    scores, labels = [0.1, 0.9, 0.5, 0.7], [1, 0, 0, 0]
    assert hit_at_k(scores, labels, 3) == 0.0 and hit_at_k(scores, labels, 4) == 1.0
    assert hit_at_k(*TOP_TIE, 1, "strict") == 0.0
    assert hit_at_k(*TOP_TIE, 1, "first") == 1.0
    assert hit_at_k(*TOP_TIE, 1, "expected") == pytest.approx(0.5)
    assert hit_at_k(*TOP_TIE, 2, "strict") == 1.0
    assert hit_at_k(*ACROSS, 2, "strict") == 0.0
    assert hit_at_k(*ACROSS, 2, "optimistic") == 1.0
    assert hit_at_k(*ACROSS, 2, "expected") == pytest.approx(1 - 2 / 4)  # one slot among 4 tied, 2 of them true
    assert hit_at_k(*ACROSS, 3, "expected") == pytest.approx(1 - 1 / 6)  # two slots: miss only with both negatives
    assert hit_at_k(*ACROSS, 1, "expected") == 0.0
    assert hit_at_k(*ACROSS, 2, order=[4, 0, 1, 2, 3]) == 1.0


def test_rank_within_every_rule_by_hand():
    scores = [0.9, 0.9, 0.9, 0.1]
    assert rank_within(scores, 1, 2, "strict") == 0.0       # ranks after both ties: 3rd
    assert rank_within(scores, 1, 2, "optimistic") == 1.0   # 1st
    assert rank_within(scores, 1, 2, "first") == 1.0        # after index 0 only: 2nd
    assert rank_within(scores, 1, 2, "expected") == pytest.approx(2 / 3)
    assert rank_within([0.2, 0.9, 0.1], 1, 1, "strict") == 1.0
    assert rank_within([np.nan, 0.9, 0.1], 1, 1, "optimistic") == 0.0  # a NaN competitor ranks above
    assert rank_within([0.3, np.nan, 0.1], 1, 3, "expected") == 0.0     # a NaN target ranks last


def _every_tie_order(scores, labels, metric):
    """The mean of ``metric(order)`` over every order of the tied candidates (distinct scores keep their order)."""
    s = worst_case(scores, labels)
    groups = [list(np.flatnonzero(s == v)) for v in sorted(set(s.tolist()), reverse=True)]
    values = [metric(np.array([i for g in perms for i in g]))
              for perms in itertools.product(*[list(itertools.permutations(g)) for g in groups])]
    return float(np.mean(values))


@pytest.mark.parametrize("seed", range(12))
def test_expected_rules_equal_the_average_over_tie_orders(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 8))
    labels = rng.integers(0, 2, size=n)
    labels[rng.integers(0, n)] = 1
    scores = rng.integers(0, 3, size=n).astype(float)
    for k in (1, 2, 3):
        assert hit_at_k(scores, labels, k, "expected") == pytest.approx(
            _every_tie_order(scores, labels, lambda o: hit_at_k(scores, labels, k, order=o)))
    assert average_precision(scores, labels, "expected") == pytest.approx(
        _every_tie_order(scores, labels, lambda o: average_precision(scores, labels, order=o)))
    target = int(np.flatnonzero(labels)[0])
    assert rank_within(scores, target, 2, "expected") == pytest.approx(
        _every_tie_order(scores, labels, lambda o: float(list(o).index(target) < 2)))

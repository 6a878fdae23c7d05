"""AUROC, average precision, hit@k and ranks: hand-computed cases with ties and NaN."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from bench.metrics.ranking import auroc, average_precision, hit_at_k, pessimistic_order, target_rank, worst_case


def test_auroc_matches_sklearn_with_ties():
    scores = [0.9, 0.4, 0.4, 0.2, 0.4, 0.8]
    labels = [1, 1, 0, 0, 1, 0]
    assert auroc(scores, labels) == pytest.approx(roc_auc_score(labels, scores))
    # 3 positives x 3 negatives: 0.9 beats all (3), 0.4 ties one and beats one (1.5) twice -> 6 / 9
    assert auroc(scores, labels) == pytest.approx(6 / 9)


def test_auroc_nan_is_worst_case_and_single_class_is_nan():
    assert auroc([np.nan, 0.1], [1, 0]) == 0.0
    assert auroc([0.9, np.nan], [1, 0]) == 0.0
    assert worst_case([np.nan, np.nan], [1, 0]).tolist() == [-np.inf, np.inf]
    assert math.isnan(auroc([0.3, 0.4], [1, 1]))
    assert math.isnan(auroc([0.3, 0.4], [0, 0]))


def test_average_precision_by_hand_and_pessimistic_ties():
    # ranking: pos, neg, pos -> precisions 1/1 and 2/3
    assert average_precision([0.9, 0.5, 0.4], [1, 0, 1]) == pytest.approx((1 + 2 / 3) / 2)
    # a tie between the positive and a negative puts the negative first: precision 1/2
    assert average_precision([0.5, 0.5], [1, 0]) == pytest.approx(0.5)
    assert pessimistic_order([0.5, 0.5, 0.7], [1, 0, 0]).tolist() == [2, 1, 0]
    assert math.isnan(average_precision([0.1, 0.2], [0, 0]))
    assert average_precision([np.nan, 0.1, 0.2], [1, 0, 0]) == pytest.approx(1 / 3)


def test_hit_at_k():
    scores, labels = [0.1, 0.9, 0.5, 0.7], [1, 0, 0, 0]
    assert not hit_at_k(scores, labels, 3)
    assert hit_at_k(scores, labels, 4)
    assert not hit_at_k([0.5, 0.5], [1, 0], 1)  # tie: failure
    assert hit_at_k([0.5, 0.5], [1, 0], 2)


def test_target_rank_ties_and_nan():
    assert target_rank([0.2, 0.9, 0.1], 1) == 1
    assert target_rank([0.9, 0.9, 0.1], 1) == 2  # tie ranks the target below
    assert target_rank([np.nan, 0.9, 0.1], 1) == 2  # a NaN competitor ranks above
    assert target_rank([0.3, np.nan, 0.1], 1) == 3  # a NaN target ranks last

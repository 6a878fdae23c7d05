"""Kappa, its interval, McNemar's exact test and Holm's correction against cases computed by hand."""

from __future__ import annotations

import math

import pytest

from bench.analysis.agreement import Paired, cohen_kappa, compare_pair, kappa_interval
from bench.metrics.intervals import holm, mcnemar_test


def _vectors(both: int, only_a: int, only_b: int, neither: int) -> tuple[list[bool], list[bool]]:
    a = [True] * both + [True] * only_a + [False] * only_b + [False] * neither
    b = [True] * both + [False] * only_a + [True] * only_b + [False] * neither
    return a, b


def test_kappa_and_its_standard_error_match_the_hand_computed_case():
    # 100 items: both right 40, only a 10, only b 20, both wrong 30.
    # p_o = 0.70; a right 0.5, b right 0.6; p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; kappa = 0.2 / 0.5 = 0.4.
    # Fleiss-Cohen-Everitt: diagonal 0.40 (1 - 1.1 * 0.6)^2 + 0.30 (1 - 0.9 * 0.6)^2 = 0.04624 + 0.06348 = 0.10972;
    # off-diagonal 0.36 * (0.10 * 1.1^2 + 0.20 * 0.9^2) = 0.36 * 0.283 = 0.10188; minus (0.4 - 0.5 * 0.6)^2 = 0.01;
    # variance 0.2016 / (100 * 0.25) = 0.008064; SE 0.0898.
    kappa, se = cohen_kappa(Paired.of(*_vectors(40, 10, 20, 30)))
    assert kappa == pytest.approx(0.4)
    assert se == pytest.approx(math.sqrt(0.008064))
    low, high = kappa_interval(kappa, se, 0.95)
    assert low == pytest.approx(0.4 - 1.959964 * 0.0898, abs=1e-4)
    assert high == pytest.approx(0.4 + 1.959964 * 0.0898, abs=1e-4)


def test_perfect_agreement_has_kappa_one_and_no_spread():
    kappa, se = cohen_kappa(Paired.of(*_vectors(30, 0, 0, 20)))
    assert kappa == pytest.approx(1.0) and se == pytest.approx(0.0)
    assert kappa_interval(kappa, se) == (pytest.approx(1.0), pytest.approx(1.0))


def test_kappa_is_undefined_when_both_runs_are_always_right():
    assert all(math.isnan(x) for x in cohen_kappa(Paired.of(*_vectors(12, 0, 0, 0))))


def test_mcnemar_exact_test_matches_the_binomial_by_hand():
    # 1 item only a gets right, 7 only b: 2 * P(X <= 1 | 8, 1/2) = 2 * 9 / 256
    assert mcnemar_test(*_vectors(5, 1, 7, 3)) == pytest.approx(18 / 256)
    # 0 against 6: 2 * (1/2)^6
    assert mcnemar_test(*_vectors(5, 0, 6, 3)) == pytest.approx(2 / 64)
    assert mcnemar_test(*_vectors(5, 0, 0, 3)) == 1.0


def test_compare_pair_puts_the_table_together():
    found = compare_pair(*_vectors(40, 10, 20, 30))
    assert (found["n"], found["both"], found["only_a"], found["only_b"], found["neither"]) == (100, 40, 10, 20, 30)
    assert found["agreement"] == pytest.approx(0.7)
    assert (found["accuracy_a"], found["accuracy_b"]) == (pytest.approx(0.5), pytest.approx(0.6))
    assert found["mcnemar_p"] == pytest.approx(mcnemar_test(*_vectors(40, 10, 20, 30)))


def test_holm_matches_the_step_down_by_hand():
    # sorted 0.01, 0.03, 0.04, 0.5 times 4, 3, 2, 1: 0.04, 0.09, 0.08 -> 0.09 (monotone), 0.5
    assert holm([0.01, 0.04, 0.03, 0.5]).tolist() == pytest.approx([0.04, 0.09, 0.09, 0.5])


def test_paired_tables_must_align():
    with pytest.raises(ValueError, match="align"):
        Paired.of([True, False], [True])

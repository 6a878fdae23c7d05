"""Chance levels: what a scorer that ranks or answers at random gets, computed for the actual items.

Exact values assume continuous random scores (no ties) or uniform random answers, independently per item. Where a paper
states a conventional value that differs from the exact one, the constant below names the paper and says why.
"""

from __future__ import annotations

import math

# VELOCITI (Saravanan et al., CVPR 2025), Sec. 4: StrictVLE "has a random chance accuracy of 25%" (a random Yes/No
# answer per caption). For continuous entailment scores the chance depends on the score distribution around the 0.5
# threshold, so no exact value exists; this conventional value is used and the table says so.
STRICT_VLE_CHANCE = 0.25
STRICT_VLE_NOTE = "no exact chance for continuous scores; 25% is VELOCITI's random Yes/No convention (Sec. 4)"
# VELOCITI Table 3 analysis: a random Yes/No answer is right half of the time, for positives and negatives alike.
YES_NO_CHANCE = 0.5

# Vinoground (Zhang et al. 2024), App. C: text 25%, video 25%, group 1/6. The group value is exact for similarity
# matrices (the two true pairs must be the two largest of four random scores: 1/C(4,2)). For A/B answers the paper keeps
# 1/6 although independent guessing on the four questions gives 1/16; the paper's value is used (more conservative).
WINOGROUND_GROUP_CHANCE = 1.0 / 6.0
ANSWER_GROUP_NOTE = ("chance: independent A/B guessing over every order asked (text x video); the paper quotes 1/6 "
                     "(Vinoground App. C), which assumes random scores")


def ranking_chance(n_texts: int, n_true: int = 1) -> float:
    """P(every true text scores above every false one) for random scores: ``1 / C(n_texts, n_true)``.

    With one caption and ``n`` foils this is ``1 / (n + 1)`` (ViLMA acc_r, Sec. 4.2; VITATECS accuracy, Sec. 4.1).
    """
    if n_texts < 1 or not 1 <= n_true <= n_texts:
        raise ValueError(f"need 1 <= n_true <= n_texts, got n_true={n_true}, n_texts={n_texts}")
    return 1.0 / math.comb(n_texts, n_true)


def choice_chance(n_options: int) -> float:
    """A uniform random answer among ``n_options`` letters."""
    if n_options < 1:
        raise ValueError(f"a question needs at least one option, got {n_options}")
    return 1.0 / n_options


def hit_at_k_chance(k: int, n_candidates: int, n_positive: int = 1) -> float:
    """P(at least one of ``n_positive`` targets ranks in the top ``k`` of ``n_candidates``) under a random ranking.

    ``1 - C(N - R, k) / C(N, k)``; with one target it is ``k / N`` (VITATECS Recall@k, Sec. 4.3; VideoCon R@k,
    ``src/calc_ssv2.py``).
    """
    if not 0 <= n_positive <= n_candidates:
        raise ValueError(f"need 0 <= n_positive <= n_candidates, got {n_positive}, {n_candidates}")
    k = min(k, n_candidates)
    return 1.0 - math.comb(n_candidates - n_positive, k) / math.comb(n_candidates, k)


def expected_average_precision(n_positive: int, n_candidates: int) -> float:
    """The exact expected average precision of a random ranking (Bestgen 2015).

    ``E[AP] = (1/N) * sum_{i=1..N} ((R-1)(i-1)/(N-1) + 1) / i``. For VideoCon's SSv2-Temporal (12 positives among
    216 videos per caption) this is 7.7%; the paper's Table 4 prints 7.3 for its random baseline.
    """
    if not 1 <= n_positive <= n_candidates:
        raise ValueError(f"need 1 <= n_positive <= n_candidates, got {n_positive}, {n_candidates}")
    if n_candidates == 1:
        return 1.0
    harmonic = sum(1.0 / i for i in range(1, n_candidates + 1))
    slope = (n_positive - 1) / (n_candidates - 1)
    return (slope * (n_candidates - harmonic) + harmonic) / n_candidates

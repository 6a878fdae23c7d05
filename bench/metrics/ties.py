"""Tie policies: how a metric that ranks or compares scores treats equal scores.

Every such metric takes ``ties``, one of:

- ``"strict"``: a tie is a failure (the true text must score strictly above every false one; a positive shares its
  place with the worst of its ties);
- ``"official"``: exactly what the benchmark's released evaluation code does; each benchmark module names its rule
  and cites the file and line (docs/metrics.md);
- ``"expected"``: the expectation under random tie-breaking, computed exactly: fractional credit for a comparison,
  the average over tied orders for average precision and hit@k.

Inside the modules a policy becomes a *rule* (how one comparison breaks ties): ``"strict"``, ``"expected"``,
``"first"`` (the first listed candidate wins a tie, as ``np.argmax`` / ``torch.argmax`` do) or ``"optimistic"`` (the
true candidate wins). A benchmark's ``official`` rule is one of these, or a ranking order it computes itself.

Which number uses which rule (docs/metrics.md, "Ties are not knowing"): a metric's *value* follows the policy asked
for (``official`` by default: the number a paper would print); every *claim* about what a model can tell does not.
A test against chance counts a tie as no more than the share a fair coin would give it (the ``expected`` credit,
1/k), whatever the value's policy, so a tie never makes a number significant and a model that scores everything alike
is never starred; a judgement of one item across runs (paired tests, agreement, controls, difficulty, the pooled
tables) counts a tie as not told apart; an answer share ("share of A / Yes") counts a tied answer as neither. A
surface shows the share of items a tie decided beside a value whenever it exceeds :data:`TIE_NOTICE`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

TIES = ("strict", "official", "expected")
DEFAULT_TIES = "official"
RULES = ("strict", "expected", "first", "optimistic")
TIE_NOTICE = 0.05  # a share of items decided by a tie above this is shown beside the value, with its strict value
MOST = 0.5  # a run that tied more than this share of the items compared "tied most of them"
TIE_CAUSES = "constant output, a prompt the model ignores, or 16-bit rounding of close scores"


def check(ties: str) -> str:
    """``ties`` if it names a policy, else a one-line error."""
    if ties not in TIES:
        raise ValueError(f"unknown tie policy {ties!r}; choose one of {', '.join(TIES)}")
    return ties


def notable(n_tie: int, n: int) -> bool:
    """Whether ties decided more than :data:`TIE_NOTICE` of ``n`` items (a surface then shows the share)."""
    return n > 0 and n_tie / n > TIE_NOTICE


def tied_items(n_tie: int, n: int) -> str:
    """``"every item"`` or ``"22 of 150 items (15%)"``: how many items a tie decided, in words."""
    return "every item" if n_tie == n else f"{n_tie} of {n} items ({n_tie / n:.0%})"


def most_tied(run: str, n_tie: int, n: int) -> str:
    """The sentence about a run that tied more than :data:`MOST` of the ``n`` items it was compared on (empty when
    it did not): whatever a table counts for it there comes from its ties, not from an answer."""
    if not n or n_tie / n <= MOST:
        return ""
    return (f"{run} tied {tied_items(n_tie, n)}: the true and a false text scored alike, so it told "
            f"{'none' if n_tie == n else 'most'} of them apart (likely causes: {TIE_CAUSES}).")


def tie_warning(n_tie: int, n: int) -> str:
    """The one-line warning about a run whose ties are :func:`notable` (empty when they are not)."""
    if not notable(n_tie, n):
        return ""
    return (f"{tied_items(n_tie, n)} decided by a tie on some metric (a true and a false text scored exactly alike: "
            f"not told apart); likely causes: {TIE_CAUSES}")


def rule_for(ties: str, official: str) -> str:
    """The comparison rule of policy ``ties`` for a benchmark whose released code follows rule ``official``."""
    check(ties)
    if official not in RULES:
        raise ValueError(f"unknown tie rule {official!r}; choose one of {', '.join(RULES)}")
    return official if ties == "official" else ties


@dataclass(frozen=True)
class Decision:
    """One outcome: its credit under the policy asked for, under ``strict`` and under ``expected``."""

    value: float
    strict: float
    expected: float

    @property
    def tie(self) -> bool:
        """Whether a tie decided the outcome (its strict and expected credits differ)."""
        return self.strict != self.expected

    @classmethod
    def plain(cls, correct: bool | float) -> Decision:
        """An outcome no tie can touch (a parsed answer, a threshold nobody hit exactly)."""
        return cls(float(correct), float(correct), float(correct))


def both(*decisions: Decision) -> Decision:
    """All of several independent outcomes: the product of their credits under each policy."""
    return Decision(float(np.prod([d.value for d in decisions])), float(np.prod([d.strict for d in decisions])),
                    float(np.prod([d.expected for d in decisions])))


def all_above(scores: Sequence[float], winners: Sequence[int], losers: Sequence[int], rule: str) -> float:
    """Credit for "every winner scores above every loser" with ties broken by ``rule`` (NaN scores give 0).

    ``first`` breaks a tie by position (a lower index ranks higher), ``optimistic`` in the winners' favour,
    ``expected`` at random: with ``a`` winners and ``b`` losers tied at the boundary the credit is ``1 / C(a+b, a)``.
    """
    s = np.asarray(scores, dtype=float)
    win, lose = list(winners), list(losers)
    if not lose:
        return 0.0 if np.any(np.isnan(s[win])) else 1.0
    w, l = s[win], s[lose]
    if np.any(np.isnan(w)) or np.any(np.isnan(l)):
        return 0.0
    low, high = w.min(), l.max()
    if low != high:
        return float(low > high)
    if rule == "strict":
        return 0.0
    if rule == "optimistic":
        return 1.0
    tied_w = [i for i in win if s[i] == low]
    tied_l = [i for i in lose if s[i] == low]
    if rule == "first":
        return float(max(tied_w) < min(tied_l))
    if rule == "expected":
        return 1.0 / math.comb(len(tied_w) + len(tied_l), len(tied_w))
    raise ValueError(f"unknown tie rule {rule!r}")


def decide(scores: Sequence[float], winners: Sequence[int], losers: Sequence[int], ties: str,
           official: str) -> Decision:
    """:func:`all_above` under policy ``ties`` (``official`` is the benchmark's rule), with its strict credit."""
    return Decision(all_above(scores, winners, losers, rule_for(ties, official)),
                    all_above(scores, winners, losers, "strict"), all_above(scores, winners, losers, "expected"))


def above_threshold(score: float, threshold: float, rule: str) -> float:
    """Credit for ``score > threshold`` (a Yes); at equality ``expected`` gives 1/2, the others the strict 0."""
    if math.isnan(score) or score < threshold:
        return 0.0
    if score > threshold:
        return 1.0
    return 0.5 if rule == "expected" else 1.0 if rule == "optimistic" else 0.0


def below_threshold(score: float, threshold: float, rule: str) -> float:
    """Credit for ``score < threshold`` (a No); at equality as :func:`above_threshold`."""
    if math.isnan(score):
        return 0.0
    return above_threshold(-score, -threshold, rule)


def choice_credit(options: Sequence[int], logits: Sequence[float], chosen: int, target: int, rule: str) -> float:
    """Credit for one multiple-choice answer.

    With letter logits, a tie at the top is a tie: ``strict`` fails it, ``expected`` gives ``1 / number tied``,
    ``first``/``optimistic`` keep the stored choice (the protocol takes the first letter, as greedy decoding's argmax
    does). Without logits (imported answers) the stored choice decides.
    """
    values = np.asarray(logits, dtype=float)
    if chosen == -1:
        return 0.0
    if not len(values) or np.any(np.isnan(values)) or target not in options:
        return float(chosen == target)
    top = values.max()
    tied = [o for o, v in zip(options, values) if v == top]
    if len(tied) == 1 or target not in tied:
        return float(chosen == target)
    if rule == "strict":
        return 0.0
    if rule == "expected":
        return 1.0 / len(tied)
    return float(chosen == target)


def letter_shares(logits: Sequence[float], position: int, n_options: int) -> tuple[np.ndarray, bool]:
    """``(shares, tied)`` of one multiple-choice answer: per option position, the share of the answer a fair coin
    gives it (1 for the only top letter, 1/k to each of k letters tied at the top) and whether letters tied at the top.
    Without usable logits (imported answers) the stored choice ``position`` has it all (-1, unparsed: none)."""
    shares = np.zeros(n_options)
    values = np.asarray(logits, dtype=float)
    if len(values) != n_options or not n_options or np.any(np.isnan(values)):
        if 0 <= position < n_options:
            shares[position] = 1.0
        return shares, False
    top = values == values.max()
    shares[top] = 1.0 / top.sum()
    return shares, bool(top.sum() > 1)


def choice_decision(options: Sequence[int], logits: Sequence[float], chosen: int, target: int, ties: str,
                    official: str = "first") -> Decision:
    """:func:`choice_credit` under policy ``ties``, with its strict credit and whether a tie decided it."""
    return Decision(choice_credit(options, logits, chosen, target, rule_for(ties, official)),
                    choice_credit(options, logits, chosen, target, "strict"),
                    choice_credit(options, logits, chosen, target, "expected"))


def threshold_decision(score: float, threshold: float, above: bool, ties: str, official: str = "strict") -> Decision:
    """``score > threshold`` (``above``) or ``score < threshold`` under policy ``ties``."""
    test = above_threshold if above else below_threshold
    return Decision(test(score, threshold, rule_for(ties, official)), test(score, threshold, "strict"),
                    test(score, threshold, "expected"))

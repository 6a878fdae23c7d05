"""Answer shares: how much a run leans to one answer ("Yes", or the first letter "A"), with a tied answer counted as
neither.

A Yes/No answer is a P(Yes) score (``P(Yes) / (P(Yes) + P(No))``): "Yes" above 1/2, "No" below, tied at exactly 1/2. A
multiple-choice answer is tied when letters tie at the top of its letter logits (:func:`bench.metrics.ties.
letter_shares`): the stored choice is then the protocol's tie-break (the first letter, as greedy decoding's argmax),
not the model's, so it is no answer for a share. A share is over the answers that chose: NaN when every answer tied.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from bench.metrics.ties import letter_shares

YES_THRESHOLD = 0.5


@dataclass(frozen=True)
class Leaning:
    """Answers that chose the leaning answer (``lean``: "Yes", or "A"), chose another (``other``) or tied."""

    lean: int
    other: int
    tied: int

    @property
    def n(self) -> int:
        """Every answer counted (tied ones too)."""
        return self.lean + self.other + self.tied

    @property
    def share(self) -> float:
        """The leaning answer's share of the answers that chose (NaN when none chose: all tied, or none given)."""
        chose = self.lean + self.other
        return self.lean / chose if chose else float("nan")

    def __add__(self, other: Leaning) -> Leaning:
        return Leaning(self.lean + other.lean, self.other + other.other, self.tied + other.tied)


def yes_answers(scores: Sequence[float]) -> Leaning:
    """The "Yes" answers among P(Yes) scores (NaN scores are no answer): above 1/2, below, exactly 1/2 (tied)."""
    s = np.asarray(scores, dtype=float)
    s = s[~np.isnan(s)]
    return Leaning(int((s > YES_THRESHOLD).sum()), int((s < YES_THRESHOLD).sum()), int((s == YES_THRESHOLD).sum()))


def first_letter_answers(choice: pd.DataFrame) -> Leaning:
    """The answers "A" (the first option listed) in a choice table (``bench.store.schema``; unparsed answers, -1, are
    no answer): chosen outright, another letter chosen, or letters tied at the top."""
    lean = other = tied = 0
    logits = choice["logits"] if "logits" in choice.columns else [[]] * len(choice)
    for options, chosen, values in zip(choice["options"], choice["choice"], logits):
        options = [int(o) for o in options]
        if int(chosen) == -1:
            continue
        position = options.index(int(chosen)) if int(chosen) in options else -1
        shares, is_tie = letter_shares([np.nan if v is None else v for v in (values if values is not None else [])],
                                       position, len(options))
        if is_tie:
            tied += 1
        elif shares[0] == 1.0:
            lean += 1
        else:
            other += 1
    return Leaning(lean, other, tied)

"""MVP (Krojer et al. 2025): paired accuracy beside single accuracy, per subset and as the mean over the subsets.

Each item is a minimal pair: two videos asked one question with the same two options, clip ``c`` true of option
``truth[c]`` (:mod:`bench.loaders.mvp`). The official scoring (facebookresearch/minimal_video_pairs
``tasks/mvp/utils.py``): a question is right when its parsed answer is its answer (``mvp_process_results`` L62-72;
an answer the parser cannot read is wrong and stays in the count, L71); ``single_accuracy`` is the share of questions
right and ``pair_accuracy`` the share of pairs with both questions right (``compute_metrics`` L116-143); the ``mvp``
and ``mvp_mini`` numbers are the unweighted means of the four subsets' (``tasks/mvp/mvp.yaml``:
``weight_by_size: false``), here the rows ``by="average"`` (subset "mean of subsets"), beside the pooled rows over all
items.

- From A/B answers (choice table; the ``mc`` protocol asks each clip its question in both option orders):
  "single accuracy" / "paired accuracy" read the order the official question shows (each clip's row's own option
  order, label ``orders``); "... (both orders)" need the right answer in every order asked. A tie of the letter
  logits goes to the first letter, as greedy decoding's argmax does (``official``); ``expected`` gives it 1/2.
- From scores (pair table: similarity, entailment P(Yes), log-likelihood): a clip's question is right when its answer
  scores strictly above the other option for that clip; no released code scores MVP this way, so ``official`` keeps
  the strict comparison. A text-only scorer gives both clips the same scores, so it can never get a pair right: the
  shortcut MVP is built against.

"single accuracy" is a pair's share of its two questions right (0, 1/2 or 1): its mean over pairs is the official
share of questions. A question whose answer is missing, NaN or unparsed is wrong there, and the row carries the
pair's worst status so that the table counts it. Chance: 1/2 per question and order asked, their product for a pair
(1/4 in the official order; the paper's random baseline is 25%).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from bench.items import Item
from bench.loaders.mvp import official_order
from bench.metrics.aggregate import Settings, mean_of_means_row, summarize, with_labels
from bench.metrics.chance import choice_chance, ranking_chance
from bench.metrics.outcomes import (ChoiceIndex, ScoreIndex, all_orders, answers_status, cells_status, false_texts,
                                    outcome, per_item, worst_status)
from bench.metrics.ties import DEFAULT_TIES, Decision, both, decide, rule_for

PAIRED, SINGLE = "paired accuracy", "single accuracy"
BOTH_ORDERS = " (both orders)"
DEFAULT_BY = ("source",)
SUBSET_MEAN = "mean of subsets"
OFFICIAL_CHOICE = "first"  # greedy decoding's argmax takes the first of tied letters
OFFICIAL_SCORES = "strict"  # no released code compares scores: a tie fails
NOTES = {SINGLE: "each pair counts its two questions' share right (official: questions right / questions)",
         SINGLE + BOTH_ORDERS: "each pair counts its two questions' share right in every order asked"}

Question = tuple[Decision, float, str]  # one clip's question: its credit, chance and status


def _check(item: Item) -> None:
    if len(item.clips) != 2 or len(item.texts) != 2 or any(len(t) != 1 for t in item.truth):
        raise ValueError(f"MVP item {item.item_id!r} must be 2 clips x 2 options with one answer per clip")


def _rows(item: Item, questions: Sequence[Question], suffix: str = "") -> list[dict]:
    """The paired and the single accuracy rows of a pair from its two questions."""
    status = worst_status(*(q[2] for q in questions))
    credits = [q[0] if q[2] == "ok" else Decision.plain(False) for q in questions]
    single = Decision(*(float(np.mean([getattr(d, k) for d in credits])) for k in ("value", "strict", "expected")))
    paired = outcome(item.item_id, item.subset, PAIRED + suffix, both(*credits), float(np.prod([q[1] for q in
                                                                                                 questions])), status)
    share = outcome(item.item_id, item.subset, SINGLE + suffix, single, float(np.mean([q[1] for q in questions])),
                    "ok")
    share.update(status=status, tie=bool(share["tie"] and status == "ok"))
    return [paired, share]


def _score_rows(item: Item, index: ScoreIndex, ties: str) -> list[dict]:
    _check(item)
    scores, present = index.matrix(item)
    questions = [(decide(scores[c], item.truth[c], false_texts(item, c), ties, OFFICIAL_SCORES),
                  ranking_chance(len(item.texts), len(item.truth[c])), cells_status(scores[c], present[c]))
                 for c in range(len(item.clips))]
    return _rows(item, questions)


def _choice_rows(item: Item, choices: ChoiceIndex, ties: str) -> list[dict]:
    _check(item)
    official, every = [], []
    for c in range(len(item.clips)):
        asked = choices.asked(item.item_id, "text", c)
        shown = [a for a in asked if a.options == official_order(item, c)]
        target = item.truth[c][0]
        official.append((all_orders(shown, target, ties, OFFICIAL_CHOICE), choice_chance(len(item.texts)),
                         answers_status(shown)))
        chance = float(np.prod([choice_chance(len(a.options)) for a in asked])) if asked else 0.25
        every.append((all_orders(asked, target, ties, OFFICIAL_CHOICE), chance, answers_status(asked)))
    return _rows(item, official) + _rows(item, every, BOTH_ORDERS)


def outcomes(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
             ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """Paired and single accuracy per pair: from scores when the pair table has rows (or no table has any), from
    A/B answers when the choice table has rows."""
    rule_for(ties, OFFICIAL_SCORES)
    return per_item(items, pair, choice, lambda it, idx: _score_rows(it, idx, ties),
                    lambda it, ch: _choice_rows(it, ch, ties))


def table(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
          measure: str | None = None, settings: Settings = Settings(), by: Sequence[str] | None = None,
          ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """Paired and single accuracy over all pairs, per subset, per source dataset, and the mean over the subsets
    (the official ``mvp`` / ``mvp_mini`` number, rows ``by="average"``)."""
    labels_present = {k for it in items for k in it.labels}
    by = tuple(b for b in DEFAULT_BY if b in labels_present) if by is None else tuple(by)
    out = with_labels(outcomes(items, pair, choice, ties=ties), items, by)
    parts = [summarize(out, settings, by=by, notes=NOTES)]
    subsets = list(dict.fromkeys(out["subset"]))
    if len(subsets) > 1:
        averages = [mean_of_means_row(out, m, {s: [s] for s in subsets}, m, settings, by="average",
                                      subset=SUBSET_MEAN, note=NOTES.get(m, "")) for m in dict.fromkeys(out["metric"])]
        parts.append(pd.DataFrame([r for r in averages if r]))
    return pd.concat(parts, ignore_index=True)

"""TVBench (Cores et al., 2024): accuracy per task, its mean over the tasks (the leaderboard's "Average") and over all
questions (``infer.ipynb``'s "Total Acc").

The official notebook (cell 11) counts a question right when ``vqa_dataset.py::check_ans`` (L163-178) accepts the
model's answer; the leaderboard's "Average" is the mean of the ten per-task accuracies (its Random row, 33.3, is the
mean of the tasks' 1/(number of candidates)), while the notebook prints the accuracy over every question. Rows: over
all items, per task (the subset), and "Avg." by ``average`` (the mean over the tasks the run has, MOVER interval).

- imported answers (``bench.importers.tvbench``): ``check_ans`` decides, and the option it accepts is stored (an
  answer it accepts without naming the true option still counts right, as there: see the importer);
- letter logits (``mc``): the question in the file's option order; "accuracy (all orders)" needs the true candidate
  in every cyclic order asked; a tie at the top is decided as greedy decoding does (the first letter) under
  ``official``;
- scores (similarity, P(Yes) per candidate, log-likelihood): right when the true candidate scores above every other;
  no released code scores this way, so ``official`` ties fail.

Chance: 1/(number of candidates) per question (its product over the orders asked for "(all orders)").
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from bench.items import Item
from bench.metrics.aggregate import Settings, mean_of_means_row, summarize, with_labels
from bench.metrics.chance import choice_chance, ranking_chance
from bench.metrics.outcomes import (ChoiceIndex, ScoreIndex, all_orders, answers_status, cells_status, false_texts,
                                    outcome, per_item)
from bench.metrics.ties import DEFAULT_TIES, decide, rule_for

METRIC = "accuracy"
ORDERS = "accuracy (all orders)"
OFFICIAL_TIES = "strict"  # scores: no released code; letters: the first letter, as greedy decoding


def _pair_rows(item: Item, index: ScoreIndex, ties: str) -> list[dict]:
    scores, present = index.matrix(item)
    decision = decide(scores[0], item.truth[0], false_texts(item, 0), ties, OFFICIAL_TIES)
    return [outcome(item.item_id, item.subset, METRIC, decision, ranking_chance(len(item.texts)),
                    cells_status(scores[0], present[0], index.unparsed(item)[0]))]


def _choice_rows(item: Item, choices: ChoiceIndex, ties: str) -> list[dict]:
    target = item.truth[0][0]
    asked = choices.asked(item.item_id, "text", 0)
    official = [a for a in asked if a.options == list(range(len(item.texts)))]
    rows = [outcome(item.item_id, item.subset, METRIC, all_orders(official, target, ties),
                    choice_chance(len(item.texts)), answers_status(official))]
    if len(asked) > 1:
        rows.append(outcome(item.item_id, item.subset, ORDERS, all_orders(asked, target, ties),
                            float(np.prod([choice_chance(len(a.options)) for a in asked])), answers_status(asked)))
    return rows


def outcomes(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
             ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """One row per question (and one for every order asked, from letter logits): from the choice table when it has
    rows, else from the pair table."""
    rule_for(ties, OFFICIAL_TIES)
    return per_item(items, pair, choice, lambda it, idx: _pair_rows(it, idx, ties),
                    lambda it, ch: _choice_rows(it, ch, ties))


def table(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
          measure: str | None = None, settings: Settings = Settings(), by: Sequence[str] | None = None,
          ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """Accuracy over all questions and per task, and its mean over the tasks (``by="average"``)."""
    by = tuple(by or ())
    out = with_labels(outcomes(items, pair, choice, ties=ties), items, by)
    tasks = list(dict.fromkeys(out["subset"]))
    averages = [mean_of_means_row(out, m, {t: [t] for t in tasks}, m, settings, by="average", subset="Avg.",
                                  note=f"mean over the {len(tasks)} tasks, as the leaderboard's Average")
                for m in (METRIC, ORDERS)] if len(tasks) > 1 else []
    parts = [summarize(out, settings, by=by)]
    extra = [r for r in averages if r]
    if extra:
        parts.append(pd.DataFrame(extra))
    return pd.concat(parts, ignore_index=True)

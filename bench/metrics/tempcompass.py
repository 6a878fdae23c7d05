"""TempCompass (Liu et al., ACL Findings 2024): accuracy per task format, per temporal aspect and per fine-grained
aspect, and over all formats.

The official evaluation rates every question 1 or 0 (``eval_<task>.py``) and ``utils/eval_utils.py::print_result``
(L9-41) averages the ratings of one task file over all its questions ("avg"), per temporal aspect and per
fine-grained aspect. Here each format is a metric ("multi-choice", "yes/no", "caption matching", "captioning"), its
rows over all items, per aspect (the subset) and per fine-grained aspect (label ``fine_aspect``), which is
``print_result``'s output for that file. "all formats" pools every question the run answered: the leaderboard's
"Avg. All" and per-aspect averages are this pooled accuracy over the four files (the released evaluation results of
Video-LLaVA, Gemini-1.5-pro and Reka-core reproduce the leaderboard's numbers that way, to the second decimal).

How a question is decided:

- imported answers (``bench.importers.tempcompass``): the official rules decide, and the choice (or Yes/No) they
  read is stored; an answer the rules cannot match, and every captioning answer, is "unparsed": it counts 0 and
  stays in ``n``, as ``--disable_llm`` does (there is no ChatGPT judge offline);
- letter logits (``mc`` protocol, multi-choice and caption matching): the metric reads the question in the file's
  own option order; "<format> (all orders)" needs the right option in every cyclic order asked. A tie between the
  top letters is decided as greedy decoding does (the first letter) under ``official``;
- scores (similarity, entailment P(Yes) per option, log-likelihood): right when the true option scores above every
  other; no released code scores this way, so ``official`` ties fail, as in VITATECS' accuracy;
- yes/no from P(Yes) (``entail`` protocol): right when P(Yes) > 1/2 for a "yes" question, < 1/2 for a "no" one; a
  tie at exactly 1/2 is no answer and fails under ``official``.

Chance: 1/(number of options) in the file's order (multi-choice, caption matching, captioning), 1/2 for yes/no, the
product over the orders asked for "(all orders)", and 1/(number of options) for scores.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from bench.items import Item
from bench.metrics.aggregate import Settings, summarize, with_labels
from bench.metrics.chance import choice_chance, ranking_chance
from bench.metrics.outcomes import (ChoiceIndex, ScoreIndex, all_orders, answers_status, cells_status, false_texts,
                                    outcome, outcomes_frame)
from bench.metrics.ties import DEFAULT_TIES, decide, rule_for, threshold_decision
from bench.store.schema import pair_frame

METRICS = {"multi-choice": "multi-choice", "yes_no": "yes/no", "caption_matching": "caption matching",
           "captioning": "captioning"}
ALL_FORMATS = "all formats"
ORDERS = " (all orders)"
DEFAULT_BY = ("fine_aspect",)
OFFICIAL_TIES = "strict"  # scores and P(Yes): no released code; letters: the first letter, as greedy decoding
YES_NO_CHANCE = 0.5


def _format(item: Item) -> str:
    found = item.labels.get("format")
    if found not in METRICS:
        raise ValueError(f"TempCompass item {item.item_id!r} has no known format label ({found!r}); expected one of "
                         f"{list(METRICS)}")
    return found


def _pair_rows(item: Item, index: ScoreIndex, ties: str) -> list[dict]:
    task = _format(item)
    scores, present = index.matrix(item)
    status = cells_status(scores[0], present[0], index.unparsed(item)[0])
    if task == "yes_no":
        decision = threshold_decision(float(scores[0, 0]), 0.5, bool(item.truth[0]), ties, OFFICIAL_TIES)
        return [outcome(item.item_id, item.subset, METRICS[task], decision, YES_NO_CHANCE, status)]
    decision = decide(scores[0], item.truth[0], false_texts(item, 0), ties, OFFICIAL_TIES)
    return [outcome(item.item_id, item.subset, METRICS[task], decision, ranking_chance(len(item.texts)), status)]


def _choice_rows(item: Item, choices: ChoiceIndex, ties: str) -> list[dict]:
    task = _format(item)
    target = item.truth[0][0]
    asked = choices.asked(item.item_id, "text", 0)
    released = list(range(len(item.texts)))
    official = [a for a in asked if a.options == released]
    rows = [outcome(item.item_id, item.subset, METRICS[task], all_orders(official, target, ties),
                    choice_chance(len(item.texts)), answers_status(official))]
    if len(asked) > 1:
        chance = float(np.prod([choice_chance(len(a.options)) for a in asked]))
        rows.append(outcome(item.item_id, item.subset, METRICS[task] + ORDERS, all_orders(asked, target, ties),
                            chance, answers_status(asked)))
    return rows


def outcomes(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
             ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """One row per question: its format's metric. Yes/no questions read the pair table (P(Yes), or an imported
    Yes/No) and captioning the choice table (imported answers); multi-choice and caption matching read the choice
    table when the run has one (the answer in the file's option order, and in every order asked; imported answers),
    else the pair table (scores ranked). An imported run holds both tables: yes/no answers in one, the others in the
    other."""
    rule_for(ties, OFFICIAL_TIES)
    has_choice = choice is not None and len(choice) > 0
    index = ScoreIndex(pair if pair is not None and len(pair) else pair_frame([]))
    choices = ChoiceIndex(choice if has_choice else None)
    rows: list[dict] = []
    for it in items:
        if it.role != "main":
            continue
        task = _format(it)
        from_choice = task == "captioning" or task != "yes_no" and has_choice
        rows += _choice_rows(it, choices, ties) if from_choice else _pair_rows(it, index, ties)
    return outcomes_frame(rows)


def table(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
          measure: str | None = None, settings: Settings = Settings(), by: Sequence[str] | None = None,
          ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """Each format's accuracy over all its questions, per aspect and per fine-grained aspect (``print_result``'s
    numbers), and "all formats" (every question pooled) when the run answered more than one format."""
    by = tuple(DEFAULT_BY if by is None else by)
    out = with_labels(outcomes(items, pair, choice, ties=ties), items, by)
    plain = out[out["metric"].isin(list(METRICS.values()))]
    if plain["metric"].nunique() > 1:
        formats = ", ".join(m for m in METRICS.values() if m in set(plain["metric"]))
        pooled = plain.assign(metric=ALL_FORMATS)
        return pd.concat([summarize(out, settings, by=by),
                          summarize(pooled, settings, by=by, notes={ALL_FORMATS: f"every question of {formats}"})],
                         ignore_index=True)
    return summarize(out, settings, by=by)

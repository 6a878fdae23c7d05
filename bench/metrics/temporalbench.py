"""TemporalBench (Cai et al. 2024): binary QA accuracy and Multiple Binary Accuracy (MBA), short and long videos.

Each item is one binary question: a video and two captions, one true (:mod:`bench.loaders.temporalbench`). The
official scoring (mu-cai/TemporalBench ``get_qa_acc.py``; lmms-eval's ``temporalbench_aggregate_results`` is the same):

- binary accuracy: a question is right when the first character of the response is its ``GT`` letter, case aside
  (L49: ``gt.lower() == pred['response'][0].lower()``); any other first character is wrong and counted (L92 divides by
  every prediction);
- MBA: a video is right when every question about it is right (L54-58, keyed by ``video_name``); the share of videos;
- both per source dataset (L61-69: a video's questions share its dataset) and, for short videos, per category
  (L72-81): there the questions of one video *and one category* are scored together, so "MBA" by category is over
  (category, video) groups, not over videos.

Short and long questions come from two files and are scored by two runs of ``get_qa_acc.py``; here they are the
subsets ``short`` and ``long`` (the rows over all items pool them).

- From A/B answers (choice table; the ``mc`` protocol asks both option orders): "binary accuracy" reads the order the
  released question shows; "... (both orders)" needs the true caption in both. A tie of the letter logits goes to the
  first letter, as greedy decoding's argmax does (``official``); ``expected`` gives it 1/2.
- From scores (pair table: similarity, as the paper scores embedding models, entailment P(Yes), log-likelihood): right
  when the true caption scores strictly above the other; no released code does this, so ``official`` keeps the strict
  comparison.

An MBA row sits on the first question of its video (its other questions have none). Chance: 1/2 per question and
order asked; a group's chance is the product over its questions (independent guessing).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from bench.items import Item
from bench.metrics.aggregate import Settings, summarize, summarize_group, with_labels
from bench.metrics.chance import choice_chance, ranking_chance
from bench.metrics.outcomes import (ChoiceIndex, ScoreIndex, all_orders, answers_status, cells_status, false_texts,
                                    outcome, outcomes_frame, per_item, worst_status)
from bench.metrics.ties import DEFAULT_TIES, decide, rule_for

BINARY, MBA = "binary accuracy", "MBA"
BOTH_ORDERS = " (both orders)"
GROUPED = {BINARY: MBA, BINARY + BOTH_ORDERS: MBA + BOTH_ORDERS}  # per-question metric -> its all-right metric
DEFAULT_BY = ("dataset", "category")
VIDEO = "video_name"
OFFICIAL_CHOICE = "first"  # greedy decoding's argmax takes the first of tied letters
OFFICIAL_SCORES = "strict"  # no released code compares scores: a tie fails
NOTES = {MBA: "videos with every question right (get_qa_acc.py L54-58)",
         MBA + BOTH_ORDERS: "videos with every question right in both option orders"}
CATEGORY_NOTE = "by category: (category, video) groups with every question right (get_qa_acc.py L72-81)"


def _score_rows(item: Item, index: ScoreIndex, ties: str) -> list[dict]:
    scores, present = index.matrix(item)
    return [outcome(item.item_id, item.subset, BINARY,
                    decide(scores[0], item.truth[0], false_texts(item, 0), ties, OFFICIAL_SCORES),
                    ranking_chance(len(item.texts), len(item.truth[0])), cells_status(scores[0], present[0]))]


def _choice_rows(item: Item, choices: ChoiceIndex, ties: str) -> list[dict]:
    asked = choices.asked(item.item_id, "text", 0)
    shown = [a for a in asked if a.options == list(range(len(item.texts)))]
    target = item.truth[0][0]
    both_chance = float(np.prod([choice_chance(len(a.options)) for a in asked])) if asked else 0.25
    return [outcome(item.item_id, item.subset, BINARY, all_orders(shown, target, ties, OFFICIAL_CHOICE),
                    choice_chance(len(item.texts)), answers_status(shown)),
            outcome(item.item_id, item.subset, BINARY + BOTH_ORDERS, all_orders(asked, target, ties, OFFICIAL_CHOICE),
                    both_chance, answers_status(asked))]


def all_right(questions: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """Per-question outcome rows (with the ``keys`` columns) -> one outcome row per group of ``keys`` and metric: right
    when every question is (the product of their credits), chance the product of theirs, the worst status; on the
    group's first question."""
    rows = []
    for (metric, *_), group in questions.groupby(["metric", *keys], sort=False, dropna=False):
        first = group.iloc[0]
        status = worst_status(*group["status"])
        rows.append({"item_id": first["item_id"], "subset": first["subset"], "metric": GROUPED[metric],
                     "value": float(np.prod(group["value"])), "strict": float(np.prod(group["strict"])),
                     "chance": float(np.prod(group["chance"])), "status": status,
                     "tie": bool(group["tie"].any() and status == "ok"), "dropped": False,
                     **{k: first[k] for k in keys}})
    return outcomes_frame(rows).assign(**{k: [r[k] for r in rows] for k in keys}) if rows else outcomes_frame([])


def outcomes(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
             ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """Binary accuracy per question (from scores when the pair table has rows or no table has any, from A/B answers
    when the choice table has rows) and MBA per video (on its first question)."""
    rule_for(ties, OFFICIAL_SCORES)
    questions = per_item(items, pair, choice, lambda it, idx: _score_rows(it, idx, ties),
                         lambda it, ch: _choice_rows(it, ch, ties))
    videos = all_right(with_labels(questions, items, [VIDEO]), ["subset", VIDEO]).drop(columns=[VIDEO],
                                                                                       errors="ignore")
    return pd.concat([questions, videos], ignore_index=True)


def _by_category(questions: pd.DataFrame, settings: Settings) -> list[dict]:
    groups = all_right(questions[questions["category"].notna()], ["category", VIDEO])
    return [summarize_group(metric, "category", str(category), frame, settings, CATEGORY_NOTE)
            for metric, per_metric in groups.groupby("metric", sort=False)
            for category, frame in per_metric.groupby("category", sort=True)]


def table(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
          measure: str | None = None, settings: Settings = Settings(), by: Sequence[str] | None = None,
          ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """Binary accuracy and MBA over all questions, per length (short, long), per source dataset and per category
    (MBA by category over (category, video) groups, as ``get_qa_acc.py``)."""
    labels_present = {k for it in items for k in it.labels}
    by = tuple(b for b in DEFAULT_BY if b in labels_present) if by is None else tuple(by)
    out = outcomes(items, pair, choice, ties=ties)
    grouped = out["metric"].isin(list(GROUPED.values()))
    plain = tuple(b for b in by if b != "category")
    parts = [summarize(with_labels(out[~grouped], items, by), settings, by=by),
             summarize(with_labels(out[grouped], items, plain), settings, by=plain, notes=NOTES)]
    if "category" in by:
        category = _by_category(with_labels(out[~grouped], items, ["category", VIDEO]), settings)
        parts.append(pd.DataFrame(category, columns=parts[0].columns))
    return pd.concat([p for p in parts if len(p)], ignore_index=True)

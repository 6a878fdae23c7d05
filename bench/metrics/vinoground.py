"""Vinoground (Zhang et al. 2024): text, video and group scores for similarity matrices and for A/B answers.

Each item has two clips (positive, negative) and two texts with truth ((0,), (1,)) in general form: clip c's caption
is ``truth[c][0]``. With s(c, t) the pair score (Sec. 4.1, Winoground's definitions):

- text  = s(c0, t0) > s(c0, t1) and s(c1, t1) > s(c1, t0)       (each clip prefers its caption; chance 1/4)
- video = s(c0, t0) > s(c1, t0) and s(c1, t1) > s(c0, t1)       (each caption prefers its clip; chance 1/4)
- group = text and video                                          (chance 1/6, exact for random scores)

From A/B answers (choice table; ``get_score_all.py``): "text (A/B)" = both text-score questions (axis "text", one per
clip) answered with the clip's caption; "video (A/B)" = both video-score questions (axis "video", one per caption)
answered with the caption's clip; "group (A/B)" = both. A question asked in several option orders counts as right
only when every order is answered right. Chance: 1/2 per order asked for text and video, and their product for group
(independent guessing; the paper quotes Winoground's 1/6, which holds for one order per question and random scores).

The released code compares strictly (``eval/imagebind_eval.py`` L56-58, ``eval/videoclip.py`` L77-79,
``eval/langbind.py`` L48-50 use ``>``), so ``official`` ties fail; ``expected`` breaks ties at random: 1/2 per tied
comparison for text and video (their two comparisons share no score), and for group, which asks both true pairs to
outscore both false ones, 1 / C(a + b, a) with ``a`` true and ``b`` false pairs tied at the boundary.

Rows are reported over all items, per major category (the subset) and per minor category (a list label).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from bench.items import Item
from bench.metrics.aggregate import Settings, summarize, with_labels
from bench.metrics.chance import ANSWER_GROUP_NOTE, WINOGROUND_GROUP_CHANCE, choice_chance
from bench.metrics.outcomes import (ChoiceIndex, ScoreIndex, all_orders, answers_status, cells_status, outcome,
                                    per_item, worst_status)
from bench.metrics.ties import DEFAULT_TIES, Decision, both, decide, rule_for

TEXT_CHANCE = 0.25
VIDEO_CHANCE = 0.25
DEFAULT_BY = ("minor",)
NOTES = {"group (A/B)": ANSWER_GROUP_NOTE}
OFFICIAL_TIES = "strict"


def _check(item: Item) -> tuple[int, int]:
    if len(item.clips) != 2 or len(item.texts) != 2 or any(len(t) != 1 for t in item.truth):
        raise ValueError(f"Vinoground item {item.item_id!r} must have 2 clips x 2 texts with one true text per clip")
    t0, t1 = item.truth[0][0], item.truth[1][0]
    if t0 == t1:
        raise ValueError(f"Vinoground item {item.item_id!r}: both clips point at text {t0}")
    return t0, t1


def _similarity_rows(item: Item, index: ScoreIndex, ties: str) -> list[dict]:
    t0, t1 = _check(item)
    s, present = index.matrix(item)
    status = cells_status(s, present)
    text = both(decide(s[0], [t0], [t1], ties, OFFICIAL_TIES), decide(s[1], [t1], [t0], ties, OFFICIAL_TIES))
    video = both(decide(s[:, t0], [0], [1], ties, OFFICIAL_TIES), decide(s[:, t1], [1], [0], ties, OFFICIAL_TIES))
    cells = s.reshape(-1)
    width = s.shape[1]
    group = decide(cells, [t0, width + t1], [t1, width + t0], ties, OFFICIAL_TIES)
    return [
        outcome(item.item_id, item.subset, "text", text, TEXT_CHANCE, status),
        outcome(item.item_id, item.subset, "video", video, VIDEO_CHANCE, status),
        outcome(item.item_id, item.subset, "group", group, WINOGROUND_GROUP_CHANCE, status),
    ]


def _questions(item: Item, choices: ChoiceIndex, axis: str, targets: dict[int, int],
               ties: str) -> tuple[Decision, float, str]:
    decisions, chance, statuses = [], 1.0, []
    for query, target in targets.items():
        asked = choices.asked(item.item_id, axis, query)
        statuses.append(answers_status(asked))
        decisions.append(all_orders(asked, target, ties))
        chance *= float(np.prod([choice_chance(len(a.options)) for a in asked])) if asked else 0.5
    return both(*decisions), chance, worst_status(*statuses)


def _answer_rows(item: Item, choices: ChoiceIndex, ties: str) -> list[dict]:
    t0, t1 = _check(item)
    text = _questions(item, choices, "text", {0: t0, 1: t1}, ties)
    video = _questions(item, choices, "video", {t0: 0, t1: 1}, ties)
    return [
        outcome(item.item_id, item.subset, "text (A/B)", *text),
        outcome(item.item_id, item.subset, "video (A/B)", *video),
        outcome(item.item_id, item.subset, "group (A/B)", both(text[0], video[0]), text[1] * video[1],
                worst_status(text[2], video[2])),
    ]


def outcomes(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
             ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """Similarity outcomes when the pair table has rows (or no table has any), answer outcomes when the choice
    table has rows."""
    rule_for(ties, OFFICIAL_TIES)
    return per_item(items, pair, choice, lambda it, idx: _similarity_rows(it, idx, ties),
                    lambda it, ch: _answer_rows(it, ch, ties))


def table(items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
          measure: str | None = None, settings: Settings = Settings(), by: Sequence[str] | None = None,
          ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """Text, video and group scores over all items, per major category and per minor category."""
    labels_present = {k for it in items for k in it.labels}
    by = tuple(b for b in DEFAULT_BY if b in labels_present) if by is None else tuple(by)
    out = with_labels(outcomes(items, pair, choice, ties=ties), items, by)
    return summarize(out, settings, by=by, notes=NOTES)

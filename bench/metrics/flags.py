"""Per-item flags for error analysis across runs: each run's correctness, disagreement, ClassicVLE-but-not-StrictVLE,
and the score margin of the true text over the best false one."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from bench.items import Item
from bench.metrics.correctness import ScoreIndex, false_texts, item_correct


def score_margin(items: Sequence[Item], pair: pd.DataFrame) -> pd.Series:
    """Per item: the lowest, over its clips, of (true text's score - best false text's score); NaN when unscored."""
    index = ScoreIndex(pair)
    margins = {}
    for it in items:
        scores, present = index.matrix(it)
        values = []
        for c, true in enumerate(it.truth):
            wrong = false_texts(it, c)
            if true and wrong and present[c][list(true) + wrong].all():
                values.append(float(np.min(scores[c][list(true)]) - np.max(scores[c][wrong])))
        margins[it.item_id] = min(values) if values else np.nan
    return pd.Series(margins, name="margin")


def item_flags(items: Sequence[Item], runs: Mapping[str, tuple[pd.DataFrame | None, pd.DataFrame | None]],
               metric: str | None = None) -> pd.DataFrame:
    """One row per main item: subset, ``<run> | <metric>`` correctness columns (1/0/NaN), ``disagree`` (runs differ
    on ``metric``, default each run's first metric), ``classic_not_strict`` (some run right under ClassicVLE and wrong
    under StrictVLE) and ``<run> | margin`` for runs with pair scores (in that run's score unit)."""
    main = [it for it in items if it.role == "main"]
    frame = pd.DataFrame({"item_id": [it.item_id for it in main], "subset": [it.subset for it in main]})
    frame = frame.set_index("item_id")
    headline, classic_not_strict = [], pd.Series(False, index=frame.index)
    for label, (pair, choice) in runs.items():
        correct = item_correct(items, pair, choice).reindex(frame.index)
        for column in correct.columns:
            frame[f"{label} | {column}"] = correct[column]
        if len(correct.columns):
            headline.append(correct[metric if metric in correct.columns else correct.columns[0]])
        if {"ClassicVLE", "StrictVLE"} <= set(correct.columns):
            classic_not_strict |= (correct["ClassicVLE"] == 1) & (correct["StrictVLE"] == 0)
        if pair is not None and len(pair):
            frame[f"{label} | margin"] = score_margin(main, pair).reindex(frame.index)
    frame["disagree"] = pd.concat(headline, axis=1).nunique(axis=1, dropna=True).gt(1) if len(headline) > 1 else False
    frame["classic_not_strict"] = classic_not_strict
    return frame.reset_index()

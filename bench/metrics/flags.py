"""Per-item tables for error analysis across runs, in long form: each run's correctness per item and metric, the
score margin of the true text over the best false one, and the flags the item browser filters on (wrong somewhere,
runs disagree, ClassicVLE right but StrictVLE wrong)."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from bench.items import Item
from bench.metrics.dispatch import benchmark_outcomes
from bench.metrics.outcomes import ScoreIndex, false_texts

Tables = Mapping[str, tuple[pd.DataFrame | None, pd.DataFrame | None]]


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
    return pd.Series(margins, name="margin", dtype=float)


def run_outcomes(items: Sequence[Item], runs: Tables) -> pd.DataFrame:
    """Columns run, item_id, metric, value: every run's per-item outcomes (``runs``: label -> (pair, choice))."""
    parts = [benchmark_outcomes(items, pair, choice)[["item_id", "metric", "value"]].assign(run=label)
             for label, (pair, choice) in runs.items()]
    columns = ["run", "item_id", "metric", "value"]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


def run_margins(items: Sequence[Item], runs: Tables) -> pd.DataFrame:
    """Columns run, item_id, margin (in each run's score unit) for the runs with pair scores."""
    main = [it for it in items if it.role == "main"]
    parts = [score_margin(main, pair).rename_axis("item_id").reset_index().assign(run=label)
             for label, (pair, _) in runs.items() if pair is not None and len(pair)]
    columns = ["run", "item_id", "margin"]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


def item_flags(items: Sequence[Item], outcomes: pd.DataFrame, metric: str | None = None) -> pd.DataFrame:
    """One row per main item: item_id, subset, ``wrong`` (wrong on some metric of some run), ``disagree`` (runs
    differ on ``metric``, default each run's first metric) and ``classic_not_strict`` (some run right under
    ClassicVLE and wrong under StrictVLE). ``outcomes`` is :func:`run_outcomes`."""
    main = [it for it in items if it.role == "main"]
    frame = pd.DataFrame({"item_id": [it.item_id for it in main], "subset": [it.subset for it in main]})
    ids = frame["item_id"]
    wrong = set(outcomes.loc[outcomes["value"] == 0, "item_id"])
    headline = []
    for _, own in outcomes.groupby("run", sort=False):
        chosen = metric if metric in set(own["metric"]) else own["metric"].iloc[0]
        headline.append(own[own["metric"] == chosen].set_index("item_id")["value"])
    disagree = (pd.concat(headline, axis=1).nunique(axis=1, dropna=True) > 1) if len(headline) > 1 else None
    wide = outcomes[outcomes["metric"].isin(["ClassicVLE", "StrictVLE"])].pivot_table(
        index=["run", "item_id"], columns="metric", values="value", aggfunc="first")
    classic_not_strict: set = set()
    if {"ClassicVLE", "StrictVLE"} <= set(wide.columns):
        hits = wide[(wide["ClassicVLE"] == 1) & (wide["StrictVLE"] == 0)]
        classic_not_strict = set(hits.index.get_level_values("item_id"))
    return frame.assign(wrong=ids.isin(wrong),
                        disagree=ids.map(disagree).fillna(False).astype(bool) if disagree is not None else False,
                        classic_not_strict=ids.isin(classic_not_strict))

"""Aggregating per-item outcomes into metric tables: rows = metric x group, with value, interval, chance and test.

:func:`summarize` aggregates an outcomes frame (see :mod:`bench.metrics.outcomes`) over all items, per subset and per
label; :func:`mean_of_means_row` averages per-group rates (the papers' "Avg." columns). Benchmark modules build on these;
:mod:`bench.metrics.dispatch` picks the benchmark's module.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from bench.items import Item, items_frame
from bench.metrics import intervals

TABLE_COLUMNS = ["metric", "by", "subset", "value", "ci_low", "ci_high", "chance", "n", "n_missing", "n_nan",
                 "n_unparsed", "p_value", "significant", "test", "note"]
ALL = "all"


@dataclass(frozen=True)
class Settings:
    """How intervals and tests are computed: bootstrap replicates, interval level, seed, significance level."""

    n_boot: int = intervals.DEFAULT_BOOT
    level: float = intervals.DEFAULT_LEVEL
    seed: int = intervals.DEFAULT_SEED
    alpha: float = 0.05

    def __post_init__(self) -> None:
        if self.n_boot < 1:
            raise ValueError(f"n_boot must be at least 1, got {self.n_boot}")
        if not 0 < self.level < 1 or not 0 < self.alpha < 1:
            raise ValueError(f"level and alpha must lie in (0, 1), got {self.level}, {self.alpha}")


def row(metric: str, by: str, subset: str, value: float, ci: tuple[float, float], chance: float, n: int,
        p_value: float, settings: Settings, test: str, *, n_missing: int = 0, n_nan: int = 0, n_unparsed: int = 0,
        note: str = "") -> dict:
    """One table row; ``significant`` is ``p_value < alpha`` (False when there is no test)."""
    significant = bool(not math.isnan(p_value) and p_value < settings.alpha)
    return {"metric": metric, "by": by, "subset": subset, "value": value, "ci_low": ci[0], "ci_high": ci[1],
            "chance": chance, "n": int(n), "n_missing": int(n_missing), "n_nan": int(n_nan),
            "n_unparsed": int(n_unparsed), "p_value": p_value, "significant": significant, "test": test,
            "note": note}


def summarize_group(metric: str, by: str, subset: str, group: pd.DataFrame, settings: Settings,
                    note: str = "") -> dict:
    """The row of one metric over one group of outcomes: mean, bootstrap interval, mean chance and a test.

    Success metrics (0/1 values) are tested with the exact Poisson-binomial test against the per-item chances
    (binomial when they are all equal); other values get the interval only.
    """
    values = group["value"].to_numpy(float)
    chances = group["chance"].to_numpy(float)
    status = group["status"]
    n = len(values)
    value = float(values.mean()) if n else float("nan")
    chance = float(chances.mean()) if n else float("nan")
    ci = intervals.bootstrap_ci(values, settings.n_boot, settings.level, settings.seed)
    p_value, test = float("nan"), ""
    if n and np.all((values == 0) | (values == 1)) and not np.any(np.isnan(chances)):
        p_value = intervals.poisson_binomial_test(int(values.sum()), chances)
        test = "binomial" if np.allclose(chances, chances[0]) else "poisson-binomial"
    return row(metric, by, subset, value, ci, chance, n, p_value, settings, test,
               n_missing=int((status == "missing").sum()), n_nan=int((status == "nan").sum()),
               n_unparsed=int((status == "unparsed").sum()), note=note)


def with_labels(outcomes: pd.DataFrame, items: Sequence[Item], by: Sequence[str]) -> pd.DataFrame:
    """``outcomes`` with the items' label columns ``by`` joined on ``item_id`` (unknown labels raise)."""
    by = [b for b in dict.fromkeys(by) if b not in outcomes.columns]
    if not by:
        return outcomes
    frame = items_frame(items)
    unknown = [b for b in by if b not in frame.columns]
    if unknown:
        raise ValueError(f"no item label named {unknown}; labels here: {sorted(set(frame.columns) - {'texts'})}")
    return outcomes.merge(frame[["item_id", *by]].drop_duplicates("item_id"), on="item_id", how="left")


def summarize(outcomes: pd.DataFrame, settings: Settings = Settings(), by: Sequence[str] = (),
              notes: dict[str, str] | None = None) -> pd.DataFrame:
    """Rows for every metric: over all items, per subset, and per value of each label column in ``by``.

    A label holding a list (Vinoground's ``minor``) counts the item under each of its values. ``notes`` maps a
    metric to a note repeated on its rows.
    """
    notes = notes or {}
    rows = []
    for metric, frame in outcomes.groupby("metric", sort=False):
        note = notes.get(metric, "")
        rows.append(summarize_group(metric, ALL, ALL, frame, settings, note))
        for column in dict.fromkeys(("subset", *by)):
            if column not in frame.columns:
                continue
            exploded = frame.explode(column) if frame[column].map(lambda v: isinstance(v, list)).any() else frame
            exploded = exploded[exploded[column].notna() & (exploded[column].astype(str) != "")]
            for value, group in exploded.groupby(column, sort=True):
                rows.append(summarize_group(metric, column, str(value), group, settings, note))
    return pd.DataFrame(rows, columns=TABLE_COLUMNS)


def mean_of_means_row(outcomes: pd.DataFrame, metric: str, groups: dict[str, Sequence[str]], name: str,
                      settings: Settings, *, by: str = ALL, subset: str = ALL, note: str = "") -> dict | None:
    """A row averaging one metric's per-group success rates (ViLMA "Avg." P+T, VELOCITI "Avg").

    ``groups`` maps a group name to the subsets it pools (micro within a group, macro across groups). The interval
    resamples items within each group; the test draws each group's successes from its exact null distribution.
    """
    frame = outcomes[outcomes["metric"] == metric]
    parts = [(g, frame[frame["subset"].isin(list(subs))]) for g, subs in groups.items()]
    parts = [(g, p) for g, p in parts if len(p)]
    if not parts:
        return None
    means = [p["value"].mean() for _, p in parts]
    value = float(np.mean(means))
    chance = float(np.mean([p["chance"].mean() for _, p in parts]))
    boots = np.mean([intervals.bootstrap_means(p["value"].to_numpy(float), settings.n_boot, settings.seed + i)
                     for i, (_, p) in enumerate(parts)], axis=0)
    tail = (1 - settings.level) / 2 * 100
    ci = tuple(float(x) for x in np.percentile(boots, [tail, 100 - tail]))
    p_value = intervals.null_test_of_mean_of_means(value, [p["chance"].to_numpy(float) for _, p in parts],
                                                   seed=settings.seed)
    status = pd.concat([p["status"] for _, p in parts])
    return row(name, by, subset, value, ci, chance, int(sum(len(p) for _, p in parts)), p_value, settings,
               "null simulation", n_missing=int((status == "missing").sum()), n_nan=int((status == "nan").sum()),
               n_unparsed=int((status == "unparsed").sum()),
               note=note or f"mean over {len(parts)} groups: {', '.join(g for g, _ in parts)}")

"""Aggregating per-item outcomes into metric tables: rows = metric x group, with value, interval, chance and test.

:func:`summarize` aggregates an outcomes frame (see :mod:`bench.metrics.outcomes`) over all items, per subset and per
label; :func:`mean_of_means_row` averages per-group rates (the papers' "Avg." columns); :func:`with_holm` adds the
Holm-corrected flags. Which interval and test each kind of row gets is in :mod:`bench.metrics.intervals`. Benchmark
modules build on these; :mod:`bench.metrics.dispatch` picks the benchmark's module.

A row's value, interval and ``strict`` value follow the tie policy of its outcomes; its test against chance
(``p_value``, ``significant``) counts a tie as no more than a fair coin's share (:func:`tested`: the lesser of the
item's value and its ``expected`` credit, whatever the policy), so a tie never makes a row significant: a model that
scores everything alike is at chance or below, never starred. The row's ``expected`` column is its value with every
tie at a fair coin's share. Without a tie (or under the ``strict`` policy) the test is dual to the interval (starred
exactly when chance lies below it).
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
                 "n_unparsed", "n_tie", "n_dropped", "strict", "expected", "p_value", "significant", "p_holm",
                 "significant_holm", "test", "note"]
ALL = "all"
# Metrics whose per-item values are numbers to average rather than successes (bootstrap, not Clopper-Pearson).
MEAN_METRICS = frozenset({"AP"})
BINOMIAL = "exact binomial"
MOVER = "MOVER (Clopper-Pearson per group)"
BOOTSTRAP = "bootstrap"
BOUNDED = "Clopper-Pearson on the mean (no bootstrap spread)"
MCNEMAR = "exact McNemar (two-sided)"
TWO_SIDED_TESTS = frozenset({MCNEMAR})
UNINFORMATIVE = "none: chance is 100%"
UNINFORMATIVE_NOTE = "chance is 100% here (e.g. R@k with at most k candidates): every scorer succeeds; uninformative"


@dataclass(frozen=True)
class Settings:
    """How intervals and tests are computed: bootstrap replicates (for the rows without a closed form), interval
    level and seed. Significance is one-sided at ``(1 - level) / 2`` (chance below the interval), two-sided at
    ``1 - level`` for two-sided tests (chance outside it)."""

    n_boot: int = intervals.DEFAULT_BOOT
    level: float = intervals.DEFAULT_LEVEL
    seed: int = intervals.DEFAULT_SEED

    def __post_init__(self) -> None:
        if self.n_boot < 1:
            raise ValueError(f"n_boot must be at least 1, got {self.n_boot}")
        if not 0 < self.level < 1:
            raise ValueError(f"level must lie in (0, 1), got {self.level}")

    @property
    def alpha(self) -> float:
        """The one-sided significance level of "better than chance": ``(1 - level) / 2``."""
        return intervals.one_sided_alpha(self.level)

    def threshold(self, test: str) -> float:
        """The level a p-value of ``test`` is compared with."""
        return 1.0 - self.level if test in TWO_SIDED_TESTS else self.alpha


def row(metric: str, by: str, subset: str, value: float, ci: tuple[float, float], chance: float, n: int,
        p_value: float, settings: Settings, test: str, *, n_missing: int = 0, n_nan: int = 0, n_unparsed: int = 0,
        n_tie: int = 0, n_dropped: int = 0, strict: float = float("nan"), expected: float = float("nan"),
        note: str = "") -> dict:
    """One table row; ``significant`` is ``p_value`` below the test's threshold (False when there is no test);
    ``expected``: the value with every tie counted as a fair coin's share (NaN when the row has no such value).

    ``p_holm`` and ``significant_holm`` start uncorrected; :func:`with_holm` corrects them per family.
    """
    significant = bool(not math.isnan(p_value) and p_value < settings.threshold(test))
    return {"metric": metric, "by": by, "subset": subset, "value": value, "ci_low": ci[0], "ci_high": ci[1],
            "chance": chance, "n": int(n), "n_missing": int(n_missing), "n_nan": int(n_nan),
            "n_unparsed": int(n_unparsed), "n_tie": int(n_tie), "n_dropped": int(n_dropped), "strict": strict,
            "expected": expected, "p_value": p_value, "significant": significant, "p_holm": p_value,
            "significant_holm": significant, "test": test, "note": note}


def resampled(value: float, samples: np.ndarray, n: int, chance: float, settings: Settings,
              tested: tuple[float, np.ndarray] | None = None) -> tuple[tuple[float, float], float, str]:
    """(interval, p-value, test) of a statistic in [0, 1] from its bootstrap replicates; when the replicates have no
    spread (every item alike, e.g. all wrong at n = 4) the bootstrap says nothing, and the Clopper-Pearson interval of
    the mean over ``n`` units (its dual test at ``chance``) is used instead of a collapsed [v, v].

    ``tested``: the statistic and its replicates with no tie counted above a fair coin's share, when they differ from
    ``value`` and ``samples``: the p-value is theirs, the interval stays ``value``'s."""
    tested_value, tested_samples = tested if tested is not None else (value, samples)
    finite = samples[~np.isnan(samples)] if len(samples) else samples
    if len(finite) and np.ptp(finite) > 0:
        return (intervals.bootstrap_interval(finite, settings.level),
                intervals.bootstrap_p_value(tested_samples, chance), BOOTSTRAP)
    return (intervals.clopper_pearson(value * n, n, settings.level),
            intervals.binomial_p_value(tested_value * n, n, chance), BOUNDED)


def _counted(group: pd.DataFrame) -> pd.DataFrame:
    return group[~group["dropped"]] if "dropped" in group.columns else group


def _counts(group: pd.DataFrame) -> dict[str, int]:
    counted = _counted(group)
    status = counted["status"]
    return {"n_missing": int((status == "missing").sum()), "n_nan": int((status == "nan").sum()),
            "n_unparsed": int((group["status"] == "unparsed").sum()),
            "n_tie": int(counted["tie"].sum()) if "tie" in counted.columns else 0,
            "n_dropped": int(group["dropped"].sum()) if "dropped" in group.columns else 0}


def resampled_test(values: np.ndarray, coin: np.ndarray,
                   settings: Settings) -> tuple[float, np.ndarray] | None:
    """``(mean, bootstrap replicates)`` of the :func:`tested` credits ``coin`` for :func:`resampled`'s test, or None
    when they are the ``values`` themselves (no tie counted above a fair coin's share)."""
    if np.array_equal(values, coin):
        return None
    return float(coin.mean()), intervals.bootstrap_means(coin, settings.n_boot, settings.seed)


def credits(group: pd.DataFrame, policy: str) -> np.ndarray:
    """The outcomes' credits under ``policy`` (``"strict"`` or ``"expected"``; the ``value`` column when the frame
    does not carry that policy's)."""
    return group[policy if policy in group.columns else "value"].to_numpy(float)


def tested(group: pd.DataFrame) -> np.ndarray:
    """The credits a test against chance counts: each outcome's value, a tie at no more than a fair coin's share
    (the lesser of its value and its ``expected`` credit; the value for frames without that column)."""
    values = group["value"].to_numpy(float)
    return np.minimum(values, group["expected"].to_numpy(float)) if "expected" in group.columns else values


def _mean(values: np.ndarray) -> float:
    return float(values.mean()) if len(values) else float("nan")


def summarize_group(metric: str, by: str, subset: str, group: pd.DataFrame, settings: Settings,
                    note: str = "") -> dict:
    """The row of one metric over one group of outcomes: mean over the counted items, interval, mean chance, test.

    Successes (0/1, or fractional credit) get the Clopper-Pearson interval and the exact binomial test at the mean
    chance; :data:`MEAN_METRICS` get the bootstrap; the test counts the :func:`tested` credits (a tie at no more than
    a fair coin's share), the interval the values. Dropped items are left out of the value and of ``n`` and
    counted in ``n_dropped``; ``strict`` is the value when every tie fails, over the same ``n`` items as ``value``
    (every column of a row shares one denominator).
    """
    counted = _counted(group)
    values, coin = counted["value"].to_numpy(float), tested(counted)
    n = len(values)
    value = _mean(values)
    chance = float(counted["chance"].mean()) if n else float("nan")
    extra = {**_counts(group), "strict": _mean(credits(counted, "strict")),
             "expected": _mean(credits(counted, "expected"))}
    if metric in MEAN_METRICS:
        samples = intervals.bootstrap_means(values, settings.n_boot, settings.seed)
        ci, p_value, test = resampled(value, samples, n, chance, settings, resampled_test(values, coin, settings))
        return row(metric, by, subset, value, ci, chance, n, p_value, settings, test, note=note, **extra)
    ci = intervals.clopper_pearson(float(values.sum()), n, settings.level)
    if n and chance >= 1.0 - 1e-12:
        return row(metric, by, subset, value, ci, chance, n, float("nan"), settings, UNINFORMATIVE,
                   note="; ".join(x for x in (note, UNINFORMATIVE_NOTE) if x), **extra)
    p_value = intervals.binomial_p_value(float(coin.sum()), n, chance)
    return row(metric, by, subset, value, ci, chance, n, p_value, settings, BINOMIAL if n else "", note=note, **extra)


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


def with_holm(table: pd.DataFrame, settings: Settings) -> pd.DataFrame:
    """``table`` with ``p_holm`` / ``significant_holm``: Holm's correction within each family of rows tested at once
    (one metric over the groups of one breakdown, e.g. every subset); rows over all items are their own family."""
    if not len(table):
        return table
    out = table.copy()
    out["p_holm"] = out["p_value"].astype(float)
    keys = [k for k in ("run", "metric", "by") if k in out.columns]
    for (*_, by), family in out.groupby(keys, sort=False):
        if by != ALL and len(family) > 1:
            out.loc[family.index, "p_holm"] = intervals.holm(family["p_value"].to_numpy(float))
    thresholds = out["test"].map(settings.threshold)
    out["significant_holm"] = (out["p_holm"] < thresholds).fillna(False).astype(bool)
    return out


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
    return with_holm(pd.DataFrame(rows, columns=TABLE_COLUMNS), settings)


def mean_of_means_row(outcomes: pd.DataFrame, metric: str, groups: dict[str, Sequence[str]], name: str,
                      settings: Settings, *, by: str = ALL, subset: str = ALL, note: str = "") -> dict | None:
    """A row averaging one metric's per-group success rates (ViLMA "Avg." P+T, VELOCITI "Avg").

    ``groups`` maps a group name to the subsets it pools (micro within a group, macro across groups). The interval
    is MOVER from each group's Clopper-Pearson limits; the test is its dual at the mean of the groups' chances, on the
    groups' :func:`tested` credits (a tie at no more than a fair coin's share).
    """
    frame = outcomes[outcomes["metric"] == metric]
    parts = [(g, frame[frame["subset"].isin(list(subs))]) for g, subs in groups.items()]
    parts = [(g, p) for g, p in parts if len(_counted(p))]
    if not parts:
        return None
    counted = [_counted(p) for _, p in parts]
    value = float(np.mean([c["value"].mean() for c in counted]))
    chance = float(np.mean([c["chance"].mean() for c in counted]))
    successes = [(float(c["value"].sum()), len(c)) for c in counted]
    coin = [(float(tested(c).sum()), len(c)) for c in counted]
    everything = pd.concat([p for _, p in parts])
    extra = {**_counts(everything), "strict": float(np.mean([_mean(credits(c, "strict")) for c in counted])),
             "expected": float(np.mean([_mean(credits(c, "expected")) for c in counted]))}
    return row(name, by, subset, value, intervals.mover_interval(successes, settings.level), chance,
               sum(len(c) for c in counted), intervals.mover_p_value(coin, chance), settings, MOVER,
               note=note or f"mean over {len(parts)} groups: {', '.join(g for g, _ in parts)}", **extra)

"""Metric tables: rows = metric x subset, columns value / ci_low / ci_high / chance / n / significant.

:func:`summarize` aggregates an outcomes frame (see :mod:`bench.metrics.correctness`); each benchmark module adds the
rows that are not plain means of per-item outcomes (AUROC, averages over tests, the choice bias). :func:`metric_table`
picks the benchmark's module; :func:`run_table` does the same for a stored run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

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


def as_items(items: Iterable[Item]) -> list[Item]:
    """An ItemSet or any iterable of items as a list."""
    return list(items)


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


def _modules() -> dict:
    from bench.metrics import velociti, videocon, vilma, vinoground, vitatecs

    return {"vilma": vilma, "vitatecs": vitatecs, "velociti": velociti, "videocon": videocon,
            "vinoground": vinoground}


def benchmark_of(items: Sequence[Item], benchmark: str | None = None) -> str:
    """The benchmark name: given, or the items' own (one benchmark per call)."""
    if benchmark:
        name = benchmark
    else:
        names = {it.benchmark for it in items}
        if len(names) != 1:
            raise ValueError(f"items must come from one benchmark, got {sorted(names) or 'no items'}")
        name = names.pop()
    key = name.lower()
    if key not in _modules():
        raise ValueError(f"no metrics for benchmark {name!r}; known: {sorted(_modules())}")
    return key


def benchmark_outcomes(items: Iterable[Item], pair: pd.DataFrame | None = None, choice: pd.DataFrame | None = None,
                       benchmark: str | None = None) -> pd.DataFrame:
    """The outcomes frame of the items' benchmark (see :mod:`bench.metrics.correctness`)."""
    items = as_items(items)
    return _modules()[benchmark_of(items, benchmark)].outcomes(items, pair, choice)


def metric_table(items: Iterable[Item], pair: pd.DataFrame | None = None, choice: pd.DataFrame | None = None, *,
                 benchmark: str | None = None, measure: str | None = None, settings: Settings = Settings(),
                 by: Sequence[str] | None = None) -> pd.DataFrame:
    """Every metric of the items' benchmark with interval, chance level and test.

    ``measure`` is the run's score measure (``bench.scoretables.MEASURES``); probability-only metrics (ViLMA's
    precision and AUROC) need ``"p_yes"``. ``by`` overrides the benchmark's default label breakdowns.
    """
    items = as_items(items)
    module = _modules()[benchmark_of(items, benchmark)]
    return module.table(items, pair, choice, measure=measure, settings=settings, by=by)


def expand_items(items: Iterable[Item], pair: pd.DataFrame | None, benchmark: str | None = None) -> list[Item]:
    """The items plus those a benchmark derives from them for whole-set metrics and the run scored (VITATECS'
    retrieval items); items already present are not repeated."""
    items = as_items(items)
    derive = getattr(_modules()[benchmark_of(items, benchmark)], "derived_items", None)
    if derive is None or pair is None or not len(pair):
        return items
    known = {it.item_id for it in items}
    return items + [it for it in derive(items, set(pair["item_id"])) if it.item_id not in known]


def coverage_notes(items: Iterable[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None,
                   failures: pd.DataFrame | None = None) -> list[str]:
    """What did not line up between the items and the score tables (items scored nowhere, unknown ids, failures)."""
    items = as_items(items)
    ids = {it.item_id for it in items}
    scored: set[str] = set()
    notes = []
    for name, table in (("pair", pair), ("choice", choice)):
        if table is not None and len(table):
            present = set(table["item_id"])
            scored |= present
            unknown = present - ids
            if unknown:
                notes.append(f"{len(unknown)} item id(s) in the {name} table are not among the items and were "
                             f"ignored, e.g. {sorted(unknown)[:3]}")
    unscored = ids - scored
    if unscored:
        notes.append(f"{len(unscored)} of {len(ids)} items have no score at all and count as failures, "
                     f"e.g. {sorted(unscored)[:3]}")
    if failures is not None and len(failures):
        reasons = failures.groupby("stage").size().to_dict()
        notes.append(f"{len(failures)} scoring failure(s) recorded by the run ({reasons}); those items count as "
                     f"failures")
    return notes


def run_table(run, settings: Settings = Settings(), by: Sequence[str] | None = None,
              items: Sequence[Item] | None = None) -> pd.DataFrame:
    """The metric table of a stored run (``bench.runstore.Run``), with ``run`` and ``benchmark`` columns first.

    ``items`` defaults to the run's items reloaded with ``bench.runstore.load_items``; derived items the run scored
    are added (:func:`expand_items`).
    """
    manifest = run.manifest
    if items is None:
        from bench.runstore import load_items

        items = load_items(run)
    items = expand_items(items, run.pair, manifest.get("benchmark"))
    table = metric_table(items, run.pair, run.choice, benchmark=manifest.get("benchmark"),
                         measure=manifest.get("measure"), settings=settings, by=by)
    table.insert(0, "run", run_label(run))
    table.insert(1, "benchmark", benchmark_of(items, manifest.get("benchmark")))
    return table


def run_label(run) -> str:
    """The run's short name for tables: the manifest's ``name``, else its folder name."""
    return str(run.manifest.get("name") or Path(str(run.path)).name)

"""Runs pooled over benchmarks by an item label: the same model set-up scored on several benchmarks, one judgement
per item (did the true text win?), then accuracy per value of an item label (e.g. one joined from a ``labels.csv``)
with its exact interval, mean chance level and the exact binomial test against it.

Each item is judged by its benchmark's ``item_score`` (:class:`bench.registry.BenchmarkSpec`): the first of those
per-item outcomes its benchmark's metric module gives for the item (ViLMA ``T``, VITATECS ``accuracy``, VELOCITI
``ClassicVLE`` or ``MC A∧B``, VideoCon ``caption > contrast``, or ``accuracy`` for its ATP-Hard questions, Vinoground
``text``). Runs are pooled by their label (the manifest's ``name``): give the runs of one set-up the same name.

Pooling mixes benchmarks whose released code breaks ties differently (ViLMA's caption wins a tie, VITATECS' loses it),
so the pooled judgement follows no benchmark's rule: a tied item is not told apart (wrong), as in ``compare``; under
the ``expected`` policy it counts a fair coin's share. Either way a tie counts no more than a fair coin's share in
the test against chance, which is dual to the interval, and each row says how many of its items a tie decided
(``tied``).
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import pandas as pd

from bench.metrics.dispatch import benchmark_outcomes
from bench.metrics.intervals import binomial_p_value, clopper_pearson
from bench.metrics.ties import DEFAULT_TIES
from bench.registry import spec

ITEM_COLUMNS = ["run", "benchmark", "item_id", "subset", "metric", "value", "strict", "expected", "tie", "chance",
                "status"]
POOLED_COLUMNS = ["run", "label", "value", "accuracy", "low", "high", "n", "chance", "p", "above", "tied"]


def item_scores(run, ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """One row per main item of a stored run (``bench.store.Run``) that its benchmark judges one by one:
    :data:`ITEM_COLUMNS` (value 1 right, 0 wrong, a fraction under the ``expected`` tie policy; ``strict`` and
    ``expected``: its credit under those policies, ``tie``: a tie decided it; an item that failed to score is wrong,
    as in its outcomes; ``metric``: the per-item score that judged it; ``status``: its outcome's,
    "missing" for an item the run did not score) plus every label of the items: the run's own items, those its
    benchmark's official scoring drops left out as in its metric tables. Items judged only together (VideoCon's
    SSv2-Temporal retrieval, by AP over every caption) are left out."""
    benchmark = spec(run.manifest.benchmark)
    items = [it for it in run.items() if it.role == "main"]
    outcomes = benchmark_outcomes(items, run.pair, run.choice, benchmark=benchmark.name, ties=ties)
    rank = {m: i for i, m in enumerate(benchmark.item_score)}
    scored = outcomes[outcomes["metric"].isin(rank) & ~outcomes["dropped"]]  # as the metric tables: official drops
    if scored.empty:
        raise ValueError(f"run {run.label!r} has none of {benchmark.title}'s per-item scores "
                         f"{list(benchmark.item_score)} (it has {sorted(set(outcomes['metric']))})")
    # each item by the first per-item score it has: one run may hold items of several kinds (VideoCon's caption
    # pairs and its ATP-Hard questions)
    judged = (scored.assign(rank=scored["metric"].map(rank)).sort_values("rank", kind="stable")
              .drop_duplicates("item_id")[["item_id", "metric", "value", "strict", "expected", "tie", "chance",
                                           "status"]])
    labels = pd.DataFrame([{"item_id": it.item_id, "subset": it.subset, **it.labels} for it in items])
    labels = labels.loc[:, ~labels.columns.duplicated()]
    rows = labels.merge(judged, on="item_id")
    return rows.assign(run=run.label, benchmark=benchmark.name)[
        ITEM_COLUMNS + [c for c in labels.columns if c not in ITEM_COLUMNS]]


def judged(rows: pd.DataFrame, ties: str = DEFAULT_TIES) -> np.ndarray:
    """Each item's pooled judgement: its ``expected`` credit under the ``expected`` policy, else its ``strict`` one (a
    tie is not told apart); the ``value`` column for rows that carry neither."""
    column = "expected" if ties == "expected" else "strict"
    return rows[column if column in rows.columns else "value"].to_numpy(float)


def pooled_table(rows: pd.DataFrame, label: str, level: float = 0.95, ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """Per run and value of ``label`` (rows of :func:`item_scores`, any number of runs and benchmarks):
    :data:`POOLED_COLUMNS`: accuracy in % (:func:`judged` under ``ties``) with its Clopper-Pearson interval, items,
    mean chance (%), the one-sided exact binomial p-value against it, ``above`` (chance below the interval) and
    ``tied`` (items a tie decided). Items that failed to score count as wrong; items without the label are left
    out."""
    if label not in rows.columns:
        known = sorted(set(rows.columns) - set(ITEM_COLUMNS))
        raise ValueError(f"no item carries the label {label!r}; labels: {', '.join(known) or 'none'}")
    table = []
    labelled = rows[rows[label].notna() & (rows[label] != "")]
    for (run, value), group in labelled.groupby(["run", label], sort=False):
        right, n = float(np.nansum(judged(group, ties))), len(group)
        chance = float(group["chance"].mean())
        low, high = clopper_pearson(right, n, level)
        table.append({"run": run, "label": label, "value": value, "accuracy": 100 * right / n, "low": 100 * low,
                      "high": 100 * high, "n": n, "chance": 100 * chance, "p": binomial_p_value(right, n, chance),
                      "above": bool(low > chance), "tied": int(group["tie"].sum()) if "tie" in group.columns else 0})
    return pd.DataFrame(table, columns=POOLED_COLUMNS)


def pool_runs(runs: Iterable, label: str, level: float = 0.95, ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """:func:`pooled_table` of stored runs."""
    return pooled_table(pd.concat([item_scores(r, ties) for r in runs], ignore_index=True), label, level, ties)


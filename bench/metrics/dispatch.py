"""From a benchmark's name to its metrics: the one place that picks a benchmark's metric module (through the registry).

Each benchmark module (``vilma``, ``vitatecs``, ``velociti``, ``videocon``, ``vinoground``) follows
:class:`MetricModule`; the commands, report and widgets get any benchmark's tables and per-item outcomes through the
functions here (benchmark-specific analyses, such as VELOCITI's entailment scatter, they call on the module itself).
"""

from __future__ import annotations

from typing import Iterable, Protocol, Sequence

import pandas as pd

from bench.config import Manifest
from bench.items import Item
from bench.metrics.aggregate import TABLE_COLUMNS, Settings, with_holm
from bench.metrics.ties import DEFAULT_TIES, check, tie_warning
from bench.registry import spec


class MetricModule(Protocol):
    """What a benchmark's metric module provides.

    ``outcomes`` gives one row per (item, metric) (see :mod:`bench.metrics.outcomes`); ``table`` aggregates every
    metric of the benchmark (see :mod:`bench.metrics.aggregate`); both read the pair and the choice table, whichever
    a protocol produced, and take the tie policy ``ties`` (:mod:`bench.metrics.ties`). ``derived_items`` (optional)
    adds items a run can score beside the loaded ones (VITATECS' retrieval items).
    """

    def outcomes(self, items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
                 ties: str = DEFAULT_TIES) -> pd.DataFrame: ...

    def table(self, items: Sequence[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None = None, *,
              measure: str | None = None, settings: Settings = Settings(), by: Sequence[str] | None = None,
              ties: str = DEFAULT_TIES) -> pd.DataFrame: ...


def benchmark_of(items: Sequence[Item], benchmark: str | None = None) -> str:
    """The registered benchmark name: given, or the items' own (one benchmark per call)."""
    if not benchmark:
        names = {it.benchmark for it in items}
        if len(names) != 1:
            raise ValueError(f"items must come from one benchmark, got {sorted(names) or 'no items'}")
        benchmark = names.pop()
    return spec(benchmark).name


def module_for(benchmark: str) -> MetricModule:
    """The metric module of a registered benchmark."""
    return spec(benchmark).metrics_module()


def benchmark_outcomes(items: Iterable[Item], pair: pd.DataFrame | None = None, choice: pd.DataFrame | None = None,
                       benchmark: str | None = None, ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """The outcomes frame of the items' benchmark (see :mod:`bench.metrics.outcomes`) under tie policy ``ties``."""
    items = list(items)
    return module_for(benchmark_of(items, benchmark)).outcomes(items, pair, choice, ties=check(ties))


def metric_table(items: Iterable[Item], pair: pd.DataFrame | None = None, choice: pd.DataFrame | None = None, *,
                 benchmark: str | None = None, measure: str | None = None, settings: Settings = Settings(),
                 by: Sequence[str] | None = None, ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """Every metric of the items' benchmark with interval, chance level, test and Holm-corrected flag.

    ``ties`` is the tie policy (``official`` by default; every row also carries its ``strict`` value and ``n_tie``,
    the items a tie decided). ``measure`` is the run's score measure (``bench.store.schema.MEASURES``);
    probability-only metrics (ViLMA's precision and AUROC) need ``"p_yes"``. ``by`` overrides the benchmark's default
    label breakdowns.
    """
    items = list(items)
    module = module_for(benchmark_of(items, benchmark))
    table = module.table(items, pair, choice, measure=measure, settings=settings, by=by, ties=check(ties))
    return with_holm(table, settings)


def item_correct(items: Iterable[Item], pair: pd.DataFrame | None = None, choice: pd.DataFrame | None = None,
                 benchmark: str | None = None, ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """Per-item correctness, one row per item and one column per metric (NaN where a metric does not apply)."""
    long = benchmark_outcomes(items, pair, choice, benchmark=benchmark, ties=ties)
    wide = long.pivot_table(index="item_id", columns="metric", values="value", aggfunc="first", sort=False)
    wide.columns.name = None
    return wide


def expand_items(items: Iterable[Item], pair: pd.DataFrame | None, benchmark: str | None = None) -> list[Item]:
    """The items plus those a benchmark derives from them for whole-set metrics and the run scored (VITATECS'
    retrieval items); items already present are not repeated."""
    items = list(items)
    derive = getattr(module_for(benchmark_of(items, benchmark)), "derived_items", None)
    if derive is None or pair is None or not len(pair):
        return items
    known = {it.item_id for it in items}
    return items + [it for it in derive(items, set(pair["item_id"])) if it.item_id not in known]


def run_items(run) -> list[Item]:
    """The items a stored run's numbers are over, the one rule every table, breakdown and figure follows: the items
    the run was asked (a scored run: its stored items, ``--limit`` included; an import: the items its files
    answered), plus the derived items it scored (:func:`expand_items`). An item a run was not asked is never counted
    against it, whatever other runs share a table; an item it was asked but failed to score counts as a failure
    (``n_missing``)."""
    return expand_items(run.items(), run.pair, run.manifest.benchmark)


def scored_ids(pair: pd.DataFrame | None, choice: pd.DataFrame | None) -> set[str]:
    """The items with at least one score row."""
    return {i for table in (pair, choice) if table is not None and len(table) for i in table["item_id"]}


def coverage_notes(items: Iterable[Item], pair: pd.DataFrame | None, choice: pd.DataFrame | None,
                   failures: pd.DataFrame | None = None, manifest: Manifest | None = None) -> list[str]:
    """What did not line up between the items and the score tables (items scored nowhere, unknown ids, failures),
    and, for an import (``manifest``), the benchmark's items its files did not answer (not counted)."""
    ids = {it.item_id for it in items}
    scored: set[str] = set()
    notes = []
    extra = manifest.extra if manifest is not None else {}
    left = int(extra.get("not_answered") or 0)
    if left:
        notes.append(f"{left} of the benchmark's {extra.get('benchmark_items', len(ids) + left)} items were not "
                     f"answered by the imported file(s): not part of this run, not counted")
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
              items: Sequence[Item] | None = None, ties: str = DEFAULT_TIES) -> pd.DataFrame:
    """The metric table of a stored run (``bench.store.Run``), with ``run`` and ``benchmark`` columns first: the one
    table every command, the report and the demo print for a run (same run and settings, same numbers).

    ``items`` defaults to the run's own items (:func:`run_items`); derived items the run scored are added
    (:func:`expand_items`). A run with no score row for any of its items has no number: its table is empty.
    """
    benchmark = run.manifest.benchmark
    items = run_items(run) if items is None else expand_items(items, run.pair, benchmark)
    if not scored_ids(run.pair, run.choice) & {it.item_id for it in items}:
        table = pd.DataFrame(columns=TABLE_COLUMNS)
    else:
        table = metric_table(items, run.pair, run.choice, benchmark=benchmark, measure=run.manifest.measure,
                             settings=settings, by=by, ties=ties)
    table.insert(0, "run", run.label)
    table.insert(1, "benchmark", benchmark_of(items, benchmark))
    return table


def run_ties(run) -> tuple[int, int]:
    """``(tied, n)`` of a stored run: its items (retrieval queries, for a retrieval set) that a tie decided on some
    metric, of those its metrics count (the official drops left out)."""
    outcomes = benchmark_outcomes(run_items(run), run.pair, run.choice, benchmark=run.manifest.benchmark)
    tied = outcomes[~outcomes["dropped"]].groupby("item_id", sort=False)["tie"].any()
    return int(tied.sum()), len(tied)


def tie_line(run) -> str:
    """The one-line warning about a stored run whose ties decided a notable share of its items (:func:`run_ties`,
    :func:`bench.metrics.ties.tie_warning`); empty when they did not."""
    return tie_warning(*run_ties(run))

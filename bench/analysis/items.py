"""Several runs of one benchmark item by item: which items each run gets right, how hard each item is for all of
them, and every pair of runs compared on the items both scored.

Each item is judged by its benchmark's own per-item score (:func:`bench.metrics.pooled.item_scores`, from the
outcome functions of :mod:`bench.metrics.outcomes`): right when the true text won outright (full credit under the
``strict`` tie policy: a tie is not told apart, whatever the benchmark's official rule gives it), scored unless its
status is "missing" (not asked, or failed to score). Every table says how many items each run tied
(:func:`tie_counts`, :func:`tie_notes`). Margins are :func:`bench.metrics.flags.run_margins`'. Runs are
keyed by the names the caller gives (``foilbench compare``: the run folders as given).
"""

from __future__ import annotations

import itertools
import math
from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from bench.analysis.agreement import compare_pair
from bench.items import Item
from bench.metrics.flags import RunScores, run_margins
from bench.metrics.intervals import DEFAULT_LEVEL, clopper_pearson, holm
from bench.metrics.pooled import ITEM_COLUMNS, item_scores
from bench.metrics.ties import most_tied

LONG_COLUMNS = ["run", "item_id", "subset", "metric", "value", "status", "right", "tie", "scored", "margin"]
PAIR_COLUMNS = ["a", "b", "label", "value", "n", "agreement", "kappa", "kappa_ci", "mcnemar_p", "p_holm",
                "accuracy_a", "accuracy_b", "both", "only_a", "only_b", "neither", "kappa_se", "tied_a", "tied_b"]


def benchmark_of_runs(runs: Mapping[str, object]) -> str:
    """The one benchmark every run scored; a one-line error when they differ or there is none."""
    if not runs:
        raise ValueError("no run given")
    found = {key: run.manifest.benchmark for key, run in runs.items()}
    if len(set(found.values())) != 1:
        listed = ", ".join(f"{key} is {name}" for key, name in found.items())
        raise ValueError(f"runs of different benchmarks cannot be compared item by item: {listed}")
    return next(iter(found.values()))


class Judgements:
    """Each stored run's per-item judgements (:func:`~bench.metrics.pooled.item_scores`) and margins
    (:func:`~bench.metrics.flags.run_margins`), worked out once per run for every table that asks: the sections of one
    report share one, so a run compared with several others is judged once."""

    def __init__(self) -> None:
        # by id(run), each with its run held so that no other object can take that id meanwhile
        self._scores: dict[int, tuple[object, pd.DataFrame]] = {}
        self._margins: dict[int, tuple[object, pd.Series]] = {}

    def scores(self, run) -> pd.DataFrame:
        """:func:`~bench.metrics.pooled.item_scores` of ``run`` (a ``bench.store.Run``); do not modify it."""
        if id(run) not in self._scores:
            self._scores[id(run)] = (run, item_scores(run))
        return self._scores[id(run)][1]

    def margins(self, run) -> pd.Series:
        """Each main item's margin in ``run``, by item id."""
        if id(run) not in self._margins:
            own = [it for it in run.items() if it.role == "main"]
            found = run_margins(own, {"run": RunScores.of(run)}).set_index("item_id")["margin"]
            self._margins[id(run)] = (run, found)
        return self._margins[id(run)][1]


def item_outcomes(runs: Mapping[str, object],
                  judged: Judgements | None = None) -> tuple[pd.DataFrame, dict[str, Item]]:
    """Every run's judgement of every main item it was asked (:data:`LONG_COLUMNS` plus the items' labels), and the
    items by id. ``runs`` maps a name to a stored run (``bench.store.Run``) of one benchmark; ``judged``: the
    judgements already worked out (a report's)."""
    benchmark_of_runs(runs)
    judged = judged or Judgements()
    parts, items = [], {}
    for key, run in runs.items():
        own = [it for it in run.items() if it.role == "main"]
        items.update({it.item_id: it for it in own if it.item_id not in items})
        rows = judged.scores(run)
        margins = judged.margins(run)
        rows = rows.assign(run=key, right=rows["strict"].to_numpy(float) >= 1.0, tie=rows["tie"].astype(bool),
                           scored=rows["status"] != "missing", margin=rows["item_id"].map(margins).astype(float))
        labels = [c for c in rows.columns if c not in ITEM_COLUMNS and c not in LONG_COLUMNS]
        parts.append(rows[LONG_COLUMNS + labels])
    return pd.concat(parts, ignore_index=True), items


def shared_items(long: pd.DataFrame, a: str, b: str) -> pd.DataFrame:
    """The items runs ``a`` and ``b`` both scored: item_id, right_a, right_b, tie_a, tie_b and every label column."""
    labels = [c for c in long.columns if c not in LONG_COLUMNS]
    first = long[(long["run"] == a) & long["scored"]].set_index("item_id")
    second = long[(long["run"] == b) & long["scored"]].set_index("item_id")
    common = first.index.intersection(second.index)
    return pd.DataFrame({"item_id": common, "right_a": first.loc[common, "right"].to_numpy(bool),
                         "right_b": second.loc[common, "right"].to_numpy(bool),
                         "tie_a": first.loc[common, "tie"].to_numpy(bool),
                         "tie_b": second.loc[common, "tie"].to_numpy(bool), "subset": first.loc[common, "subset"],
                         **{c: first.loc[common, c].to_numpy() for c in labels}}).reset_index(drop=True)


def _pair_row(a: str, b: str, label: str | None, value, rows: pd.DataFrame, level: float) -> dict:
    stats = compare_pair(rows["right_a"].to_numpy(bool), rows["right_b"].to_numpy(bool), level)
    return {"a": a, "b": b, "label": label, "value": value, **stats, "p_holm": stats["mcnemar_p"],
            "tied_a": int(rows["tie_a"].sum()), "tied_b": int(rows["tie_b"].sum())}


def tie_counts(long: pd.DataFrame) -> pd.DataFrame:
    """Per run of :func:`item_outcomes`' rows, in order: ``run``, ``tied`` (scored items a tie decided, judged not
    told apart) and ``scored``."""
    scored = long[long["scored"]]
    runs = list(dict.fromkeys(long["run"]))
    tied = scored.groupby("run", sort=False)["tie"].sum().reindex(runs, fill_value=0)
    n = scored.groupby("run", sort=False).size().reindex(runs, fill_value=0)
    return pd.DataFrame({"run": runs, "tied": tied.to_numpy(int), "scored": n.to_numpy(int)})


def tie_notes(long: pd.DataFrame) -> list[str]:
    """The notes a table of these runs carries: how many items each run tied (tied items are judged not told apart),
    and a sentence for every run that tied most of them (:func:`bench.metrics.ties.most_tied`)."""
    counts = tie_counts(long)
    notes = ["Ties (judged not told apart, whatever a benchmark's official rule gives them): "
             + "; ".join(f"{r.run} {r.tied} of {r.scored}" for r in counts.itertuples()) + "."]
    return notes + [note for r in counts.itertuples() if (note := most_tied(r.run, r.tied, r.scored))]


def pair_table(long: pd.DataFrame, by: str | None = None, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Every pair of runs (in the order given) on the items both scored: :data:`PAIR_COLUMNS`. One row over all items
    (``label`` and ``value`` None, ``p_holm`` the McNemar p-value itself) and, with ``by`` (a label of the items, or
    ``subset``), one row per value of it, whose ``p_holm`` is corrected by Holm's method across the values of that
    pair. A pair with no shared item is a one-line error."""
    runs = list(dict.fromkeys(long["run"]))
    if len(runs) < 2:
        raise ValueError("compare needs at least two runs")
    if by is not None and by not in long.columns:
        known = sorted(set(long.columns) - set(LONG_COLUMNS)) + ["subset"]
        raise ValueError(f"no item carries the label {by!r}; labels: {', '.join(known)}")
    rows = []
    for a, b in itertools.combinations(runs, 2):
        shared = shared_items(long, a, b)
        if shared.empty:
            raise ValueError(f"runs {a} and {b} share no scored item")
        rows.append(_pair_row(a, b, None, None, shared, level))
        if by is None:
            continue
        labelled = shared[shared[by].notna() & (shared[by].astype(str) != "")]
        per_value = [_pair_row(a, b, by, value, group, level)
                     for value, group in labelled.groupby(labelled[by].astype(str), sort=True)]
        for row, corrected in zip(per_value, holm([r["mcnemar_p"] for r in per_value])):
            row["p_holm"] = float(corrected)
        rows += per_value
    return pd.DataFrame(rows, columns=PAIR_COLUMNS)


def item_table(long: pd.DataFrame, items: Mapping[str, Item] | None = None,
               level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """One row per item some run scored, hardest first: item_id, subset, ``runs_scored``, ``runs_right``,
    ``runs_tied`` (the runs a tie decided it for, none of them right), ``difficulty`` (the share of the runs that
    scored it that got it right) with its Clopper-Pearson interval
    (``difficulty_low``, ``difficulty_high``), ``right`` (the runs right, in order), ``all_fail``, ``only_run``
    (the one run right, when exactly one of several is; else empty), ``disagree`` (some runs right, some wrong),
    ``mean_margin``, one ``margin: RUN`` column per run, ``text`` (with ``items``: each text, true ones marked) and
    the labels."""
    runs = list(dict.fromkeys(long["run"]))
    scored = long[long["scored"]]
    labels = [c for c in long.columns if c not in LONG_COLUMNS]
    first = scored.drop_duplicates("item_id").set_index("item_id")  # items in the order they first appear
    ids = list(first.index)
    n = scored.groupby("item_id", sort=False).size().reindex(ids)
    right_runs = scored[scored["right"]].groupby("item_id", sort=False)["run"].agg(set)
    tied = scored.groupby("item_id", sort=False)["tie"].sum().reindex(ids, fill_value=0)
    margins = scored.pivot_table(index="item_id", columns="run", values="margin", aggfunc="first", dropna=False)
    margins = margins.reindex(index=ids, columns=runs)
    right_of = {i: [r for r in runs if r in right_runs.get(i, ())] for i in ids}
    counts = [(len(right_of[i]), int(n[i])) for i in ids]
    intervals = {c: clopper_pearson(*c, level) for c in set(counts)}  # few distinct counts: each once
    described = first[["subset", *labels]].to_dict("index")
    rows = []
    for item_id, (k, m), row_margins in zip(ids, counts, margins.to_numpy(float)):
        right = right_of[item_id]
        low, high = intervals[(k, m)]
        known = ~np.isnan(row_margins)
        rows.append({"item_id": item_id, "subset": described[item_id]["subset"], "runs_scored": m, "runs_right": k,
                     "runs_tied": int(tied[item_id]), "difficulty": k / m, "difficulty_low": low,
                     "difficulty_high": high, "right": right,
                     "all_fail": k == 0, "only_run": right[0] if k == 1 and m > 1 else "",
                     "disagree": 0 < k < m,
                     "mean_margin": float(np.mean(row_margins[known])) if known.any() else math.nan,
                     **{f"margin: {r}": float(v) for r, v in zip(runs, row_margins)},
                     "text": item_text(items[item_id]) if items and item_id in items else "",
                     **{c: described[item_id][c] for c in labels}})
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    return table.sort_values(["difficulty", "mean_margin", "item_id"], kind="stable",
                             na_position="last").reset_index(drop=True)


def item_text(item: Item) -> str:
    """An item's texts in one line: each text, the ones true of its first clip marked ``(true)``."""
    true = set(item.truth[0]) if item.truth else set()
    return " | ".join(f"{t}{' (true)' if n in true else ''}" for n, t in enumerate(item.texts))


def compare_runs(runs: Mapping[str, object], by: str | None = None,
                 level: float = DEFAULT_LEVEL) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(pairs, items)``: :func:`pair_table` and :func:`item_table` of stored runs of one benchmark."""
    long, items = item_outcomes(runs)
    return pair_table(long, by, level), item_table(long, items, level)


def agreement_matrix(pairs: pd.DataFrame, column: str = "kappa") -> pd.DataFrame:
    """Runs x runs of ``column`` of the all-items rows of :func:`pair_table` (1 on the diagonal for kappa and
    agreement)."""
    overall = pairs[pairs["label"].isna()]
    runs = list(dict.fromkeys([*overall["a"], *overall["b"]]))
    matrix = pd.DataFrame(np.nan, index=runs, columns=runs)
    for r in overall.itertuples():
        matrix.at[r.a, r.b] = matrix.at[r.b, r.a] = getattr(r, column)
    if column in ("kappa", "agreement"):
        for r in runs:
            matrix.at[r, r] = 1.0
    return matrix


def label_difficulty(items_table: pd.DataFrame, label: str, level: float = DEFAULT_LEVEL) -> pd.DataFrame:
    """Per value of ``label``: items, the mean difficulty (share of runs right) and the share of items every run
    fails, with its Clopper-Pearson interval."""
    if label not in items_table.columns:
        raise ValueError(f"no item carries the label {label!r}")
    rows = []
    for value, group in items_table.groupby(items_table[label].astype(str), sort=True):
        fails = int(group["all_fail"].sum())
        low, high = clopper_pearson(fails, len(group), level)
        rows.append({label: value, "items": len(group), "difficulty": float(group["difficulty"].mean()),
                     "all_fail": fails / len(group), "all_fail_low": low, "all_fail_high": high})
    return pd.DataFrame(rows)



def disagreements(long: pd.DataFrame, a: str, b: str) -> list[str]:
    """The items runs ``a`` and ``b`` both scored on which one is right and the other wrong (the discordant items
    of their pair row in :func:`pair_table`), in the order of ``a``'s rows."""
    shared = shared_items(long, a, b)
    return shared.loc[shared["right_a"] != shared["right_b"], "item_id"].tolist()

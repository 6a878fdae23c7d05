"""The item browser: a filterable, sortable list of the items its chosen runs scored; the selected item shows in the
pair viewer."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import ipywidgets as w
import numpy as np
import pandas as pd

from bench.analysis.items import LONG_COLUMNS, item_outcomes, item_table
from bench.items import Item
from bench.metrics.aggregate import ALL, Settings
from bench.metrics.dispatch import run_table
from bench.metrics.flags import OUTCOME_COLUMNS, RunScores, headline_metrics, item_flags, run_margins, run_outcomes
from bench.store import Run, read_run
from widgets.describe import number
from widgets.itemlist import ItemList
from widgets.runs import plain_first, union_items
from widgets.viewer import NOT_SCORED, PairViewer

FLAGS = {
    "all items": None,
    "wrong in some run": "wrong",
    "ClassicVLE right, StrictVLE wrong": "classic_not_strict",
    "runs disagree": "disagree",
}
MARKS = {1.0: "✓", 0.0: "✗"}
TIE = "tie"  # a tie decided the item: not told apart (counted not right here, whatever the official value)
ANALYSIS_COLUMNS = ["runs_scored", "runs_right", "difficulty"]  # bench.analysis's per-item table, of the chosen runs
FAILED = "failed"  # asked, but no score to judge (counted wrong by the metrics, as here)


class ItemBrowser(w.VBox):
    """Runs to browse (a multi-select, plain models first), filters (subset, flag), the metric the "correct" columns
    show, the item list (every item some chosen run scored; per run: right, wrong, failed or not scored, and the
    margin; over the chosen runs: runs right and difficulty, from ``bench.analysis``; click a column title to sort),
    and the pair viewer."""

    def __init__(self, runs: Sequence[Run | str | Path], items: Sequence[Item] | None = None, *, serve: bool = True,
                 proxy_folder: str | Path | None = None):
        self.run_list = plain_first([r if isinstance(r, Run) else read_run(r) for r in runs])
        if not self.run_list and items is None:
            raise ValueError("give at least one run (or the items to browse)")
        benchmarks = {str(r.manifest.benchmark) for r in self.run_list}
        if len(benchmarks) > 1:
            raise ValueError(f"the runs are of several benchmarks ({', '.join(sorted(benchmarks))}): browse one "
                             "benchmark at a time")
        self.items = {it.item_id: it for it in (items if items is not None else union_items(self.run_list))}
        self.benchmark = next(iter(self.items.values())).benchmark if self.items else ""
        self.asked = {r.label: set(self.items) if items is not None else {it.item_id for it in r.items()}
                      for r in self.run_list}
        self.outcomes = _concat([run_outcomes(self.own_items(r), {r.label: RunScores.of(r)}) for r in self.run_list],
                                OUTCOME_COLUMNS)
        self.margins = _concat([run_margins(self.own_items(r), {r.label: RunScores.of(r)}) for r in self.run_list],
                               ["run", "item_id", "margin"])
        self.long = (item_outcomes({r.label: r for r in self.run_list})[0] if self.run_list
                     else pd.DataFrame(columns=LONG_COLUMNS))
        self._scores: dict[str, pd.DataFrame] = {}
        self._analysis: dict[tuple[str, ...], pd.DataFrame] = {}
        self.viewer = PairViewer(self.run_list, serve=serve, proxy_folder=proxy_folder)
        self.viewer.on_navigate(self._navigate)
        labels = [r.label for r in self.run_list]
        self.picker = w.SelectMultiple(options=labels, value=tuple(labels), description="runs",
                                       rows=min(max(len(labels), 2), 8))
        self.metric = w.Dropdown(description="correct on")
        self._metric_options()
        self.flag = w.Dropdown(options=list(FLAGS), description="show")
        self.list = ItemList()
        self.count = w.Label()
        self.previous, self.next = w.Button(description="◀ previous"), w.Button(description="next ▶")
        self.pinned: list[str] | None = None
        self._judge()
        subsets = sorted({it.subset for it in self.items.values() if it.role == "main"})
        self.subset = w.Dropdown(options=["all"] + subsets, description="subset")
        for control in (self.subset, self.flag):
            control.observe(lambda _: self.refresh(), names="value")
        self.metric.observe(lambda _: (self._judge(), self.refresh()), names="value")
        self.picker.observe(lambda _: self._rechoose(), names="value")
        self.list.observe(lambda _: self.refresh(keep=True), names="sort")
        self.list.observe(self._selected, names="selected")
        self.previous.on_click(lambda _: self._navigate("previous"))
        self.next.on_click(lambda _: self._navigate("next"))
        super().__init__([self.picker, w.HBox([self.subset, self.flag, self.metric]), self.count, self.list,
                          w.HBox([self.previous, self.next]), self.viewer])
        self.refresh()

    def own_items(self, run: Run) -> list[Item]:
        """The items ``run`` was asked, in the browser's order."""
        return [it for item_id, it in self.items.items() if item_id in self.asked[run.label]]

    @property
    def chosen(self) -> list[Run]:
        """The runs chosen in the multi-select, plain models first."""
        return [r for r in self.run_list if r.label in self.picker.value]

    def _chosen_outcomes(self) -> pd.DataFrame:
        return self.outcomes[self.outcomes["run"].isin(self.picker.value)]

    def chosen_long(self) -> pd.DataFrame:
        """The chosen runs' judgements of their items as ``bench.analysis`` makes them
        (:func:`bench.analysis.items.item_outcomes`)."""
        return self.long[self.long["run"].isin(self.picker.value)]

    def item_analysis(self) -> pd.DataFrame:
        """``bench.analysis``'s per-item table of the chosen runs (:func:`bench.analysis.items.item_table`): runs
        right, difficulty (the share of the runs that scored an item that got it right), labels."""
        key = tuple(self.picker.value)
        if key not in self._analysis:
            long = self.chosen_long()
            empty = pd.DataFrame(columns=["item_id", *ANALYSIS_COLUMNS])
            self._analysis[key] = item_table(long) if len(long) else empty
        return self._analysis[key]

    def _metric_options(self) -> None:
        """The metrics of the chosen runs (the first plain run's first); the current one kept when it applies."""
        metrics = list(dict.fromkeys(self._chosen_outcomes()["metric"]))
        current = self.metric.value
        self.metric.options = metrics
        self.metric.value = current if current in metrics else (metrics[0] if metrics else None)

    def _rechoose(self) -> None:
        self.viewer.run_list = self.chosen
        with self.metric.hold_trait_notifications():
            self._metric_options()
        self._judge()
        self.refresh()

    @property
    def headline(self) -> dict[str, str]:
        """Per chosen run, the metric its "correct" column shows (the chosen one where it applies, else the run's
        first)."""
        return headline_metrics(self._chosen_outcomes(), self.metric.value)

    def engine_value(self, run: str, metric: str) -> tuple[float, int, float, int]:
        """The run's overall value, item count, strict value and items a tie decided on ``metric``, as ``foilbench
        metrics`` computes them (its ✓ marks count the strict value: a tie is marked apart, not right)."""
        if run not in self._scores:
            stored = next(r for r in self.run_list if r.label == run)
            self._scores[run] = run_table(stored, Settings(n_boot=1), by=())
        table = self._scores[run]
        row = table[(table["metric"] == metric) & (table["by"] == ALL)]
        if not len(row):
            return float("nan"), 0, float("nan"), 0
        found = row.iloc[0]
        return float(found["value"]), int(found["n"]), float(found["strict"]), int(found["n_tie"])

    def _judge(self) -> None:
        """The wide item table over the items some chosen run was asked: flags, and per run its outcome on its
        headline metric ("correct", NaN unless judged), what its cell shows ("state") and the margin."""
        chosen = {r.label for r in self.chosen}
        scored = set().union(*(self.asked[label] for label in chosen)) if chosen else set()
        listed = [it for item_id, it in self.items.items() if item_id in scored]
        outcomes = self._chosen_outcomes()
        table = item_flags(listed, outcomes, self.metric.value)
        for run, metric in self.headline.items():
            own = outcomes[(outcomes["run"] == run) & (outcomes["metric"] == metric)].set_index("item_id")
            ok = own[own["status"] == "ok"]
            table[f"correct:{run}"] = table["item_id"].map(ok["strict"])
            state = table[f"correct:{run}"].map(MARKS).mask(table["item_id"].map(ok["tie"]).fillna(False).astype(bool),
                                                             TIE)
            asked = table["item_id"].isin(self.asked[run])
            table[f"state:{run}"] = state.where(state.notna(), np.where(asked, FAILED, NOT_SCORED))
        for run in self.headline:
            margin = self.margins[self.margins["run"] == run].set_index("item_id")["margin"]
            table[f"margin:{run}"] = table["item_id"].map(margin)
        analysis = self.item_analysis().set_index("item_id")
        for column in ANALYSIS_COLUMNS:
            table[column] = table["item_id"].map(analysis[column])
        self.table = table.assign(order=np.arange(len(table)))
        columns = [{"key": "order", "title": "#", "group": "", "kind": "number"},
                   {"key": "item_id", "title": "item", "group": "", "kind": "text"},
                   {"key": "subset", "title": "subset", "group": "", "kind": "text"},
                   {"key": "runs_right", "title": "runs right", "group": "", "kind": "number"},
                   {"key": "difficulty", "title": "difficulty", "group": "", "kind": "number"}]
        for run, metric in self.headline.items():
            columns += [{"key": f"correct:{run}", "title": metric, "group": run, "kind": "correct"},
                        {"key": f"margin:{run}", "title": "margin", "group": run, "kind": "number"}]
        self.list.columns = columns

    def scored_counts(self) -> dict[str, int]:
        """Per chosen run, how many of the listed main items it was asked."""
        ids = set(self.table["item_id"])
        return {r.label: len(self.asked[r.label] & ids) for r in self.chosen}

    def count_line(self, shown: int) -> str:
        """What the list holds: items shown of listed, and per chosen run the items it scored and its value on the
        metric its column shows (the engine's number)."""
        parts = []
        for run, scored in self.scored_counts().items():
            metric = self.headline.get(run)
            if metric is None:
                parts.append(f"{run}: {scored} scored, no metric of {self.benchmark} applies to its scores")
                continue
            value, n, strict, tied = self.engine_value(run, metric)
            ties = f", {tied} tied: strict {100 * strict:.1f} %" if tied else ""
            parts.append(f"{run}: {scored} scored, {metric} {100 * value:.1f} % (n {n}{ties})")
        pinned = " (selected in a plot)" if self.pinned is not None else ""
        return f"{shown} of {len(self.table)} items{pinned} · " + " · ".join(parts)

    def rows(self) -> pd.DataFrame:
        """The item table filtered and sorted as the controls say (missing values last in either direction)."""
        rows = self.table
        if self.pinned is not None:
            rows = rows[rows["item_id"].isin(self.pinned)]
        if self.subset.value != "all":
            rows = rows[rows["subset"] == self.subset.value]
        column = FLAGS[self.flag.value]
        if column:
            rows = rows[rows[column].astype(bool)]
        key, descending = self.list.sort
        if key in rows:
            rows = rows.sort_values([key, "order"], ascending=[not descending, True], kind="stable",
                                    na_position="last")
        return rows

    def _cells(self, row: pd.Series) -> list[str]:
        cells = []
        for column in self.list.columns:
            value = row[column["key"]]
            if column["kind"] == "correct":
                cells.append(row["state:" + column["key"].split(":", 1)[1]])
            elif column["key"] == "order":
                cells.append(str(int(value) + 1))
            elif column["key"] == "runs_right":
                cells.append("–" if pd.isna(value) else f"{int(value)}/{int(row['runs_scored'])}")
            elif column["key"] == "difficulty":
                cells.append(number(value))
            elif column["kind"] == "number":
                cells.append(number(value, signed=True))
            else:
                cells.append(str(value))
        return cells

    def refresh(self, keep: bool = False) -> None:
        """Apply the filters and the sort; show the first item (``keep``: the selected one, if still listed)."""
        rows = self.rows()
        self.list.rows = [{"id": r["item_id"], "cells": self._cells(r)} for _, r in rows.iterrows()]
        self.count.value = self.count_line(len(rows))
        ids = rows["item_id"].tolist()
        if not (keep and self.list.selected in ids):
            self.list.selected = ids[0] if ids else ""

    def ids(self) -> list[str]:
        """The listed item ids, in the order shown."""
        return [r["id"] for r in self.list.rows]

    def select(self, item_ids: Sequence[str] | None) -> None:
        """Restrict the list to ``item_ids`` (from a plot selection; None or empty lifts it)."""
        self.pin(list(item_ids) if item_ids else None)

    def pin(self, item_ids: Sequence[str] | None) -> None:
        """Restrict the list to exactly ``item_ids`` (empty: no item); None lifts it."""
        self.pinned = list(item_ids) if item_ids is not None else None
        self.refresh()

    def _selected(self, change) -> None:
        if change["new"]:
            self.show(change["new"])

    def show(self, item_id: str) -> None:
        """Display one item in the viewer."""
        item = self.items[item_id]
        twin = self.items.get(item.twin_id) if item.twin_id else None
        self.viewer.show(item, twin, outcomes=self.outcomes, margins=self.margins)

    def _navigate(self, direction: str) -> None:
        ids = self.ids()
        if not ids:
            return
        here = ids.index(self.list.selected) if self.list.selected in ids else 0
        step = 1 if direction == "next" else -1 if direction == "previous" else 0
        self.list.selected = ids[(here + step) % len(ids)]


def _concat(parts: list[pd.DataFrame], columns: list[str]) -> pd.DataFrame:
    kept = [p[columns] for p in parts if len(p)]
    return pd.concat(kept, ignore_index=True) if kept else pd.DataFrame(columns=columns)

"""The item browser: a filterable, sortable list of items across runs; the selected item shows in the pair viewer."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import ipywidgets as w
import numpy as np
import pandas as pd

from bench.items import Item
from bench.metrics.flags import RunScores, headline_metrics, item_flags, run_margins, run_outcomes
from bench.store import Run, read_run
from widgets.describe import number
from widgets.itemlist import ItemList
from widgets.viewer import PairViewer

FLAGS = {
    "all items": None,
    "wrong in some run": "wrong",
    "ClassicVLE right, StrictVLE wrong": "classic_not_strict",
    "runs disagree": "disagree",
}
MARKS = {1.0: "✓", 0.0: "✗"}


class ItemBrowser(w.VBox):
    """Filters (subset, flag), the metric the "correct" columns show, the item list (per run: correct or not and
    margin; click a column title to sort), and the pair viewer."""

    def __init__(self, runs: Sequence[Run | str | Path], items: Sequence[Item] | None = None, *, serve: bool = True,
                 proxy_folder: str | Path | None = None):
        self.run_list = [r if isinstance(r, Run) else read_run(r) for r in runs]
        if not self.run_list and items is None:
            raise ValueError("give at least one run (or the items to browse)")
        benchmarks = {str(r.manifest.get("benchmark")) for r in self.run_list}
        if len(benchmarks) > 1:
            raise ValueError(f"the runs are of several benchmarks ({', '.join(sorted(benchmarks))}): browse one "
                             "benchmark at a time")
        self.items = {it.item_id: it for it in (items if items is not None else self.run_list[0].items())}
        self.benchmark = next(iter(self.items.values())).benchmark if self.items else ""
        scores = {r.label: RunScores.of(r) for r in self.run_list}
        listed = list(self.items.values())
        self.outcomes = run_outcomes(listed, scores)
        self.margins = run_margins(listed, scores)
        self.shown_runs = list(dict.fromkeys(self.outcomes["run"]))
        self.unjudged = [r.label for r in self.run_list if r.label not in self.shown_runs]
        self.viewer = PairViewer(self.run_list, serve=serve, proxy_folder=proxy_folder)
        self.viewer.on_navigate(self._navigate)
        metrics = list(dict.fromkeys(self.outcomes["metric"]))
        self.metric = w.Dropdown(options=metrics, value=metrics[0] if metrics else None, description="correct on")
        self.flag = w.Dropdown(options=list(FLAGS), description="show")
        self.list = ItemList()
        self.count = w.Label()
        self.previous, self.next = w.Button(description="◀ previous"), w.Button(description="next ▶")
        self.pinned: list[str] | None = None
        self._judge()
        self.subset = w.Dropdown(options=["all"] + sorted(self.table["subset"].unique()), description="subset")
        for control in (self.subset, self.flag):
            control.observe(lambda _: self.refresh(), names="value")
        self.metric.observe(lambda _: (self._judge(), self.refresh()), names="value")
        self.list.observe(lambda _: self.refresh(keep=True), names="sort")
        self.list.observe(self._selected, names="selected")
        self.previous.on_click(lambda _: self._navigate("previous"))
        self.next.on_click(lambda _: self._navigate("next"))
        super().__init__([w.HBox([self.subset, self.flag, self.metric]), self.count, self.list,
                          w.HBox([self.previous, self.next]), self.viewer])
        self.refresh()

    @property
    def headline(self) -> dict[str, str]:
        """Per run, the metric its "correct" column shows (the chosen one where it applies, else the run's first)."""
        return headline_metrics(self.outcomes, self.metric.value)

    def _judge(self) -> None:
        """The wide item table: flags, and per run the outcome on its headline metric and the margin."""
        listed = list(self.items.values())
        table = item_flags(listed, self.outcomes, self.metric.value)
        for run, metric in self.headline.items():
            own = self.outcomes[(self.outcomes["run"] == run) & (self.outcomes["metric"] == metric)]
            ok = own[own["status"] == "ok"].set_index("item_id")["value"]
            table[f"correct:{run}"] = table["item_id"].map(ok)
        for run in self.shown_runs:
            margin = self.margins[self.margins["run"] == run].set_index("item_id")["margin"]
            table[f"margin:{run}"] = table["item_id"].map(margin)
        self.table = table.assign(order=np.arange(len(table)))
        columns = [{"key": "order", "title": "#", "group": "", "kind": "number"},
                   {"key": "item_id", "title": "item", "group": "", "kind": "text"},
                   {"key": "subset", "title": "subset", "group": "", "kind": "text"}]
        for run, metric in self.headline.items():
            columns += [{"key": f"correct:{run}", "title": metric, "group": run, "kind": "correct"},
                        {"key": f"margin:{run}", "title": "margin", "group": run, "kind": "number"}]
        self.list.columns = columns

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
                cells.append(MARKS.get(value, "–"))
            elif column["key"] == "order":
                cells.append(str(int(value) + 1))
            elif column["kind"] == "number":
                cells.append(number(value, signed=True))
            else:
                cells.append(str(value))
        return cells

    def refresh(self, keep: bool = False) -> None:
        """Apply the filters and the sort; show the first item (``keep``: the selected one, if still listed)."""
        rows = self.rows()
        self.list.rows = [{"id": r["item_id"], "cells": self._cells(r)} for _, r in rows.iterrows()]
        notes = [" (selected in a plot)" if self.pinned else ""]
        notes += [f"; {run}: no metric of {self.benchmark} applies to its scores" for run in self.unjudged]
        self.count.value = f"{len(rows)} of {len(self.table)} items" + "".join(notes)
        ids = rows["item_id"].tolist()
        if not (keep and self.list.selected in ids):
            self.list.selected = ids[0] if ids else ""

    def ids(self) -> list[str]:
        """The listed item ids, in the order shown."""
        return [r["id"] for r in self.list.rows]

    def select(self, item_ids: Sequence[str] | None) -> None:
        """Restrict the list to ``item_ids`` (from a plot selection; None or empty lifts it)."""
        self.pinned = list(item_ids) if item_ids else None
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

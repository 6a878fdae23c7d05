"""The item browser: a filterable, sortable list of items across runs; the selected item shows in the pair viewer."""

from __future__ import annotations

from typing import Sequence

import ipywidgets as w
import pandas as pd

from bench.items import Item
from bench.metrics.flags import item_flags, run_margins, run_outcomes
from bench.store import Run, read_run
from widgets.viewer import PairViewer

FLAGS = {
    "all items": None,
    "wrong in some run": "wrong",
    "ClassicVLE right, StrictVLE wrong": "classic_not_strict",
    "runs disagree": "disagree",
}


class ItemBrowser(w.VBox):
    """Filters (subset, flag), a sort (order or a run's score margin), the item list, and the pair viewer."""

    def __init__(self, runs: Sequence[Run | str], items: Sequence[Item] | None = None, *, serve: bool = True,
                 proxy_folder=None):
        self.run_list = [read_run(r) if isinstance(r, str) else r for r in runs]
        if not self.run_list and items is None:
            raise ValueError("give at least one run (or the items to browse)")
        self.items = {it.item_id: it for it in (items if items is not None else self.run_list[0].items())}
        tables = {r.label: (r.pair, r.choice) for r in self.run_list}
        self.outcomes = run_outcomes(list(self.items.values()), tables)
        self.margins = run_margins(list(self.items.values()), tables)
        self.table = item_flags(list(self.items.values()), self.outcomes)
        self.viewer = PairViewer(self.run_list, serve=serve, proxy_folder=proxy_folder)
        self.viewer.on_navigate(self._navigate)
        self.subset = w.Dropdown(options=["all"] + sorted(self.table["subset"].unique()), description="subset")
        self.flag = w.Dropdown(options=list(FLAGS), description="show")
        margin_runs = list(dict.fromkeys(self.margins["run"]))
        self.sort = w.Dropdown(options=["file order"] + [f"{run} margin (smallest first)" for run in margin_runs],
                               description="sort")
        self.list = w.Select(options=[], rows=10, layout=w.Layout(width="95%"))
        self.count = w.Label()
        self.previous, self.next = w.Button(description="◀ previous"), w.Button(description="next ▶")
        self.pinned: list[str] | None = None
        for control in (self.subset, self.flag, self.sort):
            control.observe(lambda _: self.refresh(), names="value")
        self.list.observe(self._selected, names="value")
        self.previous.on_click(lambda _: self._navigate("previous"))
        self.next.on_click(lambda _: self._navigate("next"))
        super().__init__([w.HBox([self.subset, self.flag, self.sort]), self.count, self.list,
                          w.HBox([self.previous, self.next]), self.viewer])
        self.refresh()

    def rows(self) -> pd.DataFrame:
        """The flag table filtered and sorted as the controls say."""
        rows = self.table
        if self.pinned is not None:
            rows = rows[rows["item_id"].isin(self.pinned)]
        if self.subset.value != "all":
            rows = rows[rows["subset"] == self.subset.value]
        column = FLAGS[self.flag.value]
        if column:
            rows = rows[rows[column].astype(bool)]
        if self.sort.value != "file order":
            run = self.sort.value.removesuffix(" margin (smallest first)")
            margin = self.margins[self.margins["run"] == run].set_index("item_id")["margin"]
            rows = rows.assign(_margin=rows["item_id"].map(margin)).sort_values("_margin", kind="stable")
            rows = rows.drop(columns="_margin")
        return rows

    def refresh(self) -> None:
        """Apply the filters and show the first item."""
        rows = self.rows()
        self.list.options = [(f"{r.item_id}  [{r.subset}]", r.item_id) for r in rows.itertuples()]
        self.count.value = f"{len(rows)} of {len(self.table)} items" + (" (selected in a plot)" if self.pinned else "")
        self.list.value = rows["item_id"].iloc[0] if len(rows) else None

    def select(self, item_ids: Sequence[str] | None) -> None:
        """Restrict the list to ``item_ids`` (from a plot selection; None or empty lifts it)."""
        self.pinned = list(item_ids) if item_ids else None
        self.refresh()

    def _selected(self, change) -> None:
        if change["new"] is not None:
            self.show(change["new"])

    def show(self, item_id: str) -> None:
        """Display one item in the viewer."""
        correct: dict[str, dict] = {}
        for r in self.outcomes[self.outcomes["item_id"] == item_id].itertuples():
            correct.setdefault(r.run, {})[r.metric] = None if pd.isna(r.value) else int(r.value)
        item = self.items[item_id]
        self.viewer.show(item, correct, self.items.get(item.twin_id) if item.twin_id else None)

    def _navigate(self, direction: str) -> None:
        ids = [value for _, value in self.list.options]
        if not ids:
            return
        here = ids.index(self.list.value) if self.list.value in ids else 0
        step = 1 if direction == "next" else -1 if direction == "previous" else 0
        self.list.value = ids[(here + step) % len(ids)]

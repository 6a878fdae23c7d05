"""The chosen runs compared item by item, linked to the item browser: an agreement heatmap (Cohen's kappa per pair of
runs on the items both scored; click a cell to list the items where those two runs disagree) and a difficulty-by-label
chart (the share of runs right per label value; click a bar to list that value's items). Every number is
``bench.analysis``'s."""

from __future__ import annotations

from typing import Sequence

import altair as alt
import ipywidgets as w
import pandas as pd

from bench.analysis.items import disagreements, label_difficulty, pair_table, tie_notes
from widgets.browser import ItemBrowser
from widgets.linking import jupyter_chart

MAX_VALUES = 40  # labels with more values than this (video names, ids) are not offered for the difficulty chart


def heatmap_rows(pairs: pd.DataFrame) -> pd.DataFrame:
    """The all-items rows of a :func:`bench.analysis.items.pair_table`, each pair in both orders (a cell above and
    one below the diagonal), with the disagreeing items counted (``disagree``) and kappa's interval split."""
    overall = pairs[pairs["label"].isna()]
    swapped = overall.rename(columns={"a": "b", "b": "a", "only_a": "only_b", "only_b": "only_a",
                                      "accuracy_a": "accuracy_b", "accuracy_b": "accuracy_a", "tied_a": "tied_b",
                                      "tied_b": "tied_a"})
    rows = pd.concat([overall, swapped[overall.columns]], ignore_index=True)
    low, high = zip(*rows["kappa_ci"]) if len(rows) else ((), ())
    return rows.drop(columns=["kappa_ci", "label", "value"]).assign(
        kappa_low=list(low), kappa_high=list(high), disagree=rows["only_a"] + rows["only_b"])


def heatmap_chart(pairs: pd.DataFrame, notes: Sequence[str] = ()) -> alt.LayerChart:
    """Cohen's kappa of every pair of runs as coloured cells with their values written in (agreement, kappa's
    interval, McNemar's p, the items and each run's ties in the tooltip); a point selection ``pick`` on ``a`` and
    ``b``; ``notes`` (the runs' ties, :func:`bench.analysis.items.tie_notes`) under the title."""
    rows = heatmap_rows(pairs)
    order = list(dict.fromkeys([*pairs["a"], *pairs["b"]]))
    pick = alt.selection_point(name="pick", fields=["a", "b"])
    base = alt.Chart(rows).encode(x=alt.X("b:N", title=None, sort=order, axis=alt.Axis(labelAngle=-30)),
                                  y=alt.Y("a:N", title=None, sort=order))
    cells = base.mark_rect(stroke="white").encode(
        color=alt.Color("kappa:Q", title="kappa", scale=alt.Scale(domain=[-1, 1], scheme="redblue")),
        opacity=alt.condition(pick, alt.value(1.0), alt.value(0.5)),
        tooltip=["a", "b", "n", alt.Tooltip("agreement:Q", format=".3f"), alt.Tooltip("kappa:Q", format=".3f"),
                 alt.Tooltip("kappa_low:Q", format=".3f"), alt.Tooltip("kappa_high:Q", format=".3f"),
                 alt.Tooltip("mcnemar_p:Q", title="McNemar p", format=".3g"), "disagree",
                 alt.Tooltip("tied_a:Q", title="items a tied"), alt.Tooltip("tied_b:Q", title="items b tied")],
    ).add_params(pick)
    text = base.mark_text(fontSize=11).encode(text=alt.Text("kappa:Q", format=".2f"))
    title = alt.TitleParams("Agreement of the chosen runs (Cohen's kappa)", subtitle=[
        "on the items both runs scored, right or wrong by the benchmark's own per-item score (a tie: not right)",
        "click a cell to list the items where those two runs disagree", *notes])
    side = max(60, 40 * len(order))
    return alt.layer(cells, text).properties(title=title, width=side, height=side)


def difficulty_chart(by_label: pd.DataFrame, label: str) -> alt.LayerChart:
    """The mean share of runs right per value of ``label`` in percent (a
    :func:`bench.analysis.items.label_difficulty` table), one bar per value; a point selection ``pick`` on
    ``value``."""
    rows = by_label.rename(columns={label: "value"}).assign(
        percent=lambda t: 100 * t["difficulty"], fails=lambda t: 100 * t["all_fail"], full=100.0)
    pick = alt.selection_point(name="pick", fields=["value"])
    base = alt.Chart(rows).encode(x=alt.X("value:N", title=label, axis=alt.Axis(labelAngle=-30)))
    bars = base.mark_bar().encode(y=alt.Y("percent:Q", title="runs right (%)", scale=alt.Scale(domain=[0, 100])),
                                  opacity=alt.condition(pick, alt.value(1.0), alt.value(0.4)))
    hits = base.mark_bar(opacity=0).encode(  # the whole column is clickable, even for a value at 0%
        y="full:Q", tooltip=[alt.Tooltip("value:N", title=label), "items",
                             alt.Tooltip("percent:Q", title="runs right (%)", format=".1f"),
                             alt.Tooltip("fails:Q", title="every run fails (% of items)", format=".1f")],
    ).add_params(pick)
    title = alt.TitleParams(f"Difficulty by {label}", subtitle=[
        "bars: the share of the chosen runs right on an item, averaged over the items",
        "click a bar to list its items"])
    return alt.layer(bars, hits).properties(title=title, width=max(200, 40 * len(rows)), height=220)


def label_options(items: pd.DataFrame) -> list[str]:
    """The labels the difficulty chart can split by: ``subset``, then each label of the items with 2 to
    :data:`MAX_VALUES` values."""
    fixed = {"item_id", "subset", "runs_scored", "runs_right", "difficulty", "difficulty_low", "difficulty_high",
             "right", "all_fail", "only_run", "disagree", "mean_margin", "text"}
    labels = [c for c in items.columns if c not in fixed and not c.startswith("margin: ")]
    return ["subset"] + [c for c in labels if 2 <= items[c].astype(str).nunique() <= MAX_VALUES]


def _picked(change) -> dict | None:
    value = change.new.value
    return value[0] if value else None


def linked_heatmap(browser: ItemBrowser) -> alt.JupyterChart:
    """The heatmap of the browser's chosen runs (at least two); clicking a cell lists exactly the items where those
    two runs disagree (:func:`bench.analysis.items.disagreements`), clicking it again lifts that."""
    long = browser.chosen_long()
    chart = jupyter_chart(heatmap_chart(pair_table(long), tie_notes(long)))

    def changed(change) -> None:
        cell = _picked(change)
        browser.pin(None if cell is None else disagreements(long, cell["a"], cell["b"]))

    chart.selections.observe(changed, ["pick"])
    return chart


def linked_difficulty(browser: ItemBrowser, label: str) -> alt.JupyterChart:
    """The difficulty by ``label`` of the browser's chosen runs; clicking a bar lists that value's items."""
    items = browser.item_analysis()
    chart = jupyter_chart(difficulty_chart(label_difficulty(items, label), label))

    def changed(change) -> None:
        values = {p.get("value") for p in change.new.value or []}
        browser.pin(items.loc[items[label].astype(str).isin(values), "item_id"].tolist() if values else None)

    chart.selections.observe(changed, ["pick"])
    return chart


def linked_comparison(browser: ItemBrowser) -> w.VBox:
    """The heatmap and the difficulty chart (with a choice of label: the first label beside ``subset`` where the
    items carry one) of the browser's chosen runs; drawn again when the choice of runs or label changes."""
    label = w.Dropdown(description="difficulty by")
    box = w.VBox()
    drawing = [False]  # set while draw() resets the label choice, so that it does not draw twice

    def draw(_=None) -> None:
        if drawing[0]:
            return
        items = browser.item_analysis()
        options = label_options(items) if len(items) else ["subset"]
        current, drawing[0] = label.value, True
        label.options = options
        label.value = current if current in options else (options[1] if len(options) > 1 else "subset")
        drawing[0] = False
        shown: list[w.DOMWidget] = []
        if len(browser.chosen) < 2:
            shown.append(w.Label("no agreement heatmap: choose two runs or more"))
        else:
            try:
                shown.append(linked_heatmap(browser))
            except ValueError as error:
                shown.append(w.Label(f"no agreement heatmap: {error}"))
        if len(items):
            shown += [label, linked_difficulty(browser, label.value)]
        else:
            shown.append(w.Label("no difficulty chart: the chosen runs scored no item"))
        box.children = shown

    browser.picker.observe(draw, names="value")
    label.observe(draw, names="value")
    draw()
    return box

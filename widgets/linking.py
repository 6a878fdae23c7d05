"""Plots linked to the item browser: selecting points or bars shows those items."""

from __future__ import annotations

import altair as alt
import pandas as pd

from bench.metrics.velociti import entailment_points
from bench.report.figures import entailment_scatter
from widgets.browser import ItemBrowser


def _jupyter_chart(chart: alt.Chart) -> alt.JupyterChart:
    alt.JupyterChart.enable_offline()  # vega bundled by vl-convert: no CDN
    return alt.JupyterChart(chart)


def linked_scatter(browser: ItemBrowser, run_index: int | None = None) -> alt.JupyterChart:
    """The entailment scatter of one run (P(Yes) of positive vs negative; default: the browser's first P(Yes) run);
    clicking points selects their items."""
    if run_index is None:
        found = [i for i, r in enumerate(browser.run_list) if r.manifest.get("measure") == "p_yes"]
        if not found:
            raise ValueError("no run with P(Yes) scores (an entail run) among the browser's runs")
        run_index = found[0]
    run = browser.run_list[run_index]
    points = entailment_points(list(browser.items.values()), run.pair).assign(run=run.manifest.get("name", ""))
    pick = alt.selection_point(name="pick", fields=["item_id"])
    layered = entailment_scatter(points)
    dots = layered.layer[0].add_params(pick).encode(opacity=alt.condition(pick, alt.value(0.9), alt.value(0.3)))
    chart = _jupyter_chart(alt.layer(dots, *layered.layer[1:]).properties(width=320, height=320))
    chart.selections.observe(lambda change: browser.select([p["item_id"] for p in change.new.value]), ["pick"])
    return chart


def linked_bars(browser: ItemBrowser, table: pd.DataFrame, metric: str, by: str = "subset") -> alt.JupyterChart:
    """Bars of a breakdown (a ``bench.metrics`` table); clicking a bar selects the items of that group."""
    rows = table[(table["metric"] == metric) & (table["by"] == by)]
    pick = alt.selection_point(name="pick", fields=["subset"])
    chart = alt.Chart(rows).mark_bar().encode(x="subset:N", y=alt.Y("value:Q", title=metric),
                                              opacity=alt.condition(pick, alt.value(1.0), alt.value(0.4))).add_params(pick)
    jchart = _jupyter_chart(chart)

    def changed(change) -> None:
        groups = {p.get("subset") for p in change.new.value}
        label = by if by != "subset" else None
        ids = [it.item_id for it in browser.items.values()
               if (it.subset if label is None else it.labels.get(label)) in groups]
        browser.select(ids if groups else None)

    jchart.selections.observe(changed, ["pick"])
    return jchart

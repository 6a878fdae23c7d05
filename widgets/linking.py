"""Charts linked to the item browser (percent scales, titles, chance and threshold lines): selecting points or bars
lists those items. Drawn as SVG by the bundled vega (no CDN)."""

from __future__ import annotations

import altair as alt
import ipywidgets as w
import pandas as pd

from bench.metrics.velociti import entailment_points
from bench.metrics.dispatch import run_table
from widgets.browser import ItemBrowser

EMBED = {"renderer": "svg", "actions": False}


def jupyter_chart(chart: alt.TopLevelMixin) -> alt.JupyterChart:
    """``chart`` as a widget whose selections Python can read, with vega served offline."""
    alt.JupyterChart.enable_offline()  # vega bundled by vl-convert: no CDN
    return alt.JupyterChart(chart, embed_options=EMBED)


def scatter_chart(points: pd.DataFrame, run: str) -> alt.LayerChart:
    """P(Yes) of the positive against the negative caption in percent, one point per item, with the 50% lines
    (StrictVLE: right of the vertical and below the horizontal) and the diagonal (ClassicVLE: below it); a point
    selection named ``pick`` on ``item_id``."""
    rows = points.assign(pos=100 * points["pos"], neg=100 * points["neg"])
    pick = alt.selection_point(name="pick", fields=["item_id"])
    axis = alt.Scale(domain=[0, 100])
    dots = alt.Chart(rows).mark_circle(size=60).encode(
        x=alt.X("pos:Q", title="P(Yes | positive caption) (%)", scale=axis),
        y=alt.Y("neg:Q", title="P(Yes | negative caption) (%)", scale=axis),
        color=alt.Color("subset:N", title="test"),
        opacity=alt.condition(pick, alt.value(0.9), alt.value(0.25)),
        tooltip=["item_id", "subset", alt.Tooltip("pos:Q", format=".2f"), alt.Tooltip("neg:Q", format=".2f")],
    ).add_params(pick)
    half = pd.DataFrame({"v": [50.0]})
    lines = (alt.Chart(half).mark_rule(strokeDash=[4, 4], color="grey").encode(x="v:Q")
             + alt.Chart(half).mark_rule(strokeDash=[4, 4], color="grey").encode(y="v:Q"))
    diagonal = alt.Chart(pd.DataFrame({"x": [0, 100], "y": [0, 100]})).mark_line(color="grey").encode(x="x:Q", y="y:Q")
    title = alt.TitleParams(f"Entailment scores of {run}", subtitle=["below the diagonal: ClassicVLE right; "
                            "right of and below the 50% lines: StrictVLE right", "click points to list their items"])
    return alt.layer(dots, lines, diagonal).properties(title=title, width=320, height=320)


def linked_scatter(browser: ItemBrowser, run_index: int | None = None) -> alt.JupyterChart:
    """The entailment scatter of one VELOCITI run with P(Yes) scores over the items it scored (default: the first
    such run chosen in the browser, plain models first); clicking points lists their items."""
    if browser.benchmark != "velociti":
        raise ValueError(f"the entailment scatter is VELOCITI's; these runs are of {browser.benchmark}")
    if run_index is None:
        chosen = {r.label for r in browser.chosen}
        found = [i for i, r in enumerate(browser.run_list)
                 if r.manifest.measure == "p_yes" and r.label in chosen]
        if not found:
            raise ValueError("no run with P(Yes) scores (protocol entail) among the browser's chosen runs")
        run_index = found[0]
    run = browser.run_list[run_index]
    points = entailment_points(browser.own_items(run), run.pair)
    subsets = {it.item_id: it.subset for it in browser.items.values()}
    chart = jupyter_chart(scatter_chart(points.assign(subset=points["item_id"].map(subsets)), run.label))
    chart.selections.observe(lambda change: browser.select([p["item_id"] for p in change.new.value]), ["pick"])
    return chart


def bars_chart(table: pd.DataFrame, metric: str, by: str = "subset") -> alt.LayerChart:
    """One metric per group of a metric table in percent: bars, their intervals, and each group's chance level as
    a dashed line (one line across when every group has the same chance); a point selection ``pick`` on
    ``subset``."""
    rows = table[(table["metric"] == metric) & (table["by"] == by)]
    if not len(rows):
        raise ValueError(f"the table has no {metric!r} rows by {by!r}")
    rows = rows.assign(percent=100 * rows["value"], low=100 * rows["ci_low"], high=100 * rows["ci_high"],
                       chance_pct=100 * rows["chance"], full=100.0)
    pick = alt.selection_point(name="pick", fields=["subset"])
    base = alt.Chart(rows).encode(x=alt.X("subset:N", title=by, axis=alt.Axis(labelAngle=-30)))
    percent = alt.Scale(domain=[0, 100])
    bars = base.mark_bar().encode(y=alt.Y("percent:Q", title=f"{metric} (%)", scale=percent),
                                  opacity=alt.condition(pick, alt.value(1.0), alt.value(0.4)))
    hits = base.mark_bar(opacity=0).encode(  # the whole column is clickable, even for a group at 0%
        y="full:Q", tooltip=["subset", alt.Tooltip("percent:Q", title=f"{metric} (%)", format=".1f"),
                             alt.Tooltip("low:Q", format=".1f"), alt.Tooltip("high:Q", format=".1f"),
                             alt.Tooltip("chance_pct:Q", title="chance (%)", format=".1f"), "n"],
    ).add_params(pick)
    interval = base.mark_rule(color="black").encode(y="low:Q", y2="high:Q")
    chances = rows["chance_pct"].round(6).unique()
    if len(chances) == 1:
        level = pd.DataFrame({"chance_pct": [chances[0]], "label": [f"chance {chances[0]:.3g}%"]})
        line = alt.Chart(level).encode(y="chance_pct:Q")
        chance = line.mark_rule(strokeDash=[6, 3], color="#d62728") + line.mark_text(
            align="right", dy=-6, color="#d62728", x="width").encode(text="label:N")
    else:
        chance = base.mark_tick(strokeDash=[4, 2], color="#d62728", thickness=2).encode(y="chance_pct:Q")
    run = f" of {rows['run'].iloc[0]}" if "run" in rows else ""
    title = alt.TitleParams(f"{metric} by {by}{run}", subtitle=["bars: % of items right, black: confidence interval, "
                            "dashed red: chance", "click a bar to list its items"])
    return alt.layer(bars, interval, chance, hits).properties(title=title, width=360, height=220)


def linked_bars(browser: ItemBrowser, table: pd.DataFrame, metric: str, by: str = "subset") -> alt.JupyterChart:
    """Bars of a breakdown (a ``bench.metrics`` table, see :func:`bars_chart`); clicking a bar lists the items of
    that group."""
    chart = jupyter_chart(bars_chart(table, metric, by))

    def changed(change) -> None:
        groups = {p.get("subset") for p in change.new.value}
        label = by if by != "subset" else None
        ids = [it.item_id for it in browser.items.values()
               if (it.subset if label is None else it.labels.get(label)) in groups]
        browser.select(ids if groups else None)

    chart.selections.observe(changed, ["pick"])
    return chart


def chart_runs(browser: ItemBrowser) -> tuple[str | None, str | None]:
    """The runs the linked charts draw, of those chosen in the browser (plain models first): the first with P(Yes)
    scores for VELOCITI's scatter, and the first some metric applies to for the bars."""
    chosen = browser.chosen
    scatter = next((r.label for r in chosen if r.manifest.measure == "p_yes"), None)
    bars = next((r.label for r in chosen if r.label in browser.headline), None)
    return scatter if browser.benchmark == "velociti" else None, bars


def linked_charts(browser: ItemBrowser) -> w.VBox:
    """The scatter (VELOCITI runs with P(Yes) scores) and the bars by subset of the :func:`chart_runs`, each over
    the items its run scored; drawn again when the browser's choice of runs or metric changes."""
    box = w.VBox()

    def draw(_=None) -> None:
        scatter, bars = chart_runs(browser)
        index = {r.label: i for i, r in enumerate(browser.run_list)}
        shown: list[w.DOMWidget] = []
        if scatter is not None:
            shown.append(linked_scatter(browser, index[scatter]))
        elif browser.benchmark == "velociti":
            shown.append(w.Label("no entailment scatter: choose a VELOCITI run with P(Yes) scores (protocol entail)"))
        if bars is None:
            shown.append(w.Label("no bars: no metric applies to the chosen runs"))
        else:
            run = browser.run_list[index[bars]]
            shown.append(linked_bars(browser, run_table(run), browser.headline[bars]))
        box.children = shown

    browser.picker.observe(draw, names="value")
    browser.metric.observe(draw, names="value")
    draw()
    return box

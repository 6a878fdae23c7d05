"""Chart builders for the papers' figures (altair; rendered offline). Each takes tidy frames from ``bench`` metrics."""

from __future__ import annotations

import altair as alt
import pandas as pd


def metric_bars(table: pd.DataFrame, metric: str, by: str = "subset", title: str = "") -> alt.Chart:
    """One bar per run and group with its confidence interval, and the chance level as a tick."""
    rows = table[(table["metric"] == metric) & (table["by"] == by)].copy()
    for column in ("value", "ci_low", "ci_high", "chance"):
        rows[column] = 100 * rows[column].astype(float)
    base = alt.Chart(rows).encode(x=alt.X("subset:N", title=by), xOffset="run:N")
    bars = base.mark_bar().encode(y=alt.Y("value:Q", title=f"{metric} (%)", scale=alt.Scale(domain=[0, 100])),
                                  color=alt.Color("run:N"), tooltip=["run", "subset", "value", "ci_low", "ci_high",
                                                                     "chance", "n"])
    errors = base.mark_rule().encode(y="ci_low:Q", y2="ci_high:Q")
    chance = base.mark_tick(color="black", thickness=2).encode(y="chance:Q")
    return (bars + errors + chance).properties(title=title or f"{metric} by {by}", width=420, height=240)


def entailment_scatter(points: pd.DataFrame, title: str = "") -> alt.Chart:
    """P(Yes) of the positive against the negative caption, with the 0.5 lines (StrictVLE quadrant: pos > 0.5 and
    neg < 0.5) and the diagonal (ClassicVLE: below it, pos > neg). ``points``: item_id, run, pos, neg."""
    dots = alt.Chart(points).mark_circle(size=40, opacity=0.7).encode(
        x=alt.X("pos:Q", title="P(Yes | positive)", scale=alt.Scale(domain=[0, 1])),
        y=alt.Y("neg:Q", title="P(Yes | negative)", scale=alt.Scale(domain=[0, 1])),
        color="run:N", tooltip=["item_id", "run", "pos", "neg"])
    half = pd.DataFrame({"v": [0.5]})
    lines = (alt.Chart(half).mark_rule(strokeDash=[4, 4]).encode(x="v:Q")
             + alt.Chart(half).mark_rule(strokeDash=[4, 4]).encode(y="v:Q"))
    diagonal = alt.Chart(pd.DataFrame({"x": [0, 1], "y": [0, 1]})).mark_line(color="grey").encode(x="x", y="y")
    return (dots + lines + diagonal).properties(title=title or "Entailment scores", width=320, height=320)


def counts_bars(counts: pd.DataFrame, x: str, y: str = "n", color: str | None = None, title: str = "") -> alt.Chart:
    """Bars of counts (items per category, per length bin, per word...)."""
    encoding = {"x": alt.X(f"{x}:N", sort="-y" if color is None else None), "y": alt.Y(f"{y}:Q")}
    if color:
        encoding["color"] = alt.Color(f"{color}:N")
        encoding["xOffset"] = f"{color}:N"
    return alt.Chart(counts).mark_bar().encode(**encoding).properties(title=title, width=420, height=220)


def accuracy_line(table: pd.DataFrame, x: str, title: str = "") -> alt.Chart:
    """Accuracy (with CI band) against an ordered quantity (frames sampled, length bin); ``table`` has x, run,
    value, ci_low, ci_high."""
    rows = table.copy()
    for column in ("value", "ci_low", "ci_high"):
        rows[column] = 100 * rows[column].astype(float)
    base = alt.Chart(rows).encode(x=alt.X(f"{x}:O"), color="run:N")
    return (base.mark_line(point=True).encode(y=alt.Y("value:Q", title="score (%)"))
            + base.mark_errorbar().encode(y="ci_low:Q", y2="ci_high:Q")).properties(title=title, width=380,
                                                                                    height=220)

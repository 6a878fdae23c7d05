"""Chart builders for the papers' figures (altair, rendered offline by vl-convert). Each takes frames that ``bench``
metrics computed and only draws them: percentages on 0-100 axes, intervals as error bars, chance as black ticks or a
dashed line, axis titles in words.
"""

from __future__ import annotations

import sys
from typing import Mapping, Sequence

# jsonschema (under altair) imports rfc3987_syntax when installed, which builds a parser grammar at import: seconds in
# every notebook kernel, for a URI format check altair's charts never use. Leave it out unless something loaded it.
sys.modules.setdefault("rfc3987_syntax", None)

import altair as alt  # noqa: E402
import numpy as np
import pandas as pd

PERCENT = alt.Scale(domain=[0, 100])
DIFFERENCE = alt.Scale(domain=[-100, 100])
BAR_LEGEND = "Bars: runs, lines: 95% intervals, black ticks: chance"
# The widest a chart's plot area gets, in CSS pixels: the report's page is about 1,300 px wide, and a figure is shown
# at its own width (never squeezed, so that its labels stay readable); wider charts wrap.
MAX_WIDTH = 900
BAR_STEP = 28  # CSS pixels per bar


def _percent(rows: pd.DataFrame, columns: Sequence[str] = ("value", "ci_low", "ci_high", "chance")) -> pd.DataFrame:
    rows = rows.copy()
    for column in columns:
        if column in rows:
            rows[column] = (100 * rows[column].astype(float)).round(1)
    return rows


def _groups(rows: pd.DataFrame, rename: Mapping[str, str] | None, order: Sequence[str]) -> tuple[pd.DataFrame, list]:
    rows = rows.assign(group=rows["subset"].astype(str).map(lambda s: (rename or {}).get(s, s)))
    present = list(dict.fromkeys(rows["group"]))
    named = [(rename or {}).get(o, o) for o in order]
    return rows, [g for g in named if g in present] + [g for g in present if g not in named]


def metric_bars(metrics: pd.DataFrame, metric: str, by: str = "subset", *, title: str = "", x_title: str = "",
                rename: Mapping[str, str] | None = None, order: Sequence[str] = (),
                signed: bool = False) -> alt.TopLevelMixin:
    """One bar per run and group (the values of ``by``) with its interval, and the chance level as a black tick; the
    axis runs from 0 to 100%, or from -100 to 100 for a ``signed`` difference. Groups that would make the chart wider
    than :data:`MAX_WIDTH` wrap into rows of groups, one below the other (one legend for all)."""
    rows = _percent(metrics[(metrics["metric"] == metric) & (metrics["by"] == by)])
    rows, groups = _groups(rows, rename, order)
    signed = signed or (bool(len(rows)) and rows["ci_low"].min() < 0)
    runs = max(1, rows["run"].nunique())
    per_row = max(1, MAX_WIDTH // (BAR_STEP * runs))
    parts = [groups[i:i + per_row] for i in range(0, len(groups), per_row)] or [groups]
    charts = [_bars(rows[rows["group"].isin(part)], part, metric, signed, x_title or by.capitalize(),
                    max(320, BAR_STEP * len(part) * runs)) for part in parts]
    heading = alt.TitleParams(title or f"{metric} by {by}", subtitle=BAR_LEGEND)
    return charts[0].properties(title=heading) if len(charts) == 1 else alt.vconcat(*charts).properties(title=heading)


def _bars(rows: pd.DataFrame, groups: list, metric: str, signed: bool, x_title: str, width: int) -> alt.LayerChart:
    base = alt.Chart(rows).encode(x=alt.X("group:N", title=x_title, sort=groups,
                                          axis=alt.Axis(labelAngle=-30, labelLimit=180)), xOffset="run:N")
    bars = base.mark_bar().encode(
        y=alt.Y("value:Q", title=f"{metric} (%)", scale=DIFFERENCE if signed else PERCENT),
        color=alt.Color("run:N", title="Run"),
        tooltip=["run", "group", "value", "ci_low", "ci_high", "chance", "n"])
    errors = base.mark_rule(color="#333").encode(y="ci_low:Q", y2="ci_high:Q")
    chance = base.mark_tick(color="black", thickness=2, size=14).encode(y="chance:Q")
    return (bars + errors + chance).properties(width=width, height=240)


def choice_bias(metrics: pd.DataFrame, *, rename: Mapping[str, str] | None = None, order: Sequence[str] = (),
                title: str = "Multiple choice: positive caption as A or as B") -> alt.TopLevelMixin:
    """VELOCITI's choice-bias analysis: accuracy with the positive caption as option A against as option B, one point
    per test and run (on the diagonal: no bias), beside the bias B - A per test with its interval (below it when
    both would be wider than :data:`MAX_WIDTH`)."""
    mc = _percent(metrics[metrics["metric"].isin(["MC A", "MC B"]) & (metrics["by"] == "subset")])
    mc, groups = _groups(mc, rename, order)
    wide = mc.pivot_table(index=["run", "group"], columns="metric", values="value", aggfunc="first").reset_index()
    for column in ("MC A", "MC B"):
        if column not in wide:
            wide[column] = np.nan
    wide["x"], wide["y"] = jitter(wide["MC A"], 1.5, 0), jitter(wide["MC B"], 1.5, 1)
    diagonal = alt.Chart(pd.DataFrame({"a": [0, 100], "b": [0, 100]})).mark_line(color="grey", strokeDash=[4, 4]) \
        .encode(x="a:Q", y="b:Q")
    points = alt.Chart(wide).mark_point(filled=True, size=70, opacity=0.8).encode(
        x=alt.X("x:Q", title="Accuracy, positive caption as A (%)", scale=PERCENT),
        y=alt.Y("y:Q", title="Accuracy, positive caption as B (%)", scale=PERCENT),
        color=alt.Color("run:N", title="Run"), shape=alt.Shape("group:N", title="Test", sort=groups),
        tooltip=["run", "group", "MC A", "MC B"])
    scatter = (diagonal + points).properties(
        title=alt.TitleParams("A against B", subtitle=["Above the dashed diagonal: the model prefers B",
                                                        "(jittered where points coincide)"]),
        width=280, height=280)
    bias = metric_bars(metrics, "MC bias (B-A)", title="Choice bias: accuracy as B minus as A",
                       x_title="Test", rename=rename, order=order, signed=True)
    narrow = isinstance(bias, alt.LayerChart) and 280 + bias.width <= MAX_WIDTH
    return (alt.hconcat if narrow else alt.vconcat)(scatter, bias).properties(title=title)


def png_width(data: bytes) -> int:
    """The width a PNG rendered by :func:`bench.report.outputs.save_chart` (at its ``RENDER_SCALE``) is meant to be
    shown at."""
    from bench.report.outputs import RENDER_SCALE

    return int.from_bytes(data[16:20], "big") // RENDER_SCALE


def jitter(values: pd.Series, spread: float, seed: int = 0, low: float = 0.0, high: float = 100.0) -> np.ndarray:
    """``values`` plus uniform noise in [-spread, spread] where several values coincide (a fixed seed, so figures are
    the same on every build), reflected back into [low, high] so that points on an edge stay apart."""
    rng = np.random.default_rng(seed)
    noise = rng.uniform(-spread, spread, len(values))
    crowded = values.round(3).duplicated(keep=False).to_numpy()
    moved = values.to_numpy(float) + np.where(crowded, noise, 0.0)
    moved = np.where(moved < low, 2 * low - moved, moved)
    return np.where(moved > high, 2 * high - moved, moved)


def entailment_scatter(points: pd.DataFrame, threshold: float = 0.5, title: str = "") -> alt.LayerChart:
    """P(Yes) for the positive against the negative caption of one run's items (``points``: item_id, subset, pos, neg
    as probabilities): the 50% lines (lower right: both answered right, StrictVLE), the diagonal (below it: positive
    scored higher, ClassicVLE), the items per quadrant in the corners, and jitter where points coincide. The first
    layer holds the points."""
    frame = points.assign(pos_pct=100 * points["pos"], neg_pct=100 * points["neg"])
    frame = frame.assign(x=jitter(frame["pos_pct"], 1.5, 0), y=jitter(frame["neg_pct"], 1.5, 1))
    dots = alt.Chart(frame).mark_circle(size=45, opacity=0.5).encode(
        x=alt.X("x:Q", title="P(Yes) for the positive caption (%)", scale=PERCENT),
        y=alt.Y("y:Q", title="P(Yes) for the negative caption (%)", scale=PERCENT),
        color=alt.Color("subset:N", title="Test"),
        tooltip=["item_id", "subset", alt.Tooltip("pos_pct:Q", format=".1f"), alt.Tooltip("neg_pct:Q", format=".1f")])
    cut = pd.DataFrame({"v": [100 * threshold]})
    lines = (alt.Chart(cut).mark_rule(strokeDash=[4, 4], color="#555").encode(x="v:Q")
             + alt.Chart(cut).mark_rule(strokeDash=[4, 4], color="#555").encode(y="v:Q"))
    diagonal = alt.Chart(pd.DataFrame({"a": [0, 100], "b": [0, 100]})).mark_line(color="grey").encode(x="a:Q", y="b:Q")
    pos_yes, neg_yes = frame["pos"] > threshold, frame["neg"] > threshold
    total = max(1, len(frame))
    corners = pd.DataFrame({
        "x": [97, 3, 3, 97], "y": [3, 3, 97, 97], "align": ["right", "left", "left", "right"],
        "n": [int((pos_yes & ~neg_yes).sum()), int((~pos_yes & ~neg_yes).sum()),
              int((~pos_yes & neg_yes).sum()), int((pos_yes & neg_yes).sum())]})
    corners["label"] = [f"{n} ({100 * n / total:.0f}%)" for n in corners["n"]]
    counts = [alt.Chart(corners[corners["align"] == side]).mark_text(
        fontSize=12, fontWeight="bold", baseline="middle", align=side).encode(x="x:Q", y="y:Q", text="label:N")
        for side in ("left", "right")]
    runs = list(dict.fromkeys(points["run"])) if "run" in points else []
    name = title or (str(runs[0]) if len(runs) == 1 else "Entailment scores")
    return alt.layer(dots, lines, diagonal, *counts).properties(
        title=alt.TitleParams(name, subtitle=f"{len(frame)} items; corners: items per quadrant"), width=300,
        height=300)


def entailment_panels(points: pd.DataFrame, threshold: float = 0.5, title: str = "") -> alt.ConcatChart:
    """:func:`entailment_scatter` for each run of ``points`` (a ``run`` column), side by side, wrapped into rows no
    wider than :data:`MAX_WIDTH`."""
    panels = [entailment_scatter(frame, threshold) for _, frame in points.groupby("run", sort=False)]
    return alt.concat(*panels, columns=max(1, MAX_WIDTH // 340)).properties(
        title=title or "Entailment scores: positive against negative caption")


def counts_bars(counts: pd.DataFrame, x: str, y: str = "n", *, color: str | None = None, title: str = "",
                x_title: str = "", y_title: str = "Items", sort: Sequence[str] | None = None) -> alt.Chart:
    """Bars of counts (items per category, per length bin, per word...) in the order of ``sort`` or of the rows, each
    labelled with its count."""
    order = list(sort) if sort is not None else list(dict.fromkeys(counts[x]))
    encoding = {"x": alt.X(f"{x}:N", title=x_title or x, sort=order, axis=alt.Axis(labelAngle=-40, labelLimit=200)),
                "y": alt.Y(f"{y}:Q", title=y_title, axis=alt.Axis(format="d", tickMinStep=1))}
    if color:
        encoding["color"] = alt.Color(f"{color}:N", title=color.capitalize())
        encoding["xOffset"] = f"{color}:N"
    base = alt.Chart(counts).encode(**encoding)
    labels = base.mark_text(dy=-6, fontSize=10).encode(text=f"{y}:Q")
    width = max(300, 26 * len(order) * (counts[color].nunique() if color else 1))
    return (base.mark_bar() + labels).properties(title=title, width=min(width, MAX_WIDTH), height=220)


def score_by_bins(table: pd.DataFrame, *, x_title: str, title: str, order: Sequence[str] | None = None,
                  counts: bool = True) -> alt.Chart:
    """A metric's value (with interval) per ordered bin (video length, frames sampled), one line per run, the chance
    level as black ticks; ``table`` has run, subset (the bin), value, ci_low, ci_high, chance, n. With ``counts`` each
    bin's label carries its item count."""
    rows = _percent(table)
    if counts:
        per_bin = rows.groupby("subset", sort=False)["n"].agg(lambda n: "/".join(map(str, sorted(set(n)))))
        rows["bin"] = rows["subset"].map(lambda s: f"{s} (n={per_bin[s]})")
        mapping = dict(zip(rows["subset"], rows["bin"]))
        order = [mapping[o] for o in (order or list(dict.fromkeys(rows["subset"]))) if o in mapping]
    else:
        rows["bin"] = rows["subset"].astype(str)
        order = [str(o) for o in (order or list(dict.fromkeys(rows["bin"])))]
    metric = rows["metric"].iloc[0] if "metric" in rows and len(rows) else "score"
    runs = rows["run"].nunique()
    base = alt.Chart(rows).encode(x=alt.X("bin:N", title=x_title, sort=order, axis=alt.Axis(labelAngle=0)),
                                  xOffset="run:N")
    points = base.mark_point(filled=True, size=60).encode(
        y=alt.Y("value:Q", title=f"{metric} (%)", scale=PERCENT), color=alt.Color("run:N", title="Run"),
        tooltip=["run", "bin", "value", "ci_low", "ci_high", "chance", "n"])
    errors = base.mark_rule(strokeWidth=2).encode(y="ci_low:Q", y2="ci_high:Q", color="run:N")
    chance = base.mark_tick(color="black", thickness=2, size=14).encode(y="chance:Q")
    return (errors + points + chance).properties(
        title=alt.TitleParams(title, subtitle="Points: runs, lines: 95% intervals, black ticks: chance"),
        width=min(MAX_WIDTH, max(320, 24 * runs * len(order))), height=240)

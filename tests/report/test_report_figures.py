"""The report's figures sized for its page (wide bar charts and panels wrap, every figure shown at its own width, so
its labels keep the size the chart sets) and each table's own page styled like the index."""

from __future__ import annotations

import numpy as np
import pandas as pd

from bench.report import figures
from bench.report.figures import MAX_WIDTH, png_width
from bench.report.outputs import LABEL_SIZE, PAGE_STYLE, save_chart, save_table, table_fragment
from bench.report.tables import Table, table_html

PAGE_WIDTH = 1300  # CSS pixels a figure may take on the report's page (88em less its margins, on a laptop screen)


def _wide_metrics(groups: int = 11, runs: int = 8) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [{"run": f"run {r}", "metric": "accuracy", "by": "foil_type", "subset": f"foil type {g}",
             "value": v, "ci_low": v - 0.1, "ci_high": v + 0.1, "chance": 0.5, "n": 40}
            for r in range(runs) for g in range(groups) for v in [float(rng.uniform(0.2, 0.8))]]
    return pd.DataFrame(rows)


def test_wide_bars_wrap_into_rows_that_fit_the_page(tmp_path):
    metrics = _wide_metrics()
    chart = figures.metric_bars(metrics, "accuracy", "foil_type", title="Accuracy by foil type")
    spec = chart.to_dict()
    rows = spec["vconcat"]
    assert all(r["width"] <= MAX_WIDTH for r in rows) and len(rows) > 1
    shown = [g for r in rows for g in r["encoding"]["x"]["sort"]] if "encoding" in rows[0] else [
        g for r in rows for g in r["layer"][0]["encoding"]["x"]["sort"]]
    assert shown == sorted(set(metrics["subset"]), key=lambda s: int(s.split()[-1]))  # every group once, in order
    image = save_chart(chart, tmp_path, "wide", ("png",))[0]
    assert png_width(image.read_bytes()) <= PAGE_WIDTH
    few = figures.metric_bars(_wide_metrics(groups=3, runs=2), "accuracy", "foil_type").to_dict()
    assert "vconcat" not in few and few["width"] <= MAX_WIDTH


def test_panels_and_choice_bias_fit_the_page(tmp_path):
    points = pd.DataFrame([{"run": f"run {r}", "item_id": f"i{i}", "subset": "s", "pos": 0.6, "neg": 0.3}
                           for r in range(6) for i in range(5)])
    panels = save_chart(figures.entailment_panels(points), tmp_path, "panels", ("png",))[0]
    assert png_width(panels.read_bytes()) <= PAGE_WIDTH
    metrics = _wide_metrics(groups=7, runs=4)
    mc = pd.concat([metrics.assign(metric=m, by="subset") for m in ("MC A", "MC B", "MC bias (B-A)")])
    bias = save_chart(figures.choice_bias(mc), tmp_path, "bias", ("png",))[0]
    assert png_width(bias.read_bytes()) <= PAGE_WIDTH


def test_figures_set_their_label_size(tmp_path):
    chart = figures.metric_bars(_wide_metrics(groups=2, runs=2), "accuracy", "foil_type")
    svg = save_chart(chart, tmp_path, "labels", ("svg",))[0].read_text()
    assert f'font-size="{LABEL_SIZE}px"' in svg and 'font-size="10px"' not in svg


def test_a_tables_own_page_is_styled_like_the_index(tmp_path):
    table = Table(pd.DataFrame({"accuracy": ["61.7"]}, index=["CLIP"]), pd.DataFrame({"run": ["CLIP"]}))
    paths = save_table(table, tmp_path / "vitatecs", "accuracy", "Accuracy", "per aspect")
    page = paths[2].read_text()
    assert page.startswith("<!doctype html>") and PAGE_STYLE in page and ".fb-table table{" in page
    assert "href='../index.html'" in page and "href='accuracy.csv'" in page
    assert table_fragment(page) == table_html(table, "Accuracy", "per aspect")  # what the index embeds

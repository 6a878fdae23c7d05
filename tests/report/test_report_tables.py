"""Report tables and figures from metric tables, without scoring: grouped headers, rounding, hidden and shown columns,
our runs beside the published rows, and charts that show what they are given."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

from bench.metrics.aggregate import TABLE_COLUMNS
from bench.published import published
from bench.report import figures
from bench.report.tables import (beside_published, metric_details, plain_table, score_table, table_html,
                                 table_markdown)

TESTS = ["Action Counting", "Situation Awareness", "Change of State"]


def metric_rows(runs=("run a", "run b"), tests=TESTS, metrics=("P", "T", "P+T"), **extra) -> pd.DataFrame:
    """A ViLMA-like metric table: every (run, test, metric), an "Avg. P+T" row per run, values that differ per cell."""
    rows = []
    rng = np.random.default_rng(0)
    for run in runs:
        for t in tests:
            for m in metrics:
                v = float(rng.uniform(0.1, 0.9))
                rows.append({"run": run, "benchmark": "vilma", "metric": m, "by": "test", "subset": t, "value": v,
                             "ci_low": v - 0.1, "ci_high": v + 0.1, "chance": 0.25 if m == "P+T" else 0.5,
                             "n": 10 + len(t), "n_missing": 0, "n_nan": 0, "n_unparsed": 0, "p_value": 0.01,
                             "significant": v > 0.5, "test": "binomial", "note": "", "strict": v, "expected": v,
                             "n_tie": 0, "n_dropped": 0, "p_holm": 0.01, "significant_holm": v > 0.5, **extra})
        rows.append({**rows[-1], "metric": "Avg. P+T", "by": "all", "subset": "all", "value": 0.4567,
                     "ci_low": 0.3, "ci_high": 0.6, "note": "mean over 3 groups"})
    frame = pd.DataFrame(rows)
    assert set(TABLE_COLUMNS) <= set(frame.columns)
    return frame


def test_score_table_groups_tests_over_metrics_with_average_chance_and_items():
    metrics = metric_rows()
    table = score_table(metrics, ["P", "T", "P+T"], by="test", order=TESTS)
    shown = table.shown
    assert list(shown.columns.get_level_values(0).unique()) == TESTS + ["Avg"]
    assert list(shown.columns[:3]) == [(TESTS[0], "P"), (TESTS[0], "T"), (TESTS[0], "P+T")]
    assert list(shown.index) == ["run a", "run b", "chance", "items"]
    for r in metrics[metrics.by == "test"].itertuples():
        cell = shown.at[r.run, (r.subset, r.metric)]
        star = "*" if r.significant else ""
        assert cell == f"{100 * r.value:.1f}{star} [{100 * r.ci_low:.1f}, {100 * r.ci_high:.1f}]"
        assert shown.at["chance", (r.subset, r.metric)] == f"{100 * r.chance:.1f}"
        assert shown.at["items", (r.subset, r.metric)] == str(r.n)
    assert shown.at["run a", ("Avg", "P+T")].startswith("45.7")
    assert len(table.data) == len(metrics)  # the CSV keeps every row used, as computed


def test_one_metric_heads_its_groups_and_one_group_leaves_metrics_alone():
    metrics = metric_rows()
    single = score_table(metrics, ["P+T"], by="test", order=TESTS).shown
    assert single.columns.get_level_values(0).unique().tolist() == ["P+T"]
    assert single.columns.get_level_values(1).tolist() == TESTS + ["Avg"]
    overall = score_table(metrics.assign(by="all", subset="all").drop_duplicates(["run", "metric"]), ["P", "T"],
                          by="all", average=False).shown
    assert list(overall.columns) == ["P", "T"]


def test_groups_can_be_kept_renamed_and_turned_down():
    metrics = metric_rows()
    kept = score_table(metrics, ["P", "T"], by="test", only=["Change of State"], average=False).shown
    assert kept.columns.get_level_values(0).unique().tolist() == ["Change of State"]
    renamed = score_table(metrics, ["P"], by="test", rename={"Change of State": "CoS"}, average=False).shown
    assert "CoS" in renamed.columns.get_level_values(1)
    down = score_table(metrics, ["P", "T"], by="test", groups_down=True, average=False).shown
    assert list(down.index) == sorted(TESTS, key=list(dict.fromkeys(metrics.subset)).index)
    assert ("run b", "T") in down.columns and ("chance", "P") in down.columns and ("items", "") in down.columns


def test_internal_columns_hide_and_columns_the_metrics_add_show():
    metrics = metric_rows(n_ties=3, significant_holm=False)
    details = metric_details(metrics)
    assert {"n_nan", "test", "by", "benchmark", "missing", "NaN scores"}.isdisjoint(details.columns)
    assert {"n_ties", "significant_holm", "value (%)", "low (%)", "chance (%)"} <= set(details.columns)
    table = score_table(metrics, ["P"], by="test")
    assert not any("*" in c for c in table.shown.iloc[:2].to_numpy().ravel())  # stars follow the corrected column
    assert any("significant_holm" in n for n in table.notes)
    failing = metric_details(metrics.assign(n_nan=2))
    assert "NaN scores" in failing.columns  # a count shows once it counts something
    html = table_html(table, "Title", "Caption")
    assert "n_ties" in html and "significant_holm" in html and "n_nan" not in html


def test_nothing_is_cut_from_a_wide_table():
    tests = [f"test {i}" for i in range(12)]
    metrics = metric_rows(runs=[f"run {i}" for i in range(30)], tests=tests)
    table = score_table(metrics, ["P", "T", "P+T"], by="test")
    html, markdown = table_html(table), table_markdown(table)
    assert table.shown.shape == (32, 12 * 3 + 1)
    for cell in table.shown.to_numpy().ravel():
        assert cell.split(" [")[0] in html and cell in markdown
    assert "..." not in html and "rows ×" not in html


def test_names_are_escaped_and_numbers_align_right():
    metrics = metric_rows(runs=["<b>bold</b>"])
    html = table_html(score_table(metrics, ["P"], by="test"), "A & B")
    assert "<b>bold</b>" not in html and "&lt;b&gt;bold&lt;/b&gt;" in html and "A &amp; B" in html
    assert "<td class='num'>" in html
    plain = table_html(plain_table(pd.DataFrame({"word": ["the"], "n": [3]})))
    assert "<td>the</td>" in plain and "<td class='num'>3</td>" in plain
    assert "<th>0</th>" not in plain  # a numbered index is not shown


def test_our_runs_fill_the_published_cells_with_our_average():
    paper = published("ViLMA", table="Table 2")
    metrics = metric_rows(tests=["Action Counting", "Situation Awareness"])
    table = beside_published(metrics, paper, by=["test"])
    shown = table.shown
    ours = shown.loc["ours"]
    assert list(ours.index) == ["run a", "run b"]
    row = metrics[(metrics.run == "run a") & (metrics.metric == "P") & (metrics.subset == "Situation Awareness")]
    assert ours.at["run a", ("Situation Awareness", "P")] == f"{100 * row.value.iloc[0]:.1f}"
    assert ours.at["run a", ("Avg", "P+T")] == "45.7"
    assert ours.at["run a", ("Spatial Relations", "P")] == ""  # a test the runs do not have stays empty
    models = paper.model.unique()
    assert len(shown) == len(models) + 2
    random = paper[(paper.model == "Random") & (paper.subset == "Avg")].value.iloc[0]
    assert shown.loc[("Random", "Random"), ("Avg", "P+T")] == f"{random:.1f}"


def test_published_names_map_to_ours():
    paper = published("VELOCITI", table="Table 5")
    rows = []
    for subset, by in (("control", "subset"), ("tests except control", "average")):
        for metric in ("MC A", "MC A∧B"):
            rows.append({"run": "mc", "benchmark": "velociti", "metric": metric, "by": by, "subset": subset,
                         "value": 0.5, "ci_low": 0.4, "ci_high": 0.6, "chance": 0.5, "n": 4, "significant": False})
    table = beside_published(pd.DataFrame(rows), paper, metric_names={"MC A^B": "MC A∧B"})
    ours = table.shown.loc[("ours", "mc")]
    assert ours[("Control", "MC A")] == "50.0" and ours[("Avg", "MC A^B")] == "50.0"
    assert ours[("Control", "MC B")] == ""


def _spec(chart) -> dict:
    return json.loads(chart.to_json())


def test_bars_are_in_percent_with_intervals_and_chance():
    metrics = metric_rows()
    spec = json.dumps(_spec(figures.metric_bars(metrics, "P+T", by="test", x_title="Test", title="P+T per test")))
    assert '"domain": [0, 100]' in spec and '"title": "P+T (%)"' in spec and '"title": "Test"' in spec
    assert '"field": "chance"' in spec and '"field": "ci_low"' in spec and "P+T per test" in spec
    signed = json.dumps(_spec(figures.metric_bars(metrics, "P", by="test", signed=True)))
    assert '"domain": [-100, 100]' in signed


def test_jitter_parts_coinciding_points_and_keeps_them_in_range():
    values = pd.Series([100.0] * 5 + [37.0])
    moved = figures.jitter(values, 1.5)
    assert len(set(np.round(moved[:5], 6))) == 5 and moved[5] == 37.0
    assert (moved[:5] <= 100).all() and (moved[:5] >= 98.5).all()
    assert np.array_equal(moved, figures.jitter(values, 1.5))  # the same figure on every build


def test_scatter_draws_every_point_with_quadrant_counts():
    points = pd.DataFrame({"item_id": [f"i{i}" for i in range(6)], "subset": ["a"] * 6, "run": ["r"] * 6,
                           "pos": [0.9, 0.9, 0.9, 0.2, 0.2, 0.7], "neg": [0.1, 0.1, 0.1, 0.8, 0.3, 0.6]})
    spec = _spec(figures.entailment_panels(points))
    datasets = spec["datasets"].values()
    dots = next(d for d in datasets if len(d) == 6 and "item_id" in d[0])
    assert len({(round(d["x"], 6), round(d["y"], 6)) for d in dots}) == 6
    labels = [d["label"] for d in spec["datasets"].values() for d in d if "label" in d]
    assert sorted(labels) == sorted(["3 (50%)", "1 (17%)", "1 (17%)", "1 (17%)"])


@pytest.mark.parametrize("formats", [["gif"], []])
def test_unknown_figure_formats_are_refused(formats):
    from bench.report.outputs import check_formats

    with pytest.raises(ValueError, match="figure formats must be among png, svg"):
        check_formats(formats)


def test_a_run_is_described_from_its_manifest_even_a_sparse_one(tmp_path):
    from bench.report.runs import describe, headline_rows, unique_labels
    from bench.config import Manifest
    from bench.store import Run

    failures = pd.DataFrame({"item_id": ["a", "a", "b"], "stage": ["decode", "model", "decode"]})
    full = Run(tmp_path / "r1", Manifest.from_dict({
        "benchmark": "vilma", "name": "clip", "model": str(tmp_path / "models" / "clip"), "family": "contrastive",
        "protocol": "similarity", "frame_policy": {"name": "uniform", "k": 8}, "prompt": {"name": None}, "n_items": 40,
        "limit": 5, "versions": {"git_commit": "0123456789abcdef"}, "created": "2026-01-02T03:04:05+00:00"}),
        pd.DataFrame(), pd.DataFrame(), failures)
    row = describe(full)
    assert (row["model"], row["frames"], row["items"], row["failures"], row["commit"], row["date"]) == (
        "clip", "uniform k=8", "40 (limit 5)", 2, "0123456789", "2026-01-02 03:04")
    bare = Manifest.from_dict({"benchmark": "vilma", "model": "gpt-4o", "measure": "answer"})
    imported = Run(tmp_path / "r2", bare, pd.DataFrame(), pd.DataFrame(), pd.DataFrame(columns=["item_id"]))
    row = describe(imported)
    assert row["run"] == "r2" and row["model"] == "gpt-4o" and row["frames"] == "" and row["failures"] == 0
    twin = Run(tmp_path / "r3", dataclasses.replace(full.manifest), pd.DataFrame(), pd.DataFrame(), failures)
    unique_labels([full, twin])
    assert full.label == "clip [r1]" and twin.label == "clip [r3]"
    metrics = metric_rows(runs=[full.label])
    rows = headline_rows([full, imported], metrics, [("Avg. P+T", "all")])
    assert rows.loc[0, "metric"] == "Avg. P+T" and rows.loc[0, "failures"] == 2
    assert pd.isna(rows.loc[1, "value"])  # no score: an empty cell, not a guess

"""The explore notebook's comparison of the chosen runs against ``bench.analysis``: the heatmap's kappa and agreement
are the pair table's, clicking a cell lists exactly the items where the two runs disagree (derived here from each
run's own per-item scores), clicking a label bar lists that value's items, and the item list's "runs right" and
"difficulty" columns are the analysis module's per-item table."""

from __future__ import annotations

import itertools
import math

import pandas as pd
import pytest

from bench.analysis.items import item_outcomes, item_table, label_difficulty, pair_table
from bench.metrics.pooled import item_scores
from bench.store import read_run
from fixtures_widgets import BENCHMARK, demo_home
from widgets import ItemBrowser
from widgets.compare import difficulty_chart, heatmap_chart, label_options, linked_comparison
from widgets.runs import find_runs


@pytest.fixture(scope="module")
def runs(sample, tiny, tmp_path_factory):
    home = demo_home(tmp_path_factory.mktemp("home"), sample, tiny)
    return [read_run(r) for r in find_runs(BENCHMARK, under=home / "runs")]


@pytest.fixture()
def browser(runs):
    return ItemBrowser(runs, serve=False)


def _same(x: float, y: float) -> bool:
    return (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y)


def _data(spec: dict) -> pd.DataFrame:
    data = spec.get("data") or spec["layer"][0]["data"]
    return pd.DataFrame(spec["datasets"][data["name"]])


def _outcomes(run) -> dict[str, bool]:
    """Right or wrong per item the run scored, from its own per-item scores."""
    rows = item_scores(run)
    rows = rows[rows["status"] != "missing"]
    return dict(zip(rows["item_id"], rows["value"].astype(float) >= 1.0))


def _click(chart, **fields) -> None:
    chart._vl_selections = {"pick": {"value": {"vlPoint": {"or": [fields]}} if fields else None, "store": []}}


def test_heatmap_holds_the_pair_table(browser):
    long, _ = item_outcomes({r.label: r for r in browser.chosen})
    pairs = pair_table(long)
    assert len(pairs) == math.comb(len(browser.chosen), 2) and pairs["kappa"].notna().any()
    cells = _data(heatmap_chart(pair_table(browser.chosen_long())).to_dict()).set_index(["a", "b"])
    assert len(cells) == 2 * len(pairs)
    for row in pairs.itertuples():
        for a, b in ((row.a, row.b), (row.b, row.a)):
            cell = cells.loc[(a, b)]
            assert _same(cell["kappa"], row.kappa) and _same(cell["agreement"], row.agreement)
            assert cell["n"] == row.n and cell["disagree"] == row.only_a + row.only_b
            assert _same(cell["kappa_low"], row.kappa_ci[0]) and _same(cell["mcnemar_p"], row.mcnemar_p)
    box = linked_comparison(browser)
    shown = _data(box.children[0].chart.to_dict())
    assert shown[["a", "b", "n", "agreement"]].equals(cells.reset_index()[["a", "b", "n", "agreement"]])


def test_clicking_a_cell_lists_exactly_the_items_where_the_two_runs_disagree(browser):
    heatmap = linked_comparison(browser).children[0]
    outcomes = {r.label: _outcomes(r) for r in browser.chosen}
    some = False
    for a, b in itertools.combinations(outcomes, 2):
        expected = {i for i in outcomes[a].keys() & outcomes[b].keys() if outcomes[a][i] != outcomes[b][i]}
        some |= bool(expected)
        _click(heatmap, a=a, b=b)
        assert set(browser.ids()) == expected and len(browser.ids()) == len(expected)
        _click(heatmap, a=b, b=a)
        assert set(browser.ids()) == expected
    assert some  # the fixture's runs disagree somewhere
    _click(heatmap)
    assert len(browser.ids()) == len(browser.table)


def test_difficulty_bars_are_the_analysis_and_list_their_items(browser):
    box = linked_comparison(browser)
    label, bars = box.children[1], box.children[2]
    items = item_table(item_outcomes({r.label: r for r in browser.chosen})[0])
    assert label.options == tuple(label_options(items)) and label.value in label.options
    expected = label_difficulty(items, label.value)
    data = _data(bars.chart.to_dict())
    assert data["value"].tolist() == expected[label.value].tolist()
    assert data["percent"].tolist() == pytest.approx((100 * expected["difficulty"]).tolist())
    value = expected[label.value].iloc[0]
    _click(bars, value=value)
    assert set(browser.ids()) == set(items.loc[items[label.value].astype(str) == value, "item_id"])
    label.value = "subset"
    subset = box.children[2]
    assert _data(subset.chart.to_dict())["value"].tolist() == label_difficulty(items, "subset")["subset"].tolist()
    assert difficulty_chart(label_difficulty(items, "subset"), "subset").to_dict()["title"]["text"] == \
        "Difficulty by subset"


def test_item_list_columns_are_the_analysis_item_table(browser):
    def check() -> None:
        items = item_table(item_outcomes({r.label: r for r in browser.chosen})[0]).set_index("item_id")
        table = browser.table.set_index("item_id")
        assert set(items.index) <= set(table.index)
        assert table.loc[items.index, "runs_right"].tolist() == items["runs_right"].tolist()
        assert table.loc[items.index, "difficulty"].tolist() == pytest.approx(items["difficulty"].tolist())
        keys = [c["key"] for c in browser.list.columns]
        titles = {c["key"]: c["title"] for c in browser.list.columns}
        assert titles["runs_right"] == "runs right" and titles["difficulty"] == "difficulty"
        for row in browser.list.rows:
            if row["id"] in items.index:
                right = items.loc[row["id"]]
                assert row["cells"][keys.index("runs_right")] == f"{right['runs_right']}/{right['runs_scored']}"
                assert float(row["cells"][keys.index("difficulty")]) == pytest.approx(right["difficulty"], abs=1e-4)

    check()
    browser.picker.value = tuple(r.label for r in browser.chosen[:2])
    check()
    browser.list.sort = ["difficulty", False]
    shown = browser.table.set_index("item_id").loc[browser.ids(), "difficulty"]
    assert shown.dropna().is_monotonic_increasing

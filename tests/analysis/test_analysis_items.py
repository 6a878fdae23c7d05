"""Runs compared item by item: per-item counts and difficulty, pairs on the items both scored, Holm across label
values; every expectation is counted from the runs' own tables."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from bench.analysis.items import (agreement_matrix, compare_runs, disagreements, item_outcomes, item_table,
                                  label_difficulty, pair_table)
from bench.config import Manifest
from bench.items import Clip, Item
from bench.metrics.intervals import clopper_pearson, holm, mcnemar_test
from bench.store.run import Run
from bench.store.schema import choice_frame, failure_frame, pair_frame

KINDS = ("order", "action", "count")


def _items(n: int = 24, benchmark: str = "vitatecs") -> list[Item]:
    return [Item(benchmark, f"i{k:02d}", "Direction", (Clip(f"v{k}.mp4"),), (f"caption {k}", f"foil {k}"), ((0,),),
                 {"foil_type": KINDS[k % len(KINDS)]}) for k in range(n)]


def _run(name: str, right: dict[str, bool], items: list[Item], benchmark: str = "vitatecs") -> Run:
    rows = [{"item_id": item_id, "clip": 0, "text": t, "score": (0.9 if (t == 0) == ok else 0.1)}
            for item_id, ok in right.items() for t in (0, 1)]
    manifest = Manifest.from_dict({"benchmark": benchmark, "measure": "similarity", "name": name})
    run = Run(Path(name), manifest, pair_frame(rows), choice_frame([]), failure_frame([]))
    run._items = items
    return run


@pytest.fixture()
def three():
    items = _items()
    ids = [it.item_id for it in items]
    a = {i: k % 2 == 0 for k, i in enumerate(ids)}
    b = {i: k % 3 != 0 for k, i in enumerate(ids)}
    c = {i: k % 4 == 0 for k, i in enumerate(ids[:20])}  # scored only the first 20 items
    return {"a": _run("a", a, items), "b": _run("b", b, items), "c": _run("c", c, items)}, (a, b, c)


def test_pairs_are_tested_on_the_items_both_scored(three):
    runs, (a, b, c) = three
    long, _ = item_outcomes(runs)
    pairs = pair_table(long)
    row = pairs[(pairs["a"] == "a") & (pairs["b"] == "c")].iloc[0]
    shared = list(c)
    assert row["n"] == len(shared)
    assert row["mcnemar_p"] == pytest.approx(mcnemar_test([a[i] for i in shared], [c[i] for i in shared]))
    assert row["agreement"] == pytest.approx(sum(a[i] == c[i] for i in shared) / len(shared))
    assert row["label"] is None and row["p_holm"] == row["mcnemar_p"]
    assert len(pairs) == 3


def test_by_label_corrects_across_the_values_of_each_pair(three):
    runs, (a, b, _) = three
    long, items = item_outcomes(runs)
    pairs = pair_table(long, by="foil_type")
    mine = pairs[(pairs["a"] == "a") & (pairs["b"] == "b") & (pairs["label"] == "foil_type")].set_index("value")
    kinds = {it.item_id: it.labels["foil_type"] for it in items.values()}
    raw = {k: mcnemar_test([a[i] for i in a if kinds[i] == k], [b[i] for i in a if kinds[i] == k])
           for k in sorted(set(kinds.values()))}
    assert mine["mcnemar_p"].to_dict() == pytest.approx(raw)
    assert mine["p_holm"].tolist() == pytest.approx(holm(list(raw.values())).tolist())
    assert mine["n"].sum() == len(a)


def test_item_table_counts_runs_right_and_difficulty(three):
    runs, (a, b, c) = three
    long, items = item_outcomes(runs)
    table = item_table(long, items).set_index("item_id")
    for item_id in a:
        scored = [r for r in (a, b, c) if item_id in r]
        right = sum(r[item_id] for r in scored)
        row = table.loc[item_id]
        assert (row["runs_scored"], row["runs_right"]) == (len(scored), right)
        assert row["difficulty"] == pytest.approx(right / len(scored))
        assert (row["difficulty_low"], row["difficulty_high"]) == pytest.approx(clopper_pearson(right, len(scored)))
        assert row["all_fail"] == (right == 0) and row["disagree"] == (0 < right < len(scored))
        assert (row["only_run"] != "") == (right == 1)
        assert "(true)" in row["text"] and row["margin: a"] == pytest.approx(0.8 if a[item_id] else -0.8)
    assert list(table["difficulty"]) == sorted(table["difficulty"])  # hardest first
    by_kind = label_difficulty(table.reset_index(), "foil_type").set_index("foil_type")
    assert by_kind["items"].sum() == len(a)


def test_agreement_matrix_is_symmetric_with_ones_on_the_diagonal(three):
    pairs, _ = compare_runs(three[0])
    matrix = agreement_matrix(pairs)
    assert (matrix.to_numpy() == matrix.to_numpy().T).all()
    assert list(pd.Series(matrix.to_numpy().diagonal())) == [1.0, 1.0, 1.0]


def test_runs_of_different_benchmarks_are_refused():
    items = _items(4)
    other = _items(4, "velociti")
    runs = {"x": _run("x", {it.item_id: True for it in items}, items),
            "y": _run("y", {it.item_id: True for it in other}, other, "velociti")}
    with pytest.raises(ValueError, match="different benchmarks.*x is vitatecs, y is velociti"):
        compare_runs(runs)


def test_runs_without_a_shared_item_are_refused():
    items = _items(6)
    runs = {"x": _run("x", {it.item_id: True for it in items[:3]}, items),
            "y": _run("y", {it.item_id: False for it in items[3:]}, items)}
    with pytest.raises(ValueError, match="share no scored item"):
        compare_runs(runs)


def test_an_unknown_label_is_one_line(three):
    with pytest.raises(ValueError, match="no item carries the label 'colour'"):
        compare_runs(three[0], by="colour")


def test_disagreements_are_the_discordant_items_both_scored(three):
    runs, (a, b, c) = three
    long, _ = item_outcomes(runs)
    pairs = pair_table(long).set_index(["a", "b"])
    for (x, y), (first, second) in {("a", "c"): (a, c), ("b", "c"): (b, c), ("a", "b"): (a, b)}.items():
        found = disagreements(long, x, y)
        assert found == [i for i in first if i in second and first[i] != second[i]]
        assert len(found) == pairs.loc[(x, y), "only_a"] + pairs.loc[(x, y), "only_b"]

"""The statistics of metric tables: every star agrees with its interval, small samples keep honest intervals,
100% chance is flagged, many subsets get Holm's correction, and every command shows the same numbers."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from bench.items import Clip, Item
from bench.metrics import Settings, metric_table
from bench.metrics.aggregate import BINOMIAL, BOOTSTRAP, BOUNDED, MOVER, UNINFORMATIVE
from bench.store.schema import pair_frame


def _vilma(n_per_subset: int, right: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    items, rows = [], []
    for subset in ("relations", "counting-easy-spelled-pts", "change-state-action", "rare-actions-verb-foils",
                   "SRL_Actor_Swapping"):
        for k in range(n_per_subset):
            main_id = f"{subset}/{k}"
            items += [Item("vilma", main_id, subset, (Clip("v.mp4"),), ("c", "f"), ((0,),),
                           twin_id=f"{main_id}/proficiency"),
                      Item("vilma", f"{main_id}/proficiency", subset, (Clip("v.mp4"),), ("c", "f"), ((0,),),
                           role="proficiency", twin_id=main_id)]
            for item_id in (main_id, f"{main_id}/proficiency"):
                good = rng.random() < right
                rows += [{"item_id": item_id, "clip": 0, "text": 0, "score": 0.9 if good else 0.1},
                         {"item_id": item_id, "clip": 0, "text": 1, "score": 0.5}]
    return items, pair_frame(rows)


@pytest.mark.parametrize("n, right", [(4, 0.5), (9, 0.75), (30, 0.7), (30, 0.55)])
def test_a_star_means_chance_lies_below_the_interval(n, right):
    items, pair = _vilma(n, right)
    table = metric_table(items, pair, settings=Settings(n_boot=200))
    one_sided = table[table["test"].isin([BINOMIAL, MOVER, BOOTSTRAP, BOUNDED]) & table["chance"].notna()]
    assert len(one_sided) and set(one_sided["test"]) >= {BINOMIAL, MOVER}
    assert (one_sided["significant"] == (one_sided["chance"] < one_sided["ci_low"])).all()
    assert (one_sided["ci_low"] <= one_sided["value"]).all() and (one_sided["value"] <= one_sided["ci_high"]).all()


def test_nothing_collapses_at_four_items():
    items, pair = _vilma(4, 0.0)
    table = metric_table(items, pair, settings=Settings(n_boot=200))
    assert (table["ci_high"] > table["ci_low"]).all()
    avg = table[table["metric"] == "Avg. P+T"].iloc[0]
    assert avg["value"] == 0.0 and avg["ci_high"] > 0.0
    # four retrieval queries all ranking their true video last: no bootstrap spread, still no [0, 0]
    item = Item("videocon", "ssv2", "ssv2_temporal", tuple(Clip(f"{i}.avi") for i in range(4)),
                tuple("abcd"), ((0,), (1,), (2,), (3,)))
    pair = pair_frame([{"item_id": "ssv2", "clip": c, "text": t, "score": float(c != t)}
                       for c in range(4) for t in range(4)])
    ap = metric_table([item], pair).set_index(["metric", "by"]).loc[("mAP", "all")]
    assert ap["value"] == 0.25 and ap["test"] == BOUNDED and ap["ci_low"] < 0.25 < ap["ci_high"]


def test_holm_corrects_many_subsets_at_once():
    # 40 subsets of 12 items each, 9 of 12 right at chance 1/2: each alone is borderline, not all 40 together
    items, rows = [], []
    for s in range(40):
        for k in range(12):
            item_id = f"s{s}/{k}"
            items.append(Item("vitatecs", item_id, f"s{s}", (Clip("v.mp4"),), ("c", "f"), ((0,),)))
            good = k < 10
            rows += [{"item_id": item_id, "clip": 0, "text": 0, "score": 0.9 if good else 0.1},
                     {"item_id": item_id, "clip": 0, "text": 1, "score": 0.5}]
    table = metric_table(items, pair_frame(rows))
    subsets = table[table["by"] == "subset"]
    assert subsets["significant"].all() and not subsets["significant_holm"].any()
    assert (subsets["p_holm"] >= subsets["p_value"]).all()
    overall = table[table["by"] == "all"].iloc[0]
    assert overall["significant"] and overall["significant_holm"] and overall["p_holm"] == overall["p_value"]


def test_chance_of_one_hundred_percent_is_flagged_not_tested():
    # 4 videos per caption: R@5 and R@10 always hit
    item = Item("videocon", "ssv2", "ssv2_temporal", tuple(Clip(f"{i}.avi") for i in range(4)), ("a", "b"),
                ((0,), (1,), (0,), (1,)))
    pair = pair_frame([{"item_id": "ssv2", "clip": c, "text": t, "score": float(c == t)}
                       for c in range(4) for t in range(2)])
    table = metric_table([item], pair).set_index(["metric", "by"])
    for metric in ("R@5", "R@10"):
        row = table.loc[(metric, "all")]
        assert row["chance"] == 1.0 and row["test"] == UNINFORMATIVE and not row["significant"]
        assert np.isnan(row["p_value"]) and "uninformative" in row["note"]
    assert table.loc[("R@1", "all"), "test"] == BINOMIAL


def test_every_command_prints_the_same_table_for_a_run(sample, tmp_path):
    from bench.commands.metrics import compute
    from bench.config import DataSource
    from bench.importers.common import import_run
    from bench.loaders import load
    from bench.metrics import run_table
    from bench.store import read_run

    s = sample["videocon"]
    items = [it for it in load("videocon", s.data_path).items if len(it.clips) == 1 and len(it.texts) == 2]
    rng = np.random.default_rng(3)
    scores = tmp_path / "scores.csv"
    with scores.open("w", newline="") as fh:
        writer = csv.writer(fh)
        for it in items:
            for t, text in enumerate(it.texts):
                writer.writerow([it.clips[0].path, text, rng.random() + 0.3 * (t == it.truth[0][0])])
    run = import_run("videocon", [scores], DataSource.of("videocon", s.data_path), tmp_path / "run", "toy")
    table = run_table(read_run(run))
    assert BOOTSTRAP in set(table["test"])  # AUROC: the rows whose interval depends on the resamples
    assert not table.equals(run_table(read_run(run), Settings(n_boot=200)))
    from_command = compute([str(run)], Settings(), None)[0]["table"]
    assert table[["value", "ci_low", "ci_high"]].equals(from_command[["value", "ci_low", "ci_high"]])

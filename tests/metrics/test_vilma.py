"""ViLMA metrics: acc_r with several foils, P / T / P+T, Avg., probability metrics, and the paper's Random rows."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score

from bench.items import Clip, Item
from bench.metrics import vilma
from bench.metrics.dispatch import item_correct
from bench.metrics import Settings, metric_table
from bench.store.schema import pair_frame

FAST = Settings(n_boot=200)


def _pair(subset, key, n_foils=1, with_twin=True):
    main_id = f"{subset}/{key}"
    texts = ("the caption",) + tuple(f"foil {i}" for i in range(n_foils))
    main = Item("vilma", main_id, subset, (Clip("v.mp4"),), texts, ((0,),),
                twin_id=f"{main_id}/proficiency" if with_twin else None)
    prof = Item("vilma", f"{main_id}/proficiency", subset, (Clip("v.mp4"),), ("p caption", "p foil"), ((0,),),
                role="proficiency", twin_id=main_id)
    return [main, prof]


def _rows(item_id, scores, clip=0):
    return [{"item_id": item_id, "clip": clip, "text": t, "score": s} for t, s in enumerate(scores)]


@pytest.fixture()
def hand_case():
    items = (_pair("SRL_Action_Replacement_Top_1000", "a")
             + _pair("SRL_Action_Replacement_Top_1000", "b", n_foils=2)
             + _pair("SRL_Action_Replacement_Top_1000", "c", n_foils=2)
             + _pair("relations", "d") + _pair("relations", "e") + _pair("relations", "f")[:1])
    rows = (_rows("SRL_Action_Replacement_Top_1000/a", [0.9, 0.1])
            + _rows("SRL_Action_Replacement_Top_1000/a/proficiency", [0.8, 0.2])
            + _rows("SRL_Action_Replacement_Top_1000/b", [0.5, 0.4, 0.6])       # one foil above: wrong
            + _rows("SRL_Action_Replacement_Top_1000/b/proficiency", [0.8, 0.2])
            + _rows("SRL_Action_Replacement_Top_1000/c", [0.7, 0.7, 0.1])       # tie with a foil: wrong
            + _rows("SRL_Action_Replacement_Top_1000/c/proficiency", [0.3, 0.2])
            + _rows("relations/d", [math.nan, 0.2])                             # NaN caption: failure
            + _rows("relations/d/proficiency", [0.6, 0.1])
            + _rows("relations/f", [0.6, 0.1], clip=-1))                        # text-only scorer; twin absent
    return items, pair_frame(rows)                                              # relations/e: not scored at all


def test_per_item_outcomes_by_hand(hand_case):
    items, pair = hand_case
    wide = item_correct(items, pair, ties="strict")
    assert wide.loc["SRL_Action_Replacement_Top_1000/a"].tolist() == [1.0, 1.0, 1.0]
    assert wide.loc["SRL_Action_Replacement_Top_1000/b"].tolist() == [1.0, 0.0, 0.0]
    assert wide.loc["SRL_Action_Replacement_Top_1000/c"].tolist() == [1.0, 0.0, 0.0]
    # c's caption ties its first foil: bin/eval.py's argmax lets the caption win; at random it wins half the time
    assert item_correct(items, pair).loc["SRL_Action_Replacement_Top_1000/c"].tolist() == [1.0, 1.0, 1.0]
    assert item_correct(items, pair, ties="expected").loc["SRL_Action_Replacement_Top_1000/c"].tolist() == [
        1.0, 0.5, 0.5]
    assert wide.loc["relations/d"].tolist() == [1.0, 0.0, 0.0]
    assert wide.loc["relations/e"].tolist() == [0.0, 0.0, 0.0]
    assert wide.loc["relations/f"].tolist() == [0.0, 1.0, 0.0]
    assert "SRL_Action_Replacement_Top_1000/a/proficiency" not in wide.index


def test_statuses_and_chances(hand_case):
    items, pair = hand_case
    out = vilma.outcomes(items, pair).set_index(["item_id", "metric"])
    assert out.loc[("relations/d", "T"), "status"] == "nan"
    assert out.loc[("relations/d", "P+T"), "status"] == "nan"
    assert out.loc[("relations/e", "P"), "status"] == "missing"
    assert out.loc[("relations/f", "P"), "status"] == "missing"
    assert out.loc[("relations/f", "T"), "status"] == "ok"
    assert out.loc[("SRL_Action_Replacement_Top_1000/b", "T"), "chance"] == pytest.approx(1 / 3)
    assert out.loc[("SRL_Action_Replacement_Top_1000/b", "P+T"), "chance"] == pytest.approx(1 / 6)
    assert out.loc[("relations/f", "P+T"), "chance"] == pytest.approx(1 / 4)


def test_table_counts_failures_and_averages_tests(hand_case):
    items, pair = hand_case
    table = metric_table(items, pair, settings=FAST, ties="strict").set_index(["metric", "by", "subset"])
    official = metric_table(items, pair, settings=FAST).set_index(["metric", "by", "subset"])
    assert official.loc[("T", "all", "all"), "value"] == pytest.approx(3 / 6)
    assert official.loc[("T", "all", "all"), "strict"] == pytest.approx(2 / 6)
    assert official.loc[("T", "all", "all"), "n_tie"] == 1 and table.loc[("T", "all", "all"), "n_tie"] == 1
    t_all = table.loc[("T", "all", "all")]
    assert t_all["value"] == pytest.approx(2 / 6)
    assert (t_all["n"], t_all["n_missing"], t_all["n_nan"]) == (6, 1, 1)
    assert t_all["chance"] == pytest.approx((1 / 2 + 1 / 3 + 1 / 3 + 1 / 2 + 1 / 2 + 1 / 2) / 6)
    assert table.loc[("P", "all", "all"), "n_missing"] == 2
    srl = table.loc[("P+T", "test", "Situation Awareness")]
    rel = table.loc[("P+T", "test", "Spatial Relations")]
    assert srl["value"] == pytest.approx(1 / 3) and rel["value"] == 0.0
    avg = table.loc[("Avg. P+T", "all", "all")]
    assert avg["value"] == pytest.approx((1 / 3 + 0) / 2)
    assert avg["chance"] == pytest.approx((srl["chance"] + rel["chance"]) / 2)
    assert avg["ci_low"] <= avg["value"] <= avg["ci_high"]


def test_bad_pair_tables_are_rejected(hand_case):
    items, _ = hand_case
    dup = pair_frame(_rows("relations/d", [0.1, 0.2]) * 2)
    with pytest.raises(ValueError, match="repeated"):
        vilma.outcomes(items, dup)
    outside = pair_frame(_rows("relations/d", [0.1, 0.2, 0.3]))
    with pytest.raises(ValueError, match="outside its 1 clip"):
        vilma.outcomes(items, outside)


def test_probability_metrics_by_hand():
    scores = [0.9, 0.6, 0.5, 0.3, 0.7, 0.2]
    labels = [1, 0, 0, 1, 1, 0]
    m = vilma.probability_metrics(scores, labels)
    # predicted caption (p > 0.5): 0.9 (1), 0.6 (0), 0.7 (1) -> 2/3; predicted foil (p < 0.5): 0.3 (1), 0.2 (0) -> 1/2
    assert m["p_c"] == pytest.approx(2 / 3)
    assert m["p_f"] == pytest.approx(1 / 2)
    assert m["min(p_c, p_f)"] == pytest.approx(1 / 2)
    assert m["acc"] == pytest.approx(4 / 6)  # 0.5 counts as "foil" for accuracy, as torchmetrics thresholds p > 0.5
    assert m["AUROC"] == pytest.approx(roc_auc_score(labels, scores))
    assert vilma.probability_metrics([0.9, 0.8], [1, 0])["p_f"] == 0.0  # no foil predictions: 0 (zero_division)
    assert vilma.probability_metrics([math.nan, 0.8], [1, 0])["acc"] == 0.0


def test_probability_rows_and_combined_override():
    items = _pair("relations", "a") + _pair("relations", "b")
    pair = pair_frame(_rows("relations/a", [0.9, 0.2]) + _rows("relations/a/proficiency", [0.9, 0.1])
                      + _rows("relations/b", [0.8, 0.3]) + _rows("relations/b/proficiency", [0.1, 0.9]))
    flat = vilma.caption_foil_scores(items, pair, combined=True)
    assert flat.set_index(["item_id", "label"]).loc[("relations/b", 1), "score"] == 0.001
    table = metric_table(items, pair, measure="p_yes", settings=FAST).set_index(["metric", "by", "subset"])
    assert table.loc[("AUROC", "all", "all"), "value"] == 1.0
    assert table.loc[("P+T AUROC", "all", "all"), "value"] == pytest.approx(1 / 4)  # 0.9 > 0.2 only
    assert table.loc[("p_c", "all", "all"), "chance"] == pytest.approx(0.5)
    assert math.isnan(table.loc[("P+T acc", "all", "all"), "chance"])
    assert "AUROC" not in metric_table(items, pair, measure="similarity", settings=FAST)["metric"].tolist()


def test_test_names():
    assert vilma.test_of("counting-hard-spelled-sec") == "Action Counting"
    assert vilma.test_of("SRL_Actor_Swapping") == "Situation Awareness"
    assert vilma.test_of("change-state-inverse") == "Change of State"
    assert vilma.test_of("something-new") == "something-new"


def test_seeded_random_scorer_on_mixed_foil_counts():
    items = [it for i in range(1500) for it in _pair(["SRL_Action_Replacement_Top_1000", "relations"][i % 2],
                                                     str(i), n_foils=1 + (i % 4 == 0))]
    rng = np.random.default_rng(5)
    pair = pair_frame([r for it in items for r in _rows(it.item_id, rng.random(len(it.texts)))])
    table = metric_table(items, pair, settings=Settings(n_boot=500)).set_index(["metric", "by", "subset"])
    t = table.loc[("T", "subset", "SRL_Action_Replacement_Top_1000")]
    assert t["chance"] == pytest.approx((1 / 2 + 1 / 3) / 2)  # every other SRL item has two foils
    for key in [("P", "all", "all"), ("T", "all", "all"), ("P+T", "all", "all"), ("Avg. P+T", "all", "all")]:
        r = table.loc[key]
        assert r["ci_low"] <= r["chance"] <= r["ci_high"] and not r["significant"], key


# The "Random" rows of the ViLMA paper: Table 2 (tests, Avg.), Tables 7-11 (subtests), as P / T / P+T in percent.
RANDOM_SUBTESTS = {
    "counting-easy-spelled-pts": (50.0, 50.0, 25.0),
    "counting-hard-spelled-pts": (50.0, 50.0, 25.0),
    "SRL_Action_Replacement_Top_1000": (50.0, 34.42, 17.21),
    "SRL_Actor_Swapping": (50.0, 50.0, 25.0),
    "change-state-action": (50.0, 50.0, 25.0),
    "change-state-prestate": (50.0, 50.0, 25.0),
    "change-state-poststate": (50.0, 50.0, 25.0),
    "change-state-inverse": (50.0, 50.0, 25.0),
    "rare-actions-verb-foils": (50.0, 50.0, 25.0),
    "rare-actions-noun-foils": (50.0, 50.0, 25.0),
    "relations": (50.0, 50.0, 25.0),
}
RANDOM_TESTS = {
    "Action Counting": (50.0, 50.0, 25.0),
    "Situation Awareness": (50.0, 37.96, 18.98),
    "Change of State": (50.0, 50.0, 25.0),
    "Rare Actions": (50.0, 50.0, 25.0),
    "Spatial Relations": (50.0, 50.0, 25.0),
}
RANDOM_AVG = 23.8


@pytest.fixture(scope="module")
def real_items(realdata):
    loaders = pytest.importorskip("bench.loaders", reason="the ViLMA loader is not in the tree yet",
                                  exc_type=ImportError)
    items = loaders.load("vilma", realdata / "vilma")
    return [it for it in items if not it.subset.endswith("-sec")]  # the -sec files repeat the -pts items


@pytest.mark.realdata
def test_chance_reproduces_the_papers_random_rows(real_items):
    table = metric_table(real_items, None, settings=Settings(n_boot=10)).set_index(["metric", "by", "subset"])
    for by, expected in (("subset", RANDOM_SUBTESTS), ("test", RANDOM_TESTS)):
        for name, (p, t, pt) in expected.items():
            got = [100 * table.loc[(m, by, name), "chance"] for m in ("P", "T", "P+T")]
            assert got == pytest.approx([p, t, pt], abs=0.005), name
    assert 100 * table.loc[("Avg. P+T", "all", "all"), "chance"] == pytest.approx(RANDOM_AVG, abs=0.05)
    assert table.loc[("T", "all", "all"), "n"] == 5177


@pytest.mark.realdata
def test_a_seeded_random_scorer_lands_within_its_interval(real_items):
    rng = np.random.default_rng(1234)
    rows = [{"item_id": it.item_id, "clip": 0, "text": t, "score": float(rng.random())}
            for it in real_items for t in range(len(it.texts))]
    table = metric_table(real_items, pair_frame(rows), settings=Settings(n_boot=500))
    overall = table[table["by"] == "all"]
    assert len(overall) == 4
    assert ((overall["ci_low"] <= overall["chance"]) & (overall["chance"] <= overall["ci_high"])).all()
    assert not overall["significant"].any()
    inside = (table["ci_low"] <= table["chance"]) & (table["chance"] <= table["ci_high"])
    assert inside.mean() >= 0.9

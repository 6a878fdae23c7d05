"""VELOCITI metrics: ClassicVLE, StrictVLE and its analysis, multiple choice A / B / bias / A∧B."""

from __future__ import annotations

import math

import pytest

from bench.items import Clip, Item
from bench.metrics.dispatch import item_correct
from bench.metrics import Settings, metric_table
from bench.store.schema import choice_frame, pair_frame

FAST = Settings(n_boot=200)


def _item(key, test="agent_bind", pos=0):
    texts = ("the positive", "the negative") if pos == 0 else ("the negative", "the positive")
    return Item("velociti", key, test, (Clip(f"{key}.mp4"),), texts, ((pos,),))


def _scores(key, pos_score, neg_score, pos=0):
    s = [pos_score, neg_score] if pos == 0 else [neg_score, pos_score]
    return [{"item_id": key, "clip": 0, "text": t, "score": v} for t, v in enumerate(s)]


@pytest.fixture()
def entailment():
    items = [_item("a"), _item("b"), _item("c", pos=1), _item("d"), _item("e"), _item("f", test="control")]
    rows = (_scores("a", 0.8, 0.3)            # classic + strict
            + _scores("b", 0.9, 0.7)          # classic only: says Yes to both
            + _scores("c", 0.4, 0.2, pos=1)   # classic only: says No to both
            + _scores("d", 0.6, 0.6)          # tie: classic fails; strict fails (neg not < 0.5)
            + _scores("e", math.nan, 0.1)     # NaN positive
            + _scores("f", 0.7, 0.2))         # control test
    return items, pair_frame(rows)


def test_entailment_outcomes_by_hand(entailment):
    items, pair = entailment
    wide = item_correct(items, pair)
    assert wide["ClassicVLE"].tolist() == [1, 1, 1, 0, 0, 1]
    assert wide["StrictVLE"].tolist() == [1, 0, 0, 0, 0, 1]
    assert wide["pos acc"].tolist() == [1, 1, 0, 1, 0, 1]
    # "neg acc | pos" exists only where the positive is right
    assert wide["neg acc | pos"].dropna().to_dict() == {"a": 1.0, "b": 0.0, "d": 0.0, "f": 1.0}


def test_entailment_table(entailment):
    items, pair = entailment
    table = metric_table(items, pair, settings=FAST).set_index(["metric", "by", "subset"])
    strict = table.loc[("StrictVLE", "all", "all")]
    assert strict["value"] == pytest.approx(2 / 6) and strict["chance"] == 0.25 and strict["n_nan"] == 1
    assert "VELOCITI" in strict["note"]
    neg = table.loc[("neg acc | pos", "all", "all")]
    assert (neg["n"], neg["value"]) == (4, pytest.approx(0.5))
    assert table.loc[("ClassicVLE", "subset", "agent_bind"), "value"] == pytest.approx(3 / 5)
    # the average over tests leaves the control test out; here it is one test, so no average row
    assert ("ClassicVLE", "average", "tests except control") not in table.index
    assert not any(m.startswith("MC") for m, _, _ in table.index)


def test_average_over_tests_excludes_control():
    items = [_item("a", "agent_bind"), _item("b", "chrono"), _item("c", "chrono"), _item("d", "control")]
    pair = pair_frame(_scores("a", 0.9, 0.1) + _scores("b", 0.9, 0.1) + _scores("c", 0.1, 0.9)
                      + _scores("d", 0.1, 0.9))
    table = metric_table(items, pair, settings=FAST).set_index(["metric", "by", "subset"])
    avg = table.loc[("ClassicVLE", "average", "tests except control")]
    assert avg["value"] == pytest.approx((1.0 + 0.5) / 2)
    assert avg["chance"] == pytest.approx(0.5)


def _ask(key, options, chosen):
    return {"item_id": key, "axis": "text", "query": 0, "options": options,
            "logits": [float(o == chosen) for o in options], "choice": chosen}


def test_multiple_choice_orders_bias_and_both():
    items = [_item(k) for k in "abcd"]
    rows = [
        _ask("a", [0, 1], 0), _ask("a", [1, 0], 0),     # right in both orders
        _ask("b", [0, 1], 1), _ask("b", [1, 0], 0),     # always picks B: wrong as A, right as B
        _ask("c", [0, 1], 1), _ask("c", [1, 0], 0),     # the same
        _ask("d", [0, 1], -1),                          # unparsed answer; B order never asked
    ]
    wide = item_correct(items, None, choice_frame(rows))
    assert wide["MC A"].tolist() == [1, 0, 0, 0]
    assert wide["MC B"].tolist() == [1, 1, 1, 0]
    assert wide["MC A∧B"].tolist() == [1, 0, 0, 0]
    assert "StrictVLE" not in wide.columns  # a choice-only run has no entailment metrics
    table = metric_table(items, None, choice_frame(rows), settings=FAST, ties="strict").set_index(
        ["metric", "by", "subset"])
    bias = table.loc[("MC bias (B-A)", "all", "all")]
    assert bias["value"] == pytest.approx(3 / 4 - 1 / 4)
    assert bias["chance"] == 0.0 and bias["p_value"] == pytest.approx(0.5)  # 2 discordant pairs, both one way
    # metrics.py::mcq counts only items whose answers both parse: under official d leaves the denominator
    official = metric_table(items, None, choice_frame(rows), settings=FAST).set_index(["metric", "by", "subset"])
    assert official.loc[("MC bias (B-A)", "all", "all"), "value"] == pytest.approx(3 / 3 - 1 / 3)
    assert official.loc[("MC A", "all", "all"), ["value", "n", "n_dropped", "strict"]].tolist() == pytest.approx(
        [1 / 3, 3, 1, 1 / 3])  # every column over the same 3 counted items (no tie: strict = value)
    both = table.loc[("MC A∧B", "all", "all")]
    assert both["chance"] == pytest.approx(0.25)
    assert (both["n_unparsed"], both["n_missing"]) == (0, 1)  # "missing" (B never asked) outranks "unparsed"
    assert table.loc[("MC A", "all", "all"), "n_unparsed"] == 1


def test_threshold_metrics_need_probabilities():
    items = [Item("velociti", f"t/{i}", "agent_bind", (Clip("v.mp4"),), ("pos", "neg"), ((0,),)) for i in range(3)]
    pair = pair_frame([{"item_id": f"t/{i}", "clip": 0, "text": t, "score": s}
                       for i in range(3) for t, s in ((0, 0.9), (1, 0.2))])
    similarity = metric_table(items, pair, measure="similarity", settings=FAST)
    assert set(similarity["metric"]) == {"ClassicVLE"}
    probability = metric_table(items, pair, measure="p_yes", settings=FAST)
    assert {"StrictVLE", "pos acc", "neg acc | pos"} <= set(probability["metric"])
